// Explaining a cell: explain.js recomputes it from its inputs by its op, the stage lights exactly the
// cells read (one or two rectangles per block) and marks the cell, the panel (panel.js) shows the
// formula and the input cells, and the trail keeps the cells walked through the panel. Also lit():
// every lit cell as the state texture says (tests read what the GPU draws, not what was meant).
import { explainCell } from "./explain.js";
import { ExplainPanel } from "./panel.js";
import { otherValue } from "./compare.js";
import { indexCoords, tensorIndex } from "./cellmap.js";
import { copyText } from "./export.js";
import { explainedCell } from "../js/store.js";

const DIM_UNRELATED = 0.55;

/** Rectangles [r0, r1, c0, c1] that cover exactly the given drawn cells (greedy, row-major). */
export function rectsCovering(cells) {
  const key = (r, c) => r * 1e6 + c,
    left = new Set(cells.map(([r, c]) => key(r, c)));
  const rects = [];
  for (const [r, c] of [...cells].sort((a, b) => a[0] - b[0] || a[1] - b[1])) {
    if (!left.has(key(r, c))) continue;
    let c1 = c,
      r1 = r;
    while (left.has(key(r, c1 + 1))) c1++;
    for (;;) {
      let full = true;
      for (let x = c; x <= c1 && full; x++) full = left.has(key(r1 + 1, x));
      if (!full) break;
      r1++;
    }
    for (let y = r; y <= r1; y++) for (let x = c; x <= c1; x++) left.delete(key(y, x));
    rects.push([r, r1, c, c1]);
  }
  return rects;
}

/** More than the state texture holds (two per block): their bounding box instead (not exact). */
function atMostTwo(rects, cells) {
  if (rects.length <= 2) return rects;
  console.warn(`stage: ${rects.length} rectangles of inputs in one block; lighting their bounding box`);
  const rs = cells.map((x) => x[0]),
    cs = cells.map((x) => x[1]);
  return [[Math.min(...rs), Math.max(...rs), Math.min(...cs), Math.max(...cs)]];
}

const cellOf = (ex) => ({ id: ex.id, row: ex.row, col: ex.col });
const announce = (cell) => explainedCell.set(cell);

export class Explanation {
  constructor(stage) {
    this.stage = stage;
    this.explained = null; // explain.js's answer for the explained cell, or null
    this.trail = [];
    this.trailIndex = -1; // the cells walked through the panel, and where we are
    this.panel = new ExplainPanel({
      go: (cell, how) => this.select(cell.id, cell.row, cell.col, { how, focusPanel: true }),
      back: (i) => {
        const c = this.trail[i];
        if (c) {
          this.trailIndex = i;
          this.select(c.id, c.row, c.col, { how: "back", focusPanel: true });
        }
      },
      close: (focusStage) => {
        this.close();
        if (focusStage) stage.el.focus({ preventScroll: true });
      },
      copy: () => this.copyFormula(),
      csv: () => stage.exports.downloadCsv(this.explained?.id),
      hover: (cell) => this.hoverInput(cell),
    });
  }

  /** Where one cell comes from (tensor coordinates; head slices allowed); {error} for a bad cell. */
  explain(id, row, col) {
    const s = this.stage;
    if (!s.scene) return { error: "nothing is drawn yet" };
    return explainCell(s.tensors, String(id), Number(row), Number(col), {
      coords: (i, idx) => indexCoords(s.blockById.get(i), idx),
      token: (i, v) => {
        const b = s.blockById.get(i);
        return b?.value_axis ? s.scene.axes[b.value_axis]?.[v] : undefined;
      },
    });
  }

  /** Opens the panel on a cell and lights its inputs. how: click | link | input (a step back to an input
   *  cell, from the panel) | back (along the breadcrumb); panel: false lights them and marks the cell with
   *  the panel closed (an exercise's evidence, beside its verdict). Returns the explanation, or {error}. */
  select(id, row, col, { how = "click", focusPanel = false, panel = true } = {}) {
    const s = this.stage,
      ex = this.explain(id, row, col);
    if (ex.error) {
      s.message(`Cannot explain that cell: ${ex.error}.`);
      announce(this.explained ? cellOf(this.explained) : null);
      return ex;
    }
    const here = { id: ex.id, row: ex.row, col: ex.col, text: `${this.labelOf(ex.id)} [${ex.index.join(", ")}]` };
    if (how === "input") {
      this.trail = [...this.trail.slice(0, this.trailIndex + 1), here];
      this.trailIndex = this.trail.length - 1;
    } else if (how !== "back") {
      this.trail = [here];
      this.trailIndex = 0;
    }
    this.explained = ex;
    this.paint();
    const d = s.resolve(ex.id, ex.row, ex.col);
    if (d) {
      s.pointer.cursor = d;
      s.pointer.refresh();
    }
    if (how !== "click" && !s.project(ex.id, ex.row, ex.col)?.visible) this.frame();
    if (panel) {
      this.panel.show(this.panelModel(ex));
      this.fitPanel();
      if (focusPanel) this.panel.focus();
    } else this.panel.hide();
    announce(cellOf(ex));
    s.markInput();
    return ex;
  }

