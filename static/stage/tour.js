// The tour and the camera: each step of the scene lit, framed and animated (the scene says what), the
// whole machine, back to the step's view, replay; the framing of a box of blocks (the explanation's);
// and how a step's subject sits on screen (framing(), for tests/stage/test_framing.py; measured by ./framing.js).
import * as THREE from "three";
import { ANIMATIONS } from "./animations.js";
import { restingOpacity } from "./connectors.js";
import { boxWithLabels, labelRects, pxPerUnit } from "./labelroom.js";
import { setLabelBand } from "./labels.js";
import { applyWindow } from "./windowed.js";
import { framing } from "./framing.js";

const MOVE_MS = 650,
  DIM = 0.32,
  DIM_COMPUTED = 0.16;
const COVER_MIN_HEIGHT = 480; // CSS px: below it, views ignore the overlays (covered())
const LABEL_ROOM_MAX = 1.04; // moving back more for its labels, a view keeps its cells legible
const PART_GAIN = 1.05; // a part is framed only if it draws the cells at least this much larger

export class Tour {
  constructor(stage) {
    this.stage = stage;
  }

  get moveMs() {
    return this.stage.reduced ? 0 : MOVE_MS;
  }

  /** The camera's keyframe for a view: its box, grown where a label anchored in it, as drawn from there
   *  (a label grows on screen to stay legible, past the room the scene keeps for it), would reach past
   *  what the camera shows of the blocks' plane; a view whose labels all show stays as it is. */
  keyframe(view) {
    const s = this.stage,
      cover = this.covered(),
      aspect = s.camera.aspect;
    setLabelBand(s.labels, this.covered(true)); // labels keep out from under the overlays, a phone's too
    const plain = s.rig.frame(view, aspect, cover);
    let key = plain;
    const h = s.renderer.domElement.clientHeight;
    if (!s.labels || !h) return key;
    const ppu = pxPerUnit(s.camera, h),
      [A, B, C, D] = view.box,
      t = Math.tan(THREE.MathUtils.degToRad(s.camera.fov) / 2);
    for (let k = 0; k < 3; k++) {
      const [a, b, c, d] = boxWithLabels(s.labels, ppu, key.distance, view.box);
      const hw = key.distance * t * aspect,
        hh = key.distance * t,
        x = key.target.x,
        y = key.target.y;
      const shown = [x - hw, x + hw, y - hh * (1 - 2 * cover.bottom), y + hh * (1 - 2 * cover.top)];
      if (a >= shown[0] && b <= shown[1] && c >= shown[2] && d <= shown[3]) break;
      const box = [Math.min(a, A), Math.max(b, B), Math.min(c, C), Math.max(d, D)];
      const target = [
        view.target[0] + (box[0] + box[1] - A - B) / 2,
        view.target[1] + (box[2] + box[3] - C - D) / 2,
        view.target[2],
      ];
      key = s.rig.frame({ ...view, box, target }, aspect, cover);
    }
    // a view sized to its cells' legibility (tests/stage/test_framing.py) keeps it: there its labels give way
    return key.distance > plain.distance * LABEL_ROOM_MAX && this.cellPxAt(key.distance, ppu) < this.legibleCellPx()
      ? plain
      : key;
  }

  /** The on-screen pitch of the step's largest subject block's cells from `distance`, face-on. */
  cellPxAt(distance, ppu) {
    const s = this.stage;
    let big = null;
    for (const id of s.step?.subject || []) {
      const b = s.blockById.get(id);
      if (b && (!big || b.rows * b.cols > big.rows * big.cols)) big = b;
    }
    return big ? (ppu * (big.w / big.cols)) / distance : Infinity;
  }

  /** The cell size a view keeps: 12 CSS px on a desktop's stage, 6 on a phone's. */
  legibleCellPx() {
    return this.short() ? 6 : 12;
  }

  /** A phone's stage: too short to keep clear of its overlays, or to show a wide block's columns legibly. */
  short() {
    return this.stage.el.getBoundingClientRect().height < COVER_MIN_HEIGHT;
  }

  /** Every label's box on screen now, in client pixels (tests; what overlays must keep clear of). */
  labelRects() {
    const s = this.stage;
    return labelRects(s.labels, s.camera, s.renderer.domElement);
  }

  /** Eases the camera to a scene view (a cut with reduced motion). */
  moveTo(view, cut = false) {
    const key = this.keyframe(view),
      rig = this.stage.rig;
    rig.bound(key.distance); // the wheel zooms about this view, never into the blocks
    rig.moveTo(key, cut ? 0 : this.moveMs);
  }

