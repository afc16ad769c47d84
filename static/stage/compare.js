// Compare two inputs: every activation cell is drawn as the difference A − B (A: the input on the
// stage, B: the pinned one), cells aligned by position (row r of A against row r of B, column c
// against column c). A cell that B does not have (A's row 4 when B has 3 rows) is ABSENT: drawn
// hatched, never as a zero. Where either value is −∞ (a masked score) the cell stays masked.
// Parameters are the same for both inputs and are drawn as they are.
import { ABSENT } from "./cells.js";
import { tensorIndex } from "./cellmap.js";
import { drawnValues, traceTensors } from "./data.js";
import { askedParts, askedSnapshot } from "../js/store.js";

/** B's element at A's tensor coordinates (row, col), or undefined where B has no such element. */
export function otherValue(tb, row, col) {
  if (!tb) return undefined;
  const s = tb.shape;
  if (s.length === 0) return tb.data[0];
  if (s.length === 1) {
    const k = Math.max(row, col);
    return k < s[0] ? tb.data[k] : undefined;
  }
  return row < s[0] && col < s[1] ? tb.data[row * s[1] + col] : undefined;
}

/** A − B for one cell (ABSENT, or −∞ for masked). */
export function difference(a, b) {
  if (b === undefined) return ABSENT;
  if (a === -Infinity || b === -Infinity) return -Infinity;
  return a - b;
}

/** A block's values in drawn order as compare mode draws them. */
export function compareValues(block, ta, tb) {
  const out = new Float64Array(block.rows * block.cols);
  for (let r = 0, i = 0; r < block.rows; r++) {
    for (let c = 0; c < block.cols; c++, i++) {
      const { row, col, flat } = tensorIndex(block, r, c);
      out[i] = difference(ta.data[flat], otherValue(tb, row, col));
    }
  }
  return out;
}

/** What the banner says: the two inputs and, per token axis, which rows only one of them has.
 *  @param {import("../types.js").Scene} scene
 *  @param {import("../types.js").Trace} traceA
 *  @param {import("../types.js").Trace} traceB */
export function compareSummary(scene, traceA, traceB) {
  const a = traceA.input?.number,
    b = traceB.input?.number,
    onlyA = [],
    onlyB = [];
  const axesB = traceB.scene?.axes || {};
  const rowAxes = new Set(scene.blocks.filter((bl) => !bl.param && bl.row_axis).map((bl) => bl.row_axis));
  for (const axis of rowAxes) {
    const tokens = scene.axes[axis] || [],
      other = axesB[axis];
    if (!other || other.length === tokens.length) continue;
    // rows counted from 1, as a reader counts them
    if (tokens.length > other.length) onlyA.push(`${axis} rows ${other.length + 1}…${tokens.length}`);
    else onlyB.push(`${other.length - tokens.length} ${axis} row${other.length - tokens.length > 1 ? "s" : ""}`);
  }
  const notes = [];
  if (onlyA.length) notes.push(`hatched: ${onlyA.join(", ")}, which only ${a} has`);
  if (onlyB.length) notes.push(`${b} has ${onlyB.join(" and ")} more (not drawn)`);
  return { a, b, notes };
}

/** What the drawn trace is, when it is not the trained model with every part on: the parts switched
 *  off (as the scene's switches name them) and the training snapshot, each with the way back. */
function stateLine(s) {
  const t = s.trace,
    parts = t?.ablation || [],
    snapshot = t?.checkpoint ?? null;
  if (!parts.length && snapshot === null) return null;
  const names = new Map((s.scene?.switches || []).map((w) => [w.id, w.label]));
  const line = Object.assign(document.createElement("div"), { className: "stage-state" });
  const back = (text, act) => {
    const b = Object.assign(document.createElement("button"), { type: "button", textContent: text });
    b.addEventListener("click", act);
    return b;
  };
  if (parts.length) {
    line.append(
      Object.assign(document.createElement("strong"), { textContent: "Switched off: " }),
      parts.map((p) => `${names.get(p) || p} (${p})`).join(", "),
      " ",
      back("every part on", () => askedParts.set([])),
    );
  }
  if (snapshot !== null) {
    line.append(
      parts.length ? " · " : "",
      Object.assign(document.createElement("strong"), { textContent: `Snapshot: step ${snapshot} of training` }),
      " ",
      back("trained model", () => askedSnapshot.set(null)),
    );
  }
  return line;
}

/** Compare mode on the stage: the pinned trace, its tensors, and the banner that says what is drawn. */
export class CompareMode {
  constructor(stage) {
    this.stage = stage;
    this.trace = null;
    this.tensors = null; // the pinned input
    this.banner = Object.assign(document.createElement("div"), { className: "stage-banner", hidden: true });
    this.banner.setAttribute("aria-live", "polite");
  }

  /** True when a pinned input other than the one drawn is set: activations show A − B. */
  get on() {
    const drawn = this.stage.trace;
    return !!(this.trace && drawn && this.trace.input?.number !== drawn.input?.number);
  }

  /** Pins a trace (null, or one without nodes: compare mode off). */
  pin(trace) {
    this.trace = trace && Array.isArray(trace.nodes) && trace.nodes.length ? trace : null;
    this.tensors = this.trace ? traceTensors(this.trace) : null;
  }

  /** A block's values as drawn: in compare mode an activation's difference, else its own values. */
  values(block, tensors) {
    return this.on && !block.param
      ? compareValues(block, tensors.get(block.id), this.tensors.get(block.id))
      : drawnValues(block, tensors.get(block.id));
  }

  refreshBanner() {
    const el = this.banner,
      s = this.stage,
      state = stateLine(s);
    el.replaceChildren();
    if (!this.trace || !s.trace) {
      el.hidden = !state;
      if (state) el.append(state);
      return;
    }
    if (!this.on) {
      el.textContent = `Pinned ${this.trace.input.number}: type another input to see the difference.`;
    } else {
      const sum = compareSummary(s.scene, s.trace, this.trace);
      el.replaceChildren(
        Object.assign(document.createElement("strong"), { textContent: `Colours: ${sum.a} − ${sum.b}` }),
        " (activations; parameters as they are)",
        ...sum.notes.map((n) => Object.assign(document.createElement("div"), { textContent: n })),
      );
    }
    if (state) el.prepend(state);
    el.hidden = false;
  }
}
