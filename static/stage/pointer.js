// The cell cursor: which cell is pointed at (hover, keys, a link), the hit test that finds it (by
// arithmetic: the ray meets the blocks' plane, no per-cell raycast), its outline in the world, and what
// the inspector and the legend say about it (the words from inspector.js, in compare mode the two
// inputs' values and their difference).
import * as THREE from "three";
import { colX, colAt } from "./cells.js";
import { cellInfo, ID_LINE, inspectorLines, legendOf } from "./inspector.js";
import { otherValue } from "./compare.js";
import { formatNumber } from "../js/format.js";

const fmtValue = (v) => (v === -Infinity ? "−∞" : formatNumber(v, Number.isInteger(v) ? "text" : "sig5"));
const div = (className, props = {}) => Object.assign(document.createElement("div"), { className, ...props });

export class Pointer {
  constructor(stage) {
    this.stage = stage;
    this.cursor = null; // {id, r, c} in drawn coordinates
    this.inspector = div("stage-inspector", { hidden: true });
    for (const [k, v] of [
      ["role", "status"],
      ["aria-live", "polite"],
      ["aria-atomic", "true"],
    ])
      this.inspector.setAttribute(k, v);
    this.legend = div("stage-legend", { hidden: true });
    this.legend.setAttribute("aria-hidden", "true");
    this.legendTitle = div("stage-legend-title");
    this.legendBar = div("stage-legend-bar");
    this.legendLabels = div("stage-legend-labels");
    this.legend.append(this.legendTitle, this.legendBar, this.legendLabels);
    const g = new THREE.EdgesGeometry(new THREE.BoxGeometry(1.1, 1.1, 5.2));
    this.mesh = new THREE.LineSegments(g, new THREE.LineBasicMaterial({ color: 0xffffff }));
    this.mesh.visible = false;
    this.mesh.renderOrder = 3;
    stage.world.add(this.mesh);
  }

  /** Screen point → {id, r, c} in drawn coordinates: each block's rectangle of the z = 0 plane is
   *  tested and the cell under the ray computed arithmetically. */
  hitTest(clientX, clientY) {
    const s = this.stage,
      t0 = performance.now();
    const rect = s.renderer.domElement.getBoundingClientRect();
    const ndc = new THREE.Vector2(
      ((clientX - rect.left) / rect.width) * 2 - 1,
      -((clientY - rect.top) / rect.height) * 2 + 1,
    );
    this.ray = this.ray || new THREE.Raycaster();
    this.ray.setFromCamera(ndc, s.camera);
    const p = new THREE.Vector3(),
      gap = s.scene.cell.head_gap;
    let hit = null;
    if (this.ray.ray.intersectPlane(new THREE.Plane(new THREE.Vector3(0, 0, 1), 0), p)) {
      for (const b of s.blockById.values()) {
        if (p.x < b.x || p.x >= b.x + b.w || p.y > b.y || p.y <= b.y - b.rows) continue;
        const c = colAt(b, p.x - b.x, gap),
          r = Math.floor(b.y - p.y);
        const cut = s.windowCols && s.windowed.includes(b.id) && (c < s.windowCols[0] || c > s.windowCols[1]);
        if (c >= 0 && r >= 0 && r < b.rows && !cut) {
          hit = { id: b.id, r, c };
          break;
        }
      }
    }
    s.stats.lastHitTestMs = performance.now() - t0;
    return hit;
  }

  cellInfo(id, r, c) {
    const s = this.stage,
      b = s.blockById.get(id);
    return b ? cellInfo(s.scene, b, s.tensors, r, c) : null;
  }

  cellCentre(b, r, c) {
    return new THREE.Vector3(b.x + colX(b, c, this.stage.scene.cell.head_gap) + 0.5, b.y - r - 0.5, 0);
  }

  setCursor(cell) {
    const s = this.stage;
    this.cursor = cell;
    s.markInput();
    this.refresh();
    s.invalidate();
  }