  /** The share of the stage's height that lasting overlays cover at its top and at its bottom: every
   *  visible element marked data-covers-stage (the key hints, PNG and CSV, the map's button), each counted
   *  at the edge it is nearer. What comes and goes (the hover inspector, the legend, a banner) is not
   *  counted: a view must not move when it shows, nor depend on whether it had shown yet (a link).
   *  A phone's stage (about 350 px) has no height to spare: keeping clear of its overlays would take a
   *  fifth of it and shrink the cells under the 6 px tests/stage/test_framing.py asks, so there only what is
   *  marked data-covers-stage="always" counts (step 20's loss table, a third of the stage); `always`: all
   *  count at every size (for the labels, which keep out from under the overlays). */
  covered(always = false) {
    const box = this.stage.el.getBoundingClientRect(),
      cover = { top: 0, bottom: 0 };
    const which = box.height < COVER_MIN_HEIGHT && !always ? '[data-covers-stage="always"]' : "[data-covers-stage]";
    for (const e of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll(which))) {
      const r = e.getBoundingClientRect();
      if (
        e.hidden
        || !r.height
        || r.bottom <= box.top
        || r.top >= box.bottom
        || r.right <= box.left
        || r.left >= box.right
      )
        continue;
      if (r.top + r.bottom < box.top + box.bottom) cover.top = Math.max(cover.top, (r.bottom - box.top) / box.height);
      else cover.bottom = Math.max(cover.bottom, (box.bottom - r.top) / box.height);
    }
    return cover;
  }

  stepOf(n) {
    const sc = this.stage.scene;
    return sc?.steps.find((s) => s.step === n) || sc?.steps[0] || null;
  }

  // the worked row's card belongs to the step's view: the whole machine is framed without it, the same at every step
  showOverview() {
    const s = this.stage;
    if (s.scene) {
      s.markInput();
      s.worked.hide();
      applyWindow(s, [], null);
      this.moveTo(s.scene.overview);
      this.overview(true);
    }
  }
  returnToStep() {
    const s = this.stage;
    if (s.step) {
      s.markInput();
      s.worked.show(s.step);
      this.moveTo(this.stepView());
      this.window();
      this.overview(false);
    }
  }
  /** The framed part's window (a run of its blocks' columns), or every column (windowed.js). */
  window() {
    applyWindow(this.stage, this.framedWindow?.clip || this.framed || [], this.framedWindow);
  }
  overview(on) {
    this.stage.inOverview = on;
    this.stage.viewButton?.sync();
  }

  /** The step's view; on a stage that would draw its cells under the scene's camera.part_cell_px, the
   *  largest of the step's parts (scene/views.py; on a phone's stage, windows too) that draws them at least
   *  that large, else the one that draws them largest. `framed` is what it frames (the readouts name it; O
   *  still shows the whole), and `framedWindow` the run of its columns a window of wide blocks shows
   *  (scene/windows.py), or null. */
  stepView() {
    const s = this.stage,
      step = s.step,
      need = s.scene.camera.part_cell_px;
    const t = Math.tan(THREE.MathUtils.degToRad(s.camera.fov) / 2),
      H = s.el.clientHeight || 1;
    const pitch = (view) => H / (2 * this.keyframe(view).distance * t); // one cell's CSS px at the look-at plane
    let best = { view: step.view, blocks: step.subject },
      px = pitch(step.view);
    const short = this.short(); // a window of wide blocks' columns is a phone's part: a desktop names them all
    for (const part of px < need ? step.parts || [] : []) {
      if (part.window && !short) continue;
      const p = pitch(part.view);
      if (p > px * PART_GAIN) {
        best = part;
        px = p;
      }
      if (px >= need) break;
    }
    // a tiny part: not drawn larger than twice the need (room for its names)
    const view = px > 2 * need ? { ...best.view, margin: (best.view.margin * px) / (2 * need) } : best.view;
    this.framed = best.blocks;
    this.framedView = view;
    this.framedWindow = best.window || null;
    return view;
  }
  replay() {
    const s = this.stage;
    if (s.step) {
      s.markInput();
      this.runAnimation();
    }
  }

  /** detail: {step}; the scene says what the step lights, frames and animates. A new step closes the
   *  explanation (keepExplained: a new trace keeps it, to explain the same cell of the new input). */
  applyStep(detail, { cut = false, animate = true, keepCamera = false, keepExplained = false } = {}) {
    const s = this.stage;
    s.stepNo = Number(detail?.step) || s.stepNo;
    if (!s.scene) return;
    if (!keepExplained) s.explanation.close({ restore: false });
    s.step = this.stepOf(s.stepNo);
    s.markInput();
    const rings = s.lossView.apply(s.step); // before the view: the table's room is kept clear (covered())
    s.worked.show(s.step); // before the view is framed: it keeps clear of the card
    const view = this.stepView();
    if (!keepCamera) {
      this.moveTo(view, cut);
      this.overview(false);
    }
    if (!s.inOverview) this.window();
    s.marks.show(s.step, rings);
    this.resetEffects();
    s.pointer.hide();
    this.applyHighlight(cut);
    if (animate) this.runAnimation();
    else this.endState();
  }

  applyHighlight(cut) {
    const s = this.stage,
      lit = new Set(s.step.lit),
      paramsOnly = s.step.animation.name === "parameters";
    const from = new Map(),
      to = new Map();
    for (const [id, b] of s.blockById) {
      let d = !lit.size || lit.has(id) ? 1 : DIM;
      if (paramsOnly && !b.param) d = Math.min(d, DIM_COMPUTED);
      from.set(id, s.cells.get(id, "dim"));
      to.set(id, d);
    }
    const set = (e) => {
      for (const [id, d] of to) s.cells.set(id, { dim: from.get(id) + (d - from.get(id)) * e });
    };
    if (cut) set(1);
    else s.tween(300, set);
  }

  /** Stops the step's animation where it is. */
  stopAnimation() {
    const s = this.stage;
    if (s.anim) {
      s.tweens.delete(s.anim);
      s.anim = null;
    }
  }

  /** The step's animation at its end (the worked row's cells lit after it). */
  endState() {
    const s = this.stage;
    ANIMATIONS[s.step.animation.name]?.(s, s.step.animation, true);
    s.worked.play(s.step, true);
  }

  resetEffects() {
    const s = this.stage;
    this.stopAnimation();
    s.worked.stop();
    s.cells.setAll({ reveal: 1e9, focus: null, drop: 0, glow: 0, fromZero: false, t: 1 });
    for (const c of s.connectors?.children || []) {
      c.geometry.setDrawRange(0, Infinity);
      c.material.opacity = restingOpacity(c.name);
    }
  }

  runAnimation() {
    const s = this.stage;
    this.resetEffects();
    ANIMATIONS[s.step.animation.name]?.(s, s.step.animation, s.reduced);
    s.worked.play(s.step, s.reduced);
    s.invalidate();
  }

  /** After the cells are rebuilt: the step's highlight and its animation's end, the explanation on top. */
  restyle() {
    const s = this.stage;
    this.resetEffects();
    this.applyHighlight(true);
    if (!s.inOverview && !s.explained) this.window(); // new cells (compare mode) are drawn whole
    if (s.explained) s.explanation.paint();
    else if (s.step) this.endState();
    s.invalidate();
  }

  /** Frames the given blocks (each with the room of its label above) from the camera's present angles. */
  frameBlocks(ids) {
    const s = this.stage,
      room = s.scene.camera.label_room;
    let x0 = Infinity,
      x1 = -Infinity,
      y0 = Infinity,
      y1 = -Infinity;
    for (const id of ids) {
      const b = s.blockById.get(id);
      if (!b) continue;
      x0 = Math.min(x0, b.x);
      x1 = Math.max(x1, b.x + b.w);
      y0 = Math.min(y0, b.y - b.rows);
      y1 = Math.max(y1, b.y + room);
    }
    if (!Number.isFinite(x0)) return;
    applyWindow(s, [], null); // the explained cell's inputs are drawn whole
    const k = s.rig.key,
      box = [x0, x1, y0, y1];
    this.moveTo({
      box,
      target: [(x0 + x1) / 2, (y0 + y1) / 2, 0],
      azimuth: k.azimuth,
      elevation: k.elevation,
      margin: s.scene.camera.explain_margin,
    });
  }

  /** Screen (client) position of a cell's centre, tensor coordinates. */
  project(id, row, col) {
    const s = this.stage,
      cell = s.resolve(id, row, col);
    if (!cell) return null;
    const p = s.pointer.cellCentre(s.blockById.get(cell.id), cell.r, cell.c).project(s.camera);
    const rect = s.renderer.domElement.getBoundingClientRect();
    return {
      x: rect.left + ((p.x + 1) / 2) * rect.width,
      y: rect.top + ((1 - p.y) / 2) * rect.height,
      visible: Math.abs(p.x) <= 1 && Math.abs(p.y) <= 1 && p.z < 1,
    };
  }

  /** How the given blocks sit on screen (./framing.js). */
  framing(ids) {
    return framing(this, ids);
  }
}
