// Attention by word (templates/attention_words.html, step 16). For the live input, a reader chooses a
// source or target word; for every attention block whose rows are that sequence, one panel per head
// draws a line from the word to each word it attends to, its width proportional to the weight, with the
// weight written beside it; the same row of each block lights up on the stage.
//
// Nothing about the model is written here. The attention weights are the trace's nodes with op
// Softmax; the scene says, for each, what its rows and columns stand for (row_axis, col_axis: source
// or target, whose tokens are scene.axes[axis]), which station it belongs to (its title) and where it
// is drawn (heads in the order of their x). The stage is lit through window.anatomyStage.

import { formatNumber } from "./format.js";
import { shownTrace } from "./store.js";

const SVG = "http://www.w3.org/2000/svg";
const WORD_AXES = ["source", "target"];
const MAX_WIDTH = 8; // a weight of 1 is drawn 8 units wide

const root = document.querySelector("[data-attention-words]");
let trace = null,
  chosen = null,
  lit = [];

function el(tag, attrs = {}, ...children) {
  const ns = ["svg", "line", "text", "g", "title", "rect"].includes(tag) ? SVG : null;
  const node = ns ? document.createElementNS(ns, tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined) node.setAttribute(k, String(v));
  for (const c of children.flat()) if (c !== null && c !== undefined) node.append(c);
  return node;
}

// The attention blocks of the trace, grouped by station in the scene's order, heads left to right.
function attentionStations(t) {
  const nodes = new Map(t.nodes.map((n) => [n.id, n]));
  const blocks = t.scene.blocks.filter(
    (b) => b.op === "Softmax" && WORD_AXES.includes(b.row_axis) && WORD_AXES.includes(b.col_axis) && nodes.has(b.id),
  );
  return t.scene.stations
    .map((st) => ({
      station: st,
      heads: blocks
        .filter((b) => b.station === st.id)
        .sort((a, b) => a.x - b.x)
        .map((b) => ({ block: b, node: nodes.get(b.id) })),
    }))
    .filter((s) => s.heads.length);
}

// Row `row` of a node's data (rows × columns, row-major).
function weightsRow(node, row) {
  const cols = node.shape[node.shape.length - 1];
  return node.data.slice(row * cols, (row + 1) * cols);
}

function panel(head, index, axis, row) {
  const { block, node } = head;
  const words = trace.scene.axes[block.col_axis];
  const query = trace.scene.axes[axis][row];
  const w = weightsRow(node, row);
  const step = 15,
    top = 6,
    height = top + step * words.length + 4;
  const qy = top + (step * (words.length - 1)) / 2 + 4;
  const svg = el("svg", {
    class: "aw-head",
    viewBox: `0 0 186 ${height}`,
    role: "img",
    "aria-label": `head ${index + 1}: ${words.map((k, j) => `${k} ${formatNumber(w[j], "fixed2")}`).join(", ")}`,
    "data-block": block.id,
    "data-row": row,
  });
  svg.append(el("text", { x: 56, y: qy, "text-anchor": "end", class: "aw-query" }, query));
  words.forEach((word, j) => {
    const y = top + step * j + 4,
      value = w[j];
    const masked = value === -Infinity; // −∞ scores never reach a softmax; kept for safety
    const weight = masked ? 0 : value;
    svg.append(
      el("line", {
        x1: 60,
        y1: qy - 3,
        x2: 104,
        y2: y - 3,
        "stroke-width": MAX_WIDTH * weight,
        class: "aw-line",
        "data-key": j,
        "data-weight": weight,
      }),
    );
    svg.append(el("text", { x: 108, y, class: weight >= 0.005 ? "aw-key" : "aw-key aw-zero" }, word));
    svg.append(el("text", { x: 184, y, "text-anchor": "end", class: "aw-value" }, formatNumber(weight, "fixed2")));
  });
  return el("div", { class: "aw-cell" }, el("p", { class: "aw-head-title" }, `head ${index + 1}`), svg);
}

function light(stations, axis, row) {
  const stage = window.anatomyStage?.stage;
  if (!stage?.cells) return;
  for (const id of lit) stage.cells.set(id, { focus: null });
  lit = [];
  if (axis !== null) {
    for (const s of stations) {
      for (const { block } of s.heads) {
        if (block.row_axis !== axis) continue;
        const focus = block.transposed ? [0, block.rows - 1, row, row] : [row, row, 0, block.cols - 1];
        stage.cells.set(block.id, { focus });
        lit.push(block.id);
      }
    }
  }
  stage.invalidate?.();
}

function draw() {
  const words = root.querySelector(".aw-words"),
    panels = root.querySelector(".aw-panels");
  if (!trace?.scene) return;
  const stations = attentionStations(trace);
  words.replaceChildren(
    ...WORD_AXES.map((axis) =>
      el(
        "div",
        { class: "aw-side" },
        el(
          "span",
          { class: "aw-side-label" },
          axis === "source" ? "English, as the encoder reads it:" : "German rows, as the decoder reads them:",
        ),
        ...trace.scene.axes[axis].map((token, i) =>
          el(
            "button",
            {
              type: "button",
              class: "aw-word",
              "data-axis": axis,
              "data-index": i,
              "aria-pressed": String(chosen?.axis === axis && chosen?.index === i),
            },
            token,
          ),
        ),
      ),
    ),
  );
  if (!chosen || chosen.index >= trace.scene.axes[chosen.axis].length) {
    chosen = null;
    panels.replaceChildren(el("p", { class: "aw-hint" }, "Choose a word above."));
    light(stations, null, 0);
    return;
  }
  const { axis, index } = chosen;
  panels.replaceChildren(
    ...stations
      .filter((s) => s.heads[0].block.row_axis === axis)
      .map((s) =>
        el(
          "div",
          { class: "aw-station", "data-station": s.station.id },
          el("h3", {}, `${s.station.title}: “${trace.scene.axes[axis][index]}” reads`),
          el(
            "div",
            { class: "aw-grid" },
            s.heads.map((h, k) => panel(h, k, axis, index)),
          ),
        ),
      ),
  );
  light(stations, axis, index);
}

function choose(axis, index) {
  chosen = chosen && chosen.axis === axis && chosen.index === index ? null : { axis, index };
  draw();
  /** @type {HTMLElement | null} */ (
    root.querySelector(`.aw-word[data-axis="${axis}"][data-index="${index}"]`)
  )?.focus();
}

if (root) {
  root.classList.add("aw-live");
  root.addEventListener("click", (e) => {
    const b = e.target instanceof Element ? /** @type {HTMLElement | null} */ (e.target.closest(".aw-word")) : null;
    if (b) choose(b.dataset.axis, Number(b.dataset.index));
  });
  shownTrace.follow((shown) => {
    trace = shown;
    lit = []; // a new trace redraws every block: nothing is lit any more
    draw();
    if (chosen) setTimeout(draw, 0); // after the stage has taken the new trace
  });
  window.anatomyWords = { choose, chosen: () => chosen }; // for tests and the console
}
