// A go-deeper page's tables for the reader's input (templates/deeper.html), computed here: the input's trace
// through ./api.js loadTrace (from the server on the served page, computed in the browser on the static
// site), the model's recipe (GET /api/live), and ../compute/topic_tables.js, the same code the server ran
// ahead for the default input. It fills the page's slot (data-topic-tables) when the server left it to the
// script (data-state="pending": an input other than the default); the default input's tables came rendered.
// Drawn with DOM calls, each value as text, formatted by ./format.js as the server's `number` filter does.
import { fetchJson, loadTrace } from "./api.js";
import { formatNumber } from "./format.js";
import { liveUrl } from "../compute/derived.js";
import { topicTables } from "../compute/topic_tables.js";

const SVG = "http://www.w3.org/2000/svg";
const BAR_WIDTH = 40;

function element(tag, props = {}, children = []) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) el.setAttribute(key, value);
  el.append(...children);
  return el;
}

/** The bar of a weight in 0…1, as the template draws it. */
function bar(value) {
  const svg = document.createElementNS(SVG, "svg");
  Object.entries({ class: "bar", width: BAR_WIDTH, height: 8, "aria-hidden": "true", focusable: "false" }).forEach(
    ([k, v]) => svg.setAttribute(k, String(v)),
  );
  const width = Math.round(10 * BAR_WIDTH * Math.max(0, Math.min(value, 1))) / 10;
  for (const [w, cls] of [
    [BAR_WIDTH, "bar-track"],
    [width, "bar-value"],
  ]) {
    const rect = document.createElementNS(SVG, "rect");
    Object.entries({ width: w, height: 8, class: cls }).forEach(([k, v]) => rect.setAttribute(k, String(v)));
    svg.append(rect);
  }
  return svg;
}

function cell(value, column, first) {
  if (first) return element("th", { scope: "row" }, [formatNumber(value, column.format)]);
  const number = typeof value === "number";
  const td = element("td", number ? { class: "num" } : {});
  if (column.bar && number) td.append(bar(value), " ");
  td.append(formatNumber(value, column.format));
  return td;
}

/** One table as templates/deeper.html renders it. */
export function figureOf(t) {
  const titleId = `deeper-${t.id}-title`;
  const head = element(
    "tr",
    {},
    t.columns.map((c) => element("th", { scope: "col" }, [c.name])),
  );
  const body = t.rows.map((row) =>
    element(
      "tr",
      {},
      row.map((v, i) => cell(v, t.columns[i], i === 0)),
    ),
  );
  const table = element("table", { class: "figure-table", "aria-labelledby": titleId }, [
    element("thead", {}, [head]),
    element("tbody", {}, body),
  ]);
  return element("figure", { class: "deeper-figure", "data-deeper": t.id, "aria-labelledby": titleId }, [
    element("h3", { id: titleId, class: "deeper-title" }, [t.title]),
    element("div", { class: "table-scroll", tabindex: "0", role: "region", "aria-labelledby": titleId }, [table]),
    element("figcaption", {}, [t.caption]),
  ]);
}

/** Computes and draws the slot's tables for the section's input; resolves when drawn (or said failed). */
/** @param {HTMLElement} [slot] */
export async function fillTopicTables(slot = document.querySelector("[data-topic-tables]")) {
  if (!slot || slot.dataset.state !== "pending") return false;
  const input = /** @type {HTMLElement} */ (slot.closest("[data-input]")).dataset.input;
  slot.dataset.state = "computing";
  try {
    const [trace, recipe] = await Promise.all([loadTrace(input, { model: "" }), fetchJson(liveUrl(""))]);
    const figures = topicTables(slot.dataset.topicTables, trace, recipe).map(figureOf);
    slot.replaceChildren(...figures);
    slot.dataset.state = "computed";
  } catch (err) {
    slot.replaceChildren(element("p", { role: "alert" }, [`These tables could not be computed: ${err.message}`]));
    slot.dataset.state = "failed";
  }
  return true;
}

fillTopicTables();
