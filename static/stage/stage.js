// The stage: draws the scene the server computed (trace.scene: blocks, labels, connectors, colours,
// each step's subject and view) with the trace's and the weights' numbers. It knows nothing about the
// model itself: what a block is, where it sits and what each step shows all come from the scene
// (scene/layout.py). The Stage is a thin composition of controllers with one job each:
//   view.js        the renderer and its on-demand frame loop
//   tour.js        the steps (light, frame, animate) and the camera's views
//   pointer.js     the cell cursor, the hit test, the inspector and the legend
//   keys.js        pointer and key input
//   explaining.js  explaining a cell (the panel, the lit inputs, the trail)
//   compare.js     compare mode (CompareMode) · export.js the exports · overlay.js hints and messages
//   marks.js       rings on the cells a step marks · lossview.js the step's loss table (an overlay)
//   readouts.js    the subject's token names and the values printed on its cells
//   worked.js      the worked attention row of steps 6–9 (its card and its lit cells)
// and owns what they share: the scene, the tensors, the cells and the blocks drawn.
import * as THREE from "three";
import { CellField, ABSENT } from "./cells.js";
import { buildLabels, styleLabels, FONT_SHARE } from "./labels.js";
import { withPositions } from "./axisnames.js";
import { buildConnectors } from "./connectors.js";
import { CameraRig } from "./camera.js";
import { traceTensors } from "./data.js";
import { drawnCell, drawnIn } from "./cellmap.js";
import { Switches } from "./switches.js";
import { Readouts } from "./readouts.js";
import { CompareMode } from "./compare.js";
import { Exports } from "./export.js";
import { View } from "./view.js";
import { Tour } from "./tour.js";
import { Pointer } from "./pointer.js";
import { bindInput } from "./keys.js";
import { Explanation } from "./explaining.js";
import { WorkedCard } from "./worked.js";
import { Messages, buildHelp, buildViewButton, describeStage } from "./overlay.js";
import { Marks } from "./marks.js";
import { LossView } from "./lossview.js";

export { rectsCovering } from "./explaining.js";

const VALUE_MS = 700;

export class Stage {
  constructor(container) {
    this.el = container;
    this.view = new View(container, () => {
      this.switches?.place();
      this.readouts?.place();
    });
    this.rig = this.view.rig = new CameraRig(this.camera, this.renderer.domElement, (user) => {
      if (user) this.markInput();
      this.invalidate();
    });
    this.scene = null; // the scene document (trace.scene)
    this.cells = null; // the one instanced mesh of all cells
    /** @type {string[]} the wide blocks a phone's view shows a window of columns of (windowed.js) */
    this.windowed = [];
    /** @type {{id: string, rows: number[], cols: number[]}[]} */
    this.veils = []; // cells an open exercise asks about (setVeils)
    this.blockById = new Map();
    this.tensors = new Map(); // id → {shape, data}
    this.params = new Map();
    this.stepNo = 1;
    this.step = null;
    this.tour = new Tour(this);
    this.pointer = new Pointer(this);
    this.compare = new CompareMode(this);
    this.exports = new Exports(this);
    this.messages = new Messages();
    this.worked = new WorkedCard(this); // steps 6–9: the worked attention row's arithmetic
    this.viewButton = buildViewButton(this);
    this.exports.tools.prepend(this.viewButton); // beside PNG, CSV and ONNX
    container.append(
      this.pointer.inspector,
      this.pointer.legend,
      buildHelp(),
      this.exports.tools,
      this.compare.banner,
      this.messages.el,
      this.worked.el,
    );
    this.explanation = new Explanation(this);
    this.marks = new Marks(this);
    this.lossView = new LossView(this);
    describeStage(container);
    this.switches = new Switches(this);
    this.readouts = new Readouts(this); // token names and the values on the cells
    bindInput(this);
    new ResizeObserver(() => this.resize()).observe(container);
    this.resize();
  }

  // ---------- the renderer (view.js) ----------
  get renderer() {
    return this.view.renderer;
  }
  get world() {
    return this.view.world;
  }
  get camera() {
    return this.view.camera;
  }
  get stats() {
    return this.view.stats;
  }
  get tweens() {
    return this.view.tweens;
  }
  get reduced() {
    return this.view.reduced;
  }
  invalidate() {
    this.view.invalidate();
  }
  markInput(t) {
    this.view.markInput(t);
  }
  idle() {
    return this.view.idle();
  }
  tween(ms, fn, done, opts) {
    return this.view.tween(ms, fn, done, opts);
  }
  resize() {
    this.explanation?.fitPanel();
    this.view.resize();
  }