  /** A new trace: the cursor stays on its cell if its block is still drawn, inside the block's new size. */
  keep() {
    const b = this.cursor && this.stage.blockById.get(this.cursor.id);
    if (!b) {
      this.cursor = null;
      return;
    }
    this.cursor.r = Math.min(this.cursor.r, b.rows - 1);
    this.cursor.c = Math.min(this.cursor.c, b.cols - 1);
  }

  /** No cursor, no inspector, no legend. */
  hide() {
    this.cursor = null;
    this.inspector.hidden = true;
    this.legend.hidden = true;
    this.mesh.visible = false;
    this.stage.invalidate();
  }

  /** Moves the cursor to a cell (tensor coordinates) and returns what the inspector shows. */
  inspect(id, row, col) {
    const cell = this.stage.resolve(id, row, col);
    if (!cell) return null;
    this.setCursor(cell);
    return { ...this.lastInfo, text: this.inspector.textContent };
  }

  /** The inspector, the legend and the outline for the cell under the cursor. */
  refresh() {
    const s = this.stage,
      el = this.inspector;
    if (!this.cursor || !s.blockById.has(this.cursor.id)) {
      this.mesh.visible = false;
      return;
    }
    const { id, r, c } = this.cursor,
      b = s.blockById.get(id);
    const info = this.cellInfo(id, r, c);
    const lines = inspectorLines(s.scene, b, info, s.cells.get(id, "drop") > 0);
    const cmp = s.comparing && !b.param;
    if (cmp) lines.splice(ID_LINE + 3, 0, this.compareLine(info));
    const cls = (i) =>
      i === 0 ? { className: "stage-inspector-title" } : i === ID_LINE ? { className: "stage-inspector-id" } : {};
    el.replaceChildren(
      ...lines.map((l, i) => Object.assign(document.createElement("div"), { textContent: l }, cls(i))),
    );
    Object.assign(el.dataset, {
      id,
      row: String(info.row),
      col: String(info.col),
      value: String(info.value),
      drawnRow: String(r),
      drawnCol: String(c),
    });
    if (cmp)
      Object.assign(el.dataset, {
        compareValue: String(info.compareValue ?? "absent"),
        difference: String(info.compareValue === undefined ? "absent" : info.value - info.compareValue),
      });
    else {
      delete el.dataset.compareValue;
      delete el.dataset.difference;
    }
    el.hidden = false;
    this.showLegend(b);
    this.mesh.position.copy(this.cellCentre(b, r, c));
    this.mesh.visible = true;
    this.lastInfo = info;
  }

  /** Compare mode: both inputs' values of the cell and their difference (info gains compareValue). */
  compareLine(info) {
    const s = this.stage,
      cmp = s.compare,
      other = otherValue(cmp.tensors.get(info.id), info.row, info.col);
    const a = s.trace.input.number,
      b = cmp.trace.input.number;
    info.compareValue = other;
    if (other === undefined) return `input ${b} has no such cell (drawn hatched)`;
    const difference = fmtValue(info.value - other);
    return `input ${a}: ${fmtValue(info.value)} · input ${b}: ${fmtValue(other)} · difference ${difference}`;
  }

  showLegend(b) {
    const s = this.stage,
      lg = legendOf(
        s.scene,
        b,
        s.cells.entry(b.id).scale,
        s.comparing && !b.param ? `${s.trace.input.number} − ${s.compare.trace.input.number}` : null,
      );
    if (!lg) {
      this.legend.hidden = true;
      return;
    }
    const n = lg.stops.length;
    const stops = lg.stops.map((x, i) => `${x} ${(100 * i) / (n - 1)}%`);
    this.legendBar.style.background = `linear-gradient(to right, ${stops.join(", ")})`;
    this.legendTitle.textContent = lg.title;
    this.legendLabels.replaceChildren(
      ...lg.labels.map((t) => Object.assign(document.createElement("span"), { textContent: t })),
    );
    this.legend.dataset.block = b.id;
    this.legend.hidden = false;
  }
}
