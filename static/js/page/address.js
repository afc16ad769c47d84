// One reading of the address for every view of one state: the article (page.js), presenter mode
// (present.js) and the embed view (embed.js). The query keeps input=, ablate=, compare=, cell=id:row:col,
// checkpoint=N, worked=head:row (both from 0) and model= (state.js writes them); the step is #step-N on the
// article, step=N in an embed's address (a slide or a course page may keep the fragment for itself); present=1
// opens presenter mode, present=lecture presenter mode on the lecture path.
import { parseAblation } from "../ablation.js";
import { parseCell } from "./compare.js";
import { siteUrl } from "../site.js";

// what an embed keeps of the article's query: the state, not the mode
const STATE_KEYS = ["input", "ablate", "compare", "cell", "checkpoint", "worked", "model"];

/** A worked=head:row value (both counted from 0) as {head, row}; null for anything else. */
export function parseWorked(text) {
  const m = /^(\d{1,3}):(\d{1,3})$/.exec(String(text || "").trim());
  return m ? { head: Number(m[1]), row: Number(m[2]) } : null;
}

/** The state an address names: {input, ablation, compare, cell, checkpoint, worked, model, step, present, lecture};
 *  null (or []) for what it leaves out. The server checks the values; nothing is checked here. */
export function readAddress(url) {
  const p = url.searchParams,
    get = (k) => (p.get(k) || "").trim() || null;
  const hash = /^#step-(\d+)$/.exec(url.hash),
    step = /^\d+$/.test(get("step") || "") ? get("step") : hash?.[1];
  return {
    input: get("input"),
    ablation: parseAblation(p.get("ablate")),
    compare: get("compare"),
    cell: get("cell") ? parseCell(get("cell")) : null,
    checkpoint: get("checkpoint"),
    worked: parseWorked(get("worked")),
    model: get("model"),
    step: step ? Number(step) : null,
    present: p.get("present") === "1" || p.get("present") === "lecture",
    lecture: p.get("present") === "lecture", // presenter mode on the lecture path (lecture.js)
  };
}

/** The embed view's address for the article's state now (its query, and the step). */
export function embedAddress(url, step) {
  const embed = new URL(siteUrl("/embed"), url.origin); // the static folder's, wherever it lies
  for (const k of STATE_KEYS) if (url.searchParams.get(k)) embed.searchParams.set(k, url.searchParams.get(k));
  if (step) embed.searchParams.set("step", String(step));
  return embed;
}

/** The HTML that frames that view in another page (a slide, a course page). */
export function embedCode(src, title) {
  const esc = (s) => String(s).replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
  return (
    `<iframe src="${esc(src)}" title="${esc(title)}" width="960" height="600" style="border:0" loading="lazy" `
    + "allowfullscreen></iframe>"
  );
}