  // ---------- data ----------
  setWeights(params) {
    this.params = params;
  }

  /** A new trace and its scene: values animate to the new numbers, re-laid cells glide to their place.
   *  @param {import("../types.js").Trace} trace */
  setTrace(trace) {
    const t0 = performance.now(),
      scene = trace.scene;
    if (!scene || !Array.isArray(scene.blocks) || !scene.blocks.length) throw new Error("the trace has no scene");
    const tensors = traceTensors(trace);
    for (const [id, p] of this.params) tensors.set(id, p);
    // a block is drawn when the trace has its node: a part's gate (block.part) only while the part is off
    // (the structure keeps its place either way), so the hit test, the keys and the tour never meet it otherwise
    const blocks = scene.blocks.filter((b) => tensors.has(b.id)),
      first = !this.cells;
    if (first) {
      this.cells = new CellField(scene);
      this.world.add(this.cells.mesh);
    }
    this.view.useScene(scene);
    this.rig.fitExtra = scene.camera.fit_extra;
    this.scene = scene;
    this.tensors = tensors;
    this.trace = trace;
    this.blockById = new Map(blocks.map((b) => [b.id, b]));
    this.gatesDrawn = new Set(blocks.filter((b) => b.part).map((b) => b.part)); // their labels are drawn too
    this.buildCells();
    this.stats.blocks = blocks.length;
    this.stats.cellsDrawn = this.cells.count;
    this.pointer.keep();
    this.rebuildDecor(true);
    this.switches.build(scene);
    this.tour.applyStep({ step: this.stepNo }, { cut: true, animate: false, keepCamera: !first, keepExplained: true });
    if (this.explained) this.explanation.reexplain();
    if (!first) this.animateValues();
    this.compare.refreshBanner();
    this.markInput(t0);
    this.pointer.refresh();
    this.invalidate();
  }

  /** After a new trace: the values (and the camera, unless a cell is explained) move to the new ones. */
  animateValues() {
    this.cells.setAll({ t: 0 });
    if (this.decor) this.decor.visible = false;
    this.tween(
      VALUE_MS,
      (e) => this.cells.setAll({ t: e }),
      () => {
        if (this.decor) this.decor.visible = true;
        this.pointer.refresh();
      },
    );
    if (!this.explained) this.tour.moveTo(this.tour.stepView());
  }

  /** Every block's cells: the trace's values, or in compare mode each activation's difference A − B. */
  buildCells() {
    const cmp = this.comparing,
      blocks = [...this.blockById.values()].map((b) => (cmp && !b.param ? { ...b, kind: "value" } : b));
    if (this.cells.build(blocks, (b) => this.compare.values(b, this.tensors))) this.stats.cellLayouts++;
    this.cells.veil(this.veils);
  }

  /** Veils cells (an open exercise's answer: {id, rows, cols} in tensor coordinates), on this trace's cells and
   *  on every later trace's until veiled again; [] shows them all. */
  setVeils(rects) {
    this.veils = rects;
    if (!this.cells) return;
    this.cells.veil(rects);
    this.invalidate(); // the next frame places the readouts without the veiled cells' values
  }

  /** The labels and the connectors, drawn anew; `unlessSame`: only when they differ from those drawn (an input
   *  whose words are the same keeps the atlas). */
  rebuildDecor(unlessSame = false) {
    // the same blocks laid out alike (one shape's structure: its labels' places and its connectors) and the same
    // words, parts drawn and type floor draw the same labels
    const texts = this.scene.labels.map((l) => l.text).join("\n"),
      key = [this.cells.layout, texts, [...this.gatesDrawn].join(" "), this.textFloor || 0].join("\n\n");
    if (unlessSame && key === this.decorKey && this.decor) return;
    this.decorKey = key;
    this.stats.labelAtlases++;
    const old = this.decor;
    if (old) {
      this.world.remove(old);
      // freed once the new decor has been drawn: three.js deletes a shader program as soon as no material
      // holds it, so freeing the old materials first made every new input compile the labels' and the
      // lines' programs again (360 ms a new input in software WebGL, bench/bench_new_input.py)
      /** @param {THREE.Object3D & {geometry?: THREE.BufferGeometry,
       *    material?: THREE.Material & {map?: THREE.Texture}}} o */
      const free = (o) => {
        o.geometry?.dispose();
        o.material?.map?.dispose();
        o.material?.dispose();
      };
      this.view.whenSettled(() => old.traverse(free));
    }
    this.decor = new THREE.Group();
    const floor = (this.textFloor || 0) / FONT_SHARE; // presenter mode's least type size, as a line height
    this.drawnLabels = withPositions(this.scene.labels); // a repeated token's labels carry its position
    this.labels = buildLabels(styleLabels(this.drawnLabels, this.scene.palette.labels, this.gatesDrawn, floor));
    this.connectors = buildConnectors(this.scene.connectors);
    this.decor.add(this.labels, this.connectors);
    this.world.add(this.decor);
  }