  /** The same cell explained again, for a new trace (or closed, with a message, if it has no such cell). */
  reexplain() {
    const { id, row, col } = this.explained,
      ex = this.explain(id, row, col);
    if (ex.error) {
      this.close({ restore: false });
      this.stage.message(`The explained cell is gone with the new input: ${ex.error}.`);
      return;
    }
    this.explained = ex;
    this.trail = [{ id, row, col, text: `${this.labelOf(id)} [${ex.index.join(", ")}]` }];
    this.trailIndex = 0;
    this.paint();
    if (!this.panel.el.hidden) this.panel.show(this.panelModel(ex));
  }

  /** The panel again (compare mode changed what it says). */
  refresh() {
    if (this.explained && !this.panel.el.hidden) this.panel.show(this.panelModel(this.explained));
  }

  /** Lights exactly the explained cell's inputs (one or two rectangles per block they sit in), marks the
   *  cell itself and dims everything else. */
  paint() {
    const s = this.stage,
      ex = this.explained;
    s.tour.stopAnimation();
    const groups = new Map();
    for (const inp of ex.inputs) {
      const d = s.resolve(inp.id, inp.row, inp.col);
      if (!d) continue;
      if (!groups.has(d.id)) groups.set(d.id, []);
      groups.get(d.id).push([d.r, d.c]);
    }
    const target = s.resolve(ex.id, ex.row, ex.col);
    for (const id of s.blockById.keys()) {
      const cells = groups.get(id),
        rects = cells ? atMostTwo(rectsCovering(cells), cells) : [];
      s.cells.set(id, {
        dim: cells || id === target?.id ? 1 : DIM_UNRELATED,
        focus: rects,
        reveal: 1e9,
        glow: 0,
        drop: 0,
        t: 1,
        fromZero: false,
      });
    }
    s.cells.setTarget(target);
    s.invalidate();
  }

  /** Closes the panel; restore: the step's own highlight comes back. */
  close({ restore = true } = {}) {
    const s = this.stage;
    if (!this.explained) return;
    this.explained = null;
    this.trail = [];
    this.trailIndex = -1;
    this.panel.hide();
    s.cells?.setTarget(null);
    if (restore && s.step) s.tour.restyle();
    announce(null);
    s.invalidate();
  }

  /** Where the panel is a sheet under the stage (a phone), it takes the room below the stage, no more. */
  fitPanel() {
    const el = this.panel?.el;
    if (!el) return;
    const sheet = getComputedStyle(el).getPropertyValue("--sheet").trim() === "1"; // set by stage.css
    el.style.maxHeight = sheet
      ? `${Math.max(160, window.innerHeight - this.stage.el.getBoundingClientRect().bottom)}px`
      : "";
  }

  /** Moves the camera to the explained cell's block and the blocks of its inputs. */
  frame() {
    const s = this.stage,
      ex = this.explained,
      ids = new Set([s.drawnIn(ex.id).block?.id]);
    for (const i of ex.inputs) ids.add(s.drawnIn(i.id).block?.id);
    s.tour.frameBlocks(ids);
  }

  /** Hovering an input in the panel moves the stage's cursor (and inspector) to it. */
  hoverInput(cell) {
    if (!cell) return;
    const d = this.stage.resolve(cell.id, cell.row, cell.col);
    if (d) this.stage.pointer.setCursor(d);
  }

  /** The part a tensor belongs to, as a reader counts it (the scene's name for its block or head slice). */
  nameOf(id) {
    const { block, slice } = this.stage.drawnIn(id);
    return slice?.name || block?.name || "";
  }

  labelOf(id) {
    const { block, slice } = this.stage.drawnIn(id);
    if (!block) return id;
    return slice ? `${block.label} (columns ${slice.col_offset}…${slice.col_offset + slice.cols - 1})` : block.label;
  }

