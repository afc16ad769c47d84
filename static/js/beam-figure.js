// The live beam search (step 19 of the article): the server drew the page's input's search; each new input's
// is redrawn here, the same way (templates/figures/beam.html).

import { loadBeam } from "./api.js";
import { numbersSource } from "./store.js";
import { fixed3, h, int, table } from "./figure-kit.js";
import { formatNumber } from "./format.js";

const tokens = (t) => t.join(" ");

function beamStep(step, best) {
  const rows = [];
  const isBest = (hyp) => tokens(hyp.tokens) === tokens(best.tokens);
  for (const hyp of step.alive) {
    rows.push(
      h(
        "tr",
        { class: "alive", "data-tokens": tokens(hyp.tokens) },
        h("td", {}, "alive"),
        h("td", {}, tokens(hyp.tokens)),
        h("td", { class: "num" }, fixed3(hyp.log_prob)),
        h("td", { class: "num" }, "–"),
        h("td", { class: "num" }, "–"),
      ),
    );
  }
  for (const hyp of step.finished) {
    rows.push(
      h(
        "tr",
        { class: `finished${isBest(hyp) ? " winner" : ""}`, "data-tokens": tokens(hyp.tokens) },
        h("td", {}, isBest(hyp) ? "finished ★" : "finished"),
        h("td", {}, tokens(hyp.tokens)),
        h("td", { class: "num" }, fixed3(hyp.log_prob)),
        h("td", { class: "num" }, fixed3(hyp.length_penalty)),
        h("td", { class: "num" }, fixed3(hyp.score)),
      ),
    );
  }
  return h(
    "div",
    { class: "beam-step", "data-step": step.step },
    h("h3", {}, `Turn ${int(step.step)}`),
    h("div", { class: "table-scroll" }, table(["kind", "output so far", "log p", "lp(Y)", "score"], rows)),
  );
}

// The table's data: the server's address, or, when the browser computed it (the static build, the server
// unreachable), the document itself as a file to save (the address would answer nothing here).
let beamFile = null;
function beamData(b, link) {
  if (numbersSource.get() === "server") return h("a", { href: link }, link);
  if (beamFile) URL.revokeObjectURL(beamFile);
  beamFile = URL.createObjectURL(new Blob([JSON.stringify(b, null, 1)], { type: "application/json" }));
  return h("a", { href: beamFile, download: `beam-${b.number}.json` }, `${link} as computed in your browser`);
}

// The beam search (here or the server's) after the stage's next picture, which it held back 140 ms (bench_new_input.py)
const afterNextFrame = () =>
  new Promise((done) => {
    requestAnimationFrame(() => setTimeout(done, 0));
    setTimeout(done, 250);
  });
let beamSeq = 0;
export async function drawBeam(fig, number) {
  if (Number(fig.querySelector(".beam-best")?.dataset.number) === number) {
    fig.dataset.number = String(number);
    return;
  }
  const seq = ++beamSeq;
  fig.setAttribute("aria-busy", "true");
  if ((await afterNextFrame(), seq !== beamSeq)) return; // a newer input's table is on its way
  try {
    const b = await loadBeam(number);
    if (seq !== beamSeq) return;
    const best = b.best;
    const link = `/api/beam?input=${b.number}`;
    fig.replaceChildren(
      h(
        "p",
        { class: "beam-best", "data-number": b.number },
        "Beam ",
        int(b.beam_size),
        ", α = ",
        formatNumber(b.alpha),
        " on ",
        h("strong", {}, b.source_tokens.filter((t) => t !== "</s>").join(" ")),
        ": the winner is ",
        h("strong", { class: "winner-tokens" }, tokens(best.tokens)),
        ` (${b.german}), score ${fixed3(best.log_prob)} / ${fixed3(best.length_penalty)} = ${fixed3(best.score)}.`,
      ),
      ...b.steps.map((s) => beamStep(s, best)),
      h(
        "figcaption",
        {},
        "Every turn of the search: the alive beams with their total log-probability, the finished outputs with "
          + "the length penalty and the score; ★ marks the winner. ",
        h(
          "span",
          { class: "reproduce" },
          "Data: ",
          beamData(b, link),
          "; reproduce (with the server running): ",
          h("code", {}, `curl "localhost:8000${link}"`),
        ),
      ),
    );
    fig.dataset.number = String(b.number);
  } catch (err) {
    if (seq === beamSeq)
      fig.replaceChildren(h("p", { class: "not-run" }, `The beam search could not be loaded: ${err.message}`));
  } finally {
    if (seq === beamSeq) fig.removeAttribute("aria-busy");
  }
}