  /** The least type size of the stage's names, in CSS px (0: their own): presenter mode's, for a projector. The
   *  labels are drawn again at it (the readouts' token names follow on the next frame) and the step's view is
   *  framed again for them. */
  setTextFloor(px) {
    if ((this.textFloor || 0) === px) return;
    this.textFloor = px;
    if (!this.scene) return;
    this.rebuildDecor();
    this.returnToStep(); // the step's view, framed for the labels at their new size
    this.invalidate();
  }

  connector(kind) {
    return this.connectors?.getObjectByName(kind) || null;
  }

  /** Resolves a trace id (a head slice included) and tensor coordinates to a drawn cell {id, r, c}. */
  resolve(id, row, col) {
    return drawnCell(this.scene, this.blockById, id, row, col);
  }

  /** The block a tensor is drawn in: its own, or for a head slice the block it is cut from. */
  drawnIn(id) {
    return drawnIn(this.scene, this.blockById, id);
  }

  /** What the GPU draws at a cell: {value, absent, masked} (compare mode: the difference). */
  drawnCell(id, row, col) {
    const c = this.resolve(id, row, col);
    if (!c) return null;
    const v = this.cells.drawnValue(c.id, c.r, c.c);
    return { value: v, absent: v >= ABSENT * 0.1, masked: v <= -ABSENT * 0.1 };
  }

  // ---------- compare mode (compare.js) ----------
  get comparing() {
    return this.compare.on;
  }
  get compareTrace() {
    return this.compare.trace;
  }
  get compareTensors() {
    return this.compare.tensors;
  }

  /** Pins a trace to compare with (null: compare mode off); the cells animate to the differences.
   *  @param {import("../types.js").Trace | null} trace */
  setCompare(trace) {
    this.compare.pin(trace);
    if (!this.scene) return;
    this.buildCells();
    this.tour.restyle();
    this.cells.setAll({ t: 0 });
    this.tween(VALUE_MS, (e) => this.cells.setAll({ t: e }));
    this.compare.refreshBanner();
    this.pointer.refresh();
    this.explanation.refresh();
    this.markInput();
  }

  // ---------- the tour and the camera (tour.js) ----------
  keyframe(view) {
    return this.tour.keyframe(view);
  }
  covered() {
    return this.tour.covered();
  }
  showOverview() {
    this.tour.showOverview();
  }
  returnToStep() {
    this.tour.returnToStep();
  }
  replay() {
    this.tour.replay();
  }
  applyStep(detail, options) {
    this.tour.applyStep(detail, options);
  }
  restyle() {
    this.tour.restyle();
  }
  project(id, row, col) {
    return this.tour.project(id, row, col);
  }
  framing(ids) {
    return this.tour.framing(ids);
  }

  // ---------- the cursor and the inspector (pointer.js) ----------
  get cursor() {
    return this.pointer.cursor;
  }
  set cursor(cell) {
    this.pointer.cursor = cell;
  }
  get inspector() {
    return this.pointer.inspector;
  }
  hitTest(x, y) {
    return this.pointer.hitTest(x, y);
  }
  cellInfo(id, r, c) {
    return this.pointer.cellInfo(id, r, c);
  }
  inspect(id, row, col) {
    return this.pointer.inspect(id, row, col);
  }

  // ---------- explaining a cell (explaining.js) ----------
  get explained() {
    return this.explanation.explained;
  }
  get panel() {
    return this.explanation.panel;
  }
  explain(id, row, col) {
    return this.explanation.explain(id, row, col);
  }
  select(id, row, col, options) {
    return this.explanation.select(id, row, col, options);
  }
  closeExplanation(options) {
    this.explanation.close(options);
  }
  lit() {
    return this.explanation.lit();
  }
  copyFormula() {
    return this.explanation.copyFormula();
  }

  // ---------- messages and exports ----------
  message(text) {
    this.messages.show(text);
  }
  csv(id) {
    return this.exports.csv(id);
  }
  png() {
    return this.exports.png();
  }
  downloadCsv(id) {
    return this.exports.downloadCsv(id);
  }
  downloadPng() {
    this.exports.downloadPng();
  }
}