  /** What the panel shows for an explanation (it renders, the stage decides). */
  panelModel(ex) {
    const s = this.stage,
      { block, slice } = s.drawnIn(ex.id),
      station = s.scene.stations.find((x) => x.id === block?.station);
    const d = s.resolve(ex.id, ex.row, ex.col),
      info = d ? s.pointer.cellInfo(d.id, d.r, d.c) : {};
    const axisWords = [];
    if (info.rowToken !== undefined)
      axisWords.push(`row ${ex.index[0] + 1}: ${info.rowName ?? `token “${info.rowToken}”`}`); // counted from 1
    if (info.colToken !== undefined) axisWords.push(`column ${ex.index[1] + 1} is “${info.colToken}”`);
    if (info.tokenName !== undefined) axisWords.push(`${ex.value} is the id of “${info.tokenName}”`);
    const columns = slice ? ` (columns ${slice.col_offset}… of ${slice.of})` : "";
    const lines = [
      block?.description || station?.title || ex.id,
      `${ex.id} · ${ex.op}${columns}${axisWords.length ? ` · ${axisWords.join(", ")}` : ""}`,
    ];
    const rowOf =
      info.rowToken !== undefined
        ? ` Row ${ex.index[0] + 1} of this table belongs to the token “${info.rowToken}”.`
        : "";
    const idOf = info.tokenName !== undefined ? ` ${ex.value} is the id of the token “${info.tokenName}”.` : "";
    const leaf =
      ex.op === "Parameter"
        ? `A parameter: learned in training, the same for every input.${rowOf}`
        : `A constant of the trace: set, not computed from other cells.${idOf}`;
    const cmp =
      s.comparing && !block?.param
        ? {
            a: s.trace.input.number,
            input: s.compare.trace.input.number,
            value: otherValue(s.compare.tensors.get(ex.id), ex.row, ex.col),
          }
        : null;
    const title = this.labelOf(ex.id),
      part = this.nameOf(ex.id) || station?.title || "";
    const top = (ex.top || []).map((t) => ({ ...t, parts: t.parts.map((p) => ({ ...p, part: this.nameOf(p.id) })) }));
    return {
      ex,
      part,
      title,
      titleText: `${part ? `${part} · ` : ""}${title.replace(/[\^_]\{([^}]*)\}/g, "$1")}`,
      lines,
      groups: this.inputGroups(ex),
      top,
      leaf,
      trail: this.trail,
      trailIndex: this.trailIndex,
      compare: cmp,
      katex: window.katex,
    };
  }

  /** The input cells grouped by tensor and argument, each group saying where its cells are. */
  inputGroups(ex) {
    const s = this.stage,
      groups = [];
    for (const inp of ex.inputs) {
      let g = groups.find((x) => x.id === inp.id && x.arg === inp.arg);
      if (!g) {
        g = { id: inp.id, arg: inp.arg, label: this.labelOf(inp.id), part: this.nameOf(inp.id), cells: [] };
        groups.push(g);
      }
      inp.part = g.part;
      g.cells.push(inp);
    }
    for (const g of groups) {
      const idx = g.cells.map((c) => c.index),
        rank = idx[0].length,
        rows = new Set(idx.map((i) => i[0])),
        cols = new Set(idx.map((i) => i[1]));
      const { block: gb } = s.drawnIn(g.id),
        tokens = gb?.row_axis ? s.scene.axes[gb.row_axis] : null;
      const tok = (r) => (tokens?.[r] !== undefined && gb && !gb.transposed ? ` (“${tokens[r]}”)` : "");
      if (rank === 0) g.where = "the scalar";
      // in words rows, columns and entries count from 1; a cell's brackets are the tensor's index, from 0
      else if (rank === 1)
        g.where = idx.length === 1 ? `entry ${idx[0][0] + 1}${tok(idx[0][0])}` : `${idx.length} entries`;
      else if (idx.length === 1) g.where = `cell [${idx[0].join(", ")}]${tok(idx[0][0])}`;
      else if (rows.size === 1) g.where = `row ${idx[0][0] + 1}${tok(idx[0][0])}, ${idx.length} cells`;
      else if (cols.size === 1) g.where = `column ${idx[0][1] + 1}, ${idx.length} cells`;
      else g.where = `${idx.length} cells`;
      for (const c of g.cells) {
        c.text =
          rank === 0
            ? "·"
            : rank === 1
              ? String(c.index[0])
              : rows.size === 1 && idx.length > 1
                ? String(c.index[1])
                : cols.size === 1 && idx.length > 1
                  ? String(c.index[0])
                  : c.index.join(",");
      }
    }
    return groups;
  }

  /** Every lit cell as the state texture says (tensor coordinates, head slices as their block's cells):
   *  blocks with a focus give the cells inside their rectangles; a block without one is lit whole
   *  when fully bright ({id, all: true}). The marked cell is `target`. */
  lit() {
    const s = this.stage,
      f = s.cells,
      cells = [];
    for (const [id, b] of s.blockById) {
      if (!(f.get(id, "focusOn") > 0)) {
        if (f.get(id, "dim") >= 0.999) cells.push({ id, all: true });
        continue;
      }
      for (const [r0, r1, c0, c1] of f.focusRects(id)) {
        for (let r = Math.max(0, r0); r <= Math.min(r1, b.rows - 1); r++) {
          for (let c = Math.max(0, c0); c <= Math.min(c1, b.cols - 1); c++) {
            const t = tensorIndex(b, r, c);
            cells.push({ id, row: t.row, col: t.col });
          }
        }
      }
    }
    const u = f.material.uniforms.uTarget.value,
      tb = [...s.blockById.values()][u.x];
    const target = u.x >= 0 && tb ? { id: tb.id, ...tensorIndex(tb, u.y, u.z) } : null;
    return { cells, target };
  }

  async copyFormula() {
    const f = this.explained?.formula;
    if (!f) return false;
    if (await copyText(f)) {
      this.panel.flash(".explain-copy", "Copied");
      return true;
    }
    this.panel.showCopyFallback(f);
    return false;
  }
}
