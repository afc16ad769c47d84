// Cells a step marks with a ring on their top face: the scene's `marks` ({block, columns}: in each row r
// of the block, the column that the node `columns` holds at r) and the rings another module asks for
// (lossview.js: each row's reference piece). The piece greedy decoding picks needs no ring: it is its
// row's largest probability, which cells.js outlines (one mark per meaning: outline, the largest; ring,
// the reference). The rings lie flat just
// above the cell, in the world, so they stay on their cell whatever the camera does. `marked()` says
// which cells carry which ring (tests read it); `reveal()` hides the rings of rows not computed yet, and
// `window()` those outside a window of columns (windowed.js).
import * as THREE from "three";

const RING = { outer: 0.62, inner: 0.47 }; // half-widths in cell units: a little wider than the cell

function ringGeometry() {
  const s = new THREE.Shape(),
    { outer: o, inner: i } = RING;
  s.moveTo(-o, -o);
  s.lineTo(o, -o);
  s.lineTo(o, o);
  s.lineTo(-o, o);
  s.lineTo(-o, -o);
  const hole = new THREE.Path();
  hole.moveTo(-i, -i);
  hole.lineTo(-i, i);
  hole.lineTo(i, i);
  hole.lineTo(i, -i);
  hole.lineTo(-i, -i);
  s.holes.push(hole);
  return new THREE.ShapeGeometry(s);
}

export class Marks {
  constructor(stage) {
    this.stage = stage;
    this.group = new THREE.Group();
    this.group.renderOrder = 4;
    this.geometry = ringGeometry();
    this.cells = []; // [{id, row, col, r, c, kind}]: tensor and drawn coordinates
    stage.world.add(this.group);
  }

  /** The step's marks, plus `extra` rings ({id, row, col, kind, color}), drawn afresh. */
  show(step, extra = []) {
    const s = this.stage,
      cells = [];
    for (const m of step?.marks || []) {
      if (m.ring === false) continue; // marked otherwise (its row's largest, outlined by cells.js)
      const cols = s.tensors.get(m.columns),
        b = s.blockById.get(m.block);
      if (!cols || !b) continue;
      for (let row = 0; row < cols.data.length; row++)
        cells.push({ id: m.block, row, col: cols.data[row], kind: "chosen" });
    }
    this.draw([...cells, ...extra]);
  }

  draw(cells) {
    const s = this.stage,
      colors = s.scene?.palette?.marks || {};
    this.clear();
    for (const cell of cells) {
      const d = s.resolve(cell.id, cell.row, cell.col);
      if (!d) continue;
      const b = s.blockById.get(d.id),
        at = s.pointer.cellCentre(b, d.r, d.c);
      const color = cell.color || colors[cell.kind] || "#ffffff";
      const mat = new THREE.MeshBasicMaterial({ color, side: THREE.DoubleSide, depthTest: false, transparent: true });
      const ring = new THREE.Mesh(this.geometry, mat);
      const grow = cell.kind === "chosen" ? 1 : 1.3; // a reference ring lies around the cell's outline, not on it
      ring.scale.set(grow, grow, 1);
      ring.position.set(at.x, at.y, this.top(b, d));
      ring.renderOrder = 4;
      this.group.add(ring);
      this.cells.push({ ...cell, r: d.r, c: d.c, ring });
    }
    this.reveal(Infinity);
  }

  /** Rings only on the drawn columns c0..c1 of the windowed blocks (windowed.js; ids null: all). */
  window(ids, cols) {
    this.win = ids ? { ids, cols } : null;
    this.reveal(this.rows ?? Infinity);
  }

  inWindow(m) {
    const w = this.win;
    return !w || !w.ids.has(m.id) || (m.c >= w.cols[0] && m.c <= w.cols[1]);
  }

  /** Just above the cell's top face, as cells.js stands it (a probability lies flat): a ring higher up
   *  would stand off its cell on screen, seen from the view's elevation. */
  top(b, d) {
    const s = this.stage,
      z = s.cells.top(d.id, d.r, d.c);
    return (Number.isFinite(z) ? Math.max(0, z) : s.scene.cell.max_height) + 0.05;
  }

  /** Only the rings of drawn rows before `rows` (the loop animation reveals a block row by row). */
  reveal(rows) {
    this.rows = rows;
    for (const m of this.cells) m.ring.visible = m.r < rows && this.inWindow(m);
    this.stage.invalidate();
  }

  clear() {
    for (const m of /** @type {THREE.Mesh<THREE.BufferGeometry, THREE.Material>[]} */ (this.group.children))
      m.material.dispose();
    this.group.clear();
    this.cells = [];
  }

  marked() {
    return this.cells.map(({ id, row, col, r, c, kind, ring }) => ({
      id,
      row,
      col,
      drawnRow: r,
      drawnCol: c,
      kind,
      visible: ring.visible,
    }));
  }
}
