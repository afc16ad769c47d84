// The stage: draws the scene the server computed (trace.scene: blocks, labels, connectors, colours,
// each step's subject and view) with the trace's and the weights' numbers, renders on demand, and
// answers hover, keyboard and tour events. It knows nothing about the model itself: what a block is,
// where it sits and what each step shows all come from the scene (scene/layout.py).
// A click (tap, Enter) explains a cell: explain.js recomputes it from its inputs by its op, the panel
// shows the formula and the input cells, and the stage lights exactly those cells. Compare mode draws
// every activation as the difference between this input and a pinned one (compare.js).
import * as THREE from 'three';
import { CellField, colX, colAt, ABSENT } from './cells.js';
import { buildLabels, styleLabels } from './labels.js';
import { buildConnectors, restingOpacity } from './connectors.js';
import { CameraRig, ease } from './camera.js';
import { drawnValues, traceTensors } from './data.js';
import { cellInfo, inspectorLines, legendOf, tensorIndex } from './inspector.js';
import { ANIMATIONS } from './animations.js';
import { formatNumber } from '../js/format.js';
import { explainCell } from './explain.js';
import { ExplainPanel } from './panel.js';
import { Switches } from './switches.js';
import { compareSummary, compareValues, otherValue } from './compare.js';
import { blockCsv, canvasPng, copyText, dataUrlBlob, download, downloadOnnx, fileName } from './export.js';

const MOVE_MS = 650, VALUE_MS = 700, DIM = 0.32, DIM_COMPUTED = 0.16, DIM_UNRELATED = 0.55;
const TAP_PX = 6;  // a pointer that moves less than this between down and up is a click (or tap)

/** Rectangles [r0, r1, c0, c1] that cover exactly the given drawn cells (greedy, row-major). */
export function rectsCovering(cells) {
  const key = (r, c) => r * 1e6 + c, left = new Set(cells.map(([r, c]) => key(r, c)));
  const rects = [];
  for (const [r, c] of [...cells].sort((a, b) => a[0] - b[0] || a[1] - b[1])) {
    if (!left.has(key(r, c))) continue;
    let c1 = c, r1 = r;
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

const COVER_MIN_HEIGHT = 480;  // CSS px: below it, views ignore the overlays (covered())

export class Stage {
  constructor(container) {
    this.el = container;
    this.reduced = matchMedia('(prefers-reduced-motion: reduce)').matches;
    matchMedia('(prefers-reduced-motion: reduce)').addEventListener?.('change', e => { this.reduced = e.matches; });
    this.renderer = new THREE.WebGLRenderer({ antialias: true, powerPreference: 'high-performance' });
    this.renderer.setPixelRatio(Math.min(devicePixelRatio || 1, 2));
    this.renderer.info.autoReset = true;
    const cv = this.renderer.domElement;
    Object.assign(cv.style, { display: 'block', width: '100%', height: '100%', touchAction: 'none', outline: 'none' });
    cv.setAttribute('aria-hidden', 'true');
    container.appendChild(cv);
    if (getComputedStyle(container).position === 'static') container.style.position = 'relative';
    this.world = new THREE.Scene();
    this.camera = new THREE.PerspectiveCamera(30, 1, 1, 10000);
    this.rig = new CameraRig(this.camera, cv, user => { if (user) this.markInput(); this.invalidate(); });
    this.scene = null;             // the scene document (trace.scene)
    this.cells = null;             // the one instanced mesh of all cells
    this.blockById = new Map();
    this.tensors = new Map();      // id → {shape, data}
    this.params = new Map();
    this.tweens = new Set();
    this.stats = { drawCalls: 0, cellsDrawn: 0, blocks: 0, lastFrameMs: 0, lastInputToRedrawMs: 0, lastHitTestMs: 0, frames: 0, triangles: 0 };
    this.stepNo = 1; this.step = null;
    this.cursor = null;            // {id, r, c} in drawn coordinates
    this.explained = null;         // the explained cell (explain.js's answer), or null
    this.trail = []; this.trailIndex = -1;  // the cells walked through the panel, and where we are
    this.compareTrace = null; this.compareTensors = null;  // the pinned input (compare mode)
    this.buildOverlay();
    this.switches = new Switches(this);
    this.buildCursor();
    this.bindInput();
    new ResizeObserver(() => this.resize()).observe(container);
    this.resize();
  }

  // ---------- render on demand ----------
  invalidate() { if (!this.raf) this.raf = requestAnimationFrame(now => this.frame(now)); }
  markInput(t = performance.now()) { if (this.inputAt === undefined) this.inputAt = t; this.invalidate(); }

  frame(now) {
    this.raf = 0;
    const t0 = performance.now();
    let more = false;
    if (this.rig.tween) more = this.rig.tween(now) || more;
    for (const tw of [...this.tweens]) {
      const k = tw.ms ? Math.min(1, (now - tw.t0) / tw.ms) : 1;
      tw.fn(tw.ease === false ? k : ease(k), k);
      if (k >= 1) { this.tweens.delete(tw); tw.done?.(); } else more = true;
    }
    this.renderer.render(this.world, this.camera);
    this.switches?.place();
    const info = this.renderer.info.render, t1 = performance.now();
    Object.assign(this.stats, { drawCalls: info.calls, triangles: info.triangles, lastFrameMs: t1 - t0, frames: this.stats.frames + 1 });
    if (this.inputAt !== undefined) { this.stats.lastInputToRedrawMs = t1 - this.inputAt; this.inputAt = undefined; }
    if (more) this.invalidate();
    else if (this.idleResolve) { const r = this.idleResolve; this.idleResolve = null; r(); }
  }

  /** Resolves once nothing moves any more (for tests and the benchmark). */
  idle() {
    if (!this.raf && !this.tweens.size && !this.rig.tween) return Promise.resolve();
    return new Promise(r => { const prev = this.idleResolve; this.idleResolve = () => { prev?.(); r(); }; });
  }

  tween(ms, fn, done, opts = {}) {
    const tw = { t0: performance.now(), ms: this.reduced ? 0 : ms, fn, done, ...opts };
    this.tweens.add(tw); this.invalidate(); return tw;
  }

  resize() {
    this.fitPanel();
    const w = this.el.clientWidth || 1, h = this.el.clientHeight || 1;
    this.renderer.setSize(w, h, false);
    this.camera.aspect = w / h; this.camera.updateProjectionMatrix();
    this.invalidate();
  }

  // ---------- data ----------
  setWeights(params) { this.params = params; }

  /** A new trace and its scene: values animate to the new numbers, re-laid cells glide to their place. */
  setTrace(trace) {
    const t0 = performance.now(), scene = trace.scene;
    if (!scene || !Array.isArray(scene.blocks) || !scene.blocks.length) throw new Error('the trace has no scene');
    const tensors = traceTensors(trace);
    for (const [id, p] of this.params) tensors.set(id, p);
    const blocks = scene.blocks.filter(b => tensors.has(b.id));
    const first = !this.cells;
    if (first) {
      this.cells = new CellField(scene);
      this.world.add(this.cells.mesh);
      this.renderer.setClearColor(scene.palette.background);
    }
    this.scene = scene; this.tensors = tensors; this.trace = trace;
    this.blockById = new Map(blocks.map(b => [b.id, b]));
    this.buildCells();
    this.stats.blocks = blocks.length; this.stats.cellsDrawn = this.cells.count;
    if (this.cursor && !this.blockById.has(this.cursor.id)) this.cursor = null;
    if (this.cursor) this.clampCursor();
    this.rebuildDecor();
    this.switches.build(scene);
    this.applyStep({ step: this.stepNo }, { cut: true, animate: false, keepCamera: !first, keepExplained: true });
    if (this.explained) this.reexplain();
    if (!first) {
      this.cells.setAll({ t: 0 });
      if (this.decor) this.decor.visible = false;
      this.tween(VALUE_MS, e => this.cells.setAll({ t: e }), () => { if (this.decor) this.decor.visible = true; this.refreshInspector(); });
      if (!this.explained) this.rig.moveTo(this.keyframe(this.step.view), this.reduced ? 0 : MOVE_MS);
    }
    this.refreshBanner();
    this.markInput(t0);
    this.refreshInspector();
    this.invalidate();
  }

  /** Every block's cells: the trace's values, or in compare mode each activation's difference A − B. */
  buildCells() {
    const cmp = this.comparing, other = this.compareTensors;
    const blocks = [...this.blockById.values()].map(b => (cmp && !b.param ? { ...b, kind: 'value' } : b));
    this.cells.build(blocks, b => (cmp && !b.param ? compareValues(b, this.tensors.get(b.id), other.get(b.id))
      : drawnValues(b, this.tensors.get(b.id))));
  }

  /** True when a pinned input other than the one drawn is set: activations show A − B. */
  get comparing() {
    return !!(this.compareTrace && this.trace && this.compareTrace.input?.number !== this.trace.input?.number);
  }

  /** Pins a trace to compare with (null: compare mode off); the cells animate to the differences. */
  setCompare(trace) {
    this.compareTrace = trace && Array.isArray(trace.nodes) && trace.nodes.length ? trace : null;
    this.compareTensors = this.compareTrace ? traceTensors(this.compareTrace) : null;
    if (!this.scene) return;
    this.buildCells();
    this.restyle();
    this.cells.setAll({ t: 0 });
    this.tween(VALUE_MS, e => this.cells.setAll({ t: e }));
    this.refreshBanner();
    this.refreshInspector();
    if (this.explained) this.panel.show(this.panelModel(this.explained));
    this.markInput();
  }

  /** After the cells are rebuilt: the step's highlight and its animation's end, the explanation on top. */
  restyle() {
    this.resetEffects();
    this.applyHighlight(true);
    if (this.explained) this.paintExplanation();
    else ANIMATIONS[this.step?.animation.name]?.(this, this.step.animation, true);
    this.invalidate();
  }

  rebuildDecor() {
    if (this.decor) { this.world.remove(this.decor); this.decor.traverse(o => { o.geometry?.dispose(); o.material?.map?.dispose(); o.material?.dispose(); }); }
    this.decor = new THREE.Group();
    this.labels = buildLabels(styleLabels(this.scene.labels, this.scene.palette.labels));
    this.connectors = buildConnectors(this.scene.connectors);
    this.decor.add(this.labels, this.connectors);
    this.world.add(this.decor);
  }

  connector(kind) { return this.connectors?.getObjectByName(kind) || null; }

  // ---------- camera and tour ----------
  keyframe(view) { return this.rig.frame(view, this.camera.aspect, this.covered()); }

  /** The share of the stage's height that lasting overlays cover at its top and at its bottom: every
   *  visible element marked data-covers-stage (the key hints, PNG and CSV, the map's button), each counted
   *  at the edge it is nearer. What comes and goes (the hover inspector, the legend, a banner) is not
   *  counted: a view must not move when it shows, nor depend on whether it had shown yet (a link).
   *  A phone's stage (about 350 px) has no height to spare: keeping clear of its overlays would take a
   *  fifth of it and shrink the cells under the 6 px tests/test_framing.py asks, so there nothing counts. */
  covered() {
    const box = this.el.getBoundingClientRect(), cover = { top: 0, bottom: 0 };
    if (box.height < COVER_MIN_HEIGHT) return cover;
    for (const e of document.querySelectorAll('[data-covers-stage]')) {
      const r = e.getBoundingClientRect();
      if (e.hidden || !r.height || r.bottom <= box.top || r.top >= box.bottom || r.right <= box.left || r.left >= box.right) continue;
      if (r.top + r.bottom < box.top + box.bottom) cover.top = Math.max(cover.top, (r.bottom - box.top) / box.height);
      else cover.bottom = Math.max(cover.bottom, (box.bottom - r.top) / box.height);
    }
    return cover;
  }
  stepOf(n) { return this.scene?.steps.find(s => s.step === n) || this.scene?.steps[0] || null; }

  showOverview() { if (this.scene) { this.markInput(); this.rig.moveTo(this.keyframe(this.scene.overview), this.reduced ? 0 : MOVE_MS); } }
  returnToStep() { if (this.step) { this.markInput(); this.rig.moveTo(this.keyframe(this.step.view), this.reduced ? 0 : MOVE_MS); } }
  replay() { if (this.step) { this.markInput(); this.runAnimation(); } }

  /** detail: {step}; the scene says what the step lights, frames and animates. A new step closes the
   *  explanation (keepExplained: a new trace keeps it, to explain the same cell of the new input). */
  applyStep(detail, { cut = false, animate = true, keepCamera = false, keepExplained = false } = {}) {
    this.stepNo = Number(detail?.step) || this.stepNo;
    if (!this.scene) return;
    if (!keepExplained) this.closeExplanation({ restore: false });
    this.step = this.stepOf(this.stepNo);
    this.markInput();
    if (!keepCamera) this.rig.moveTo(this.keyframe(this.step.view), cut || this.reduced ? 0 : MOVE_MS);
    this.resetEffects();
    this.cursor = null; this.inspector.hidden = true; this.legend.hidden = true; this.cursorMesh.visible = false;
    this.applyHighlight(cut);
    if (animate) this.runAnimation(); else ANIMATIONS[this.step.animation.name]?.(this, this.step.animation, true);
  }

  applyHighlight(cut) {
    const lit = new Set(this.step.lit), paramsOnly = this.step.animation.name === 'parameters';
    const from = new Map(), to = new Map();
    for (const [id, b] of this.blockById) {
      let d = !lit.size || lit.has(id) ? 1 : DIM;
      if (paramsOnly && !b.param) d = Math.min(d, DIM_COMPUTED);
      from.set(id, this.cells.get(id, 'dim')); to.set(id, d);
    }
    const set = e => { for (const [id, d] of to) this.cells.set(id, { dim: from.get(id) + (d - from.get(id)) * e }); };
    if (cut) set(1); else this.tween(300, set);
  }

  resetEffects() {
    if (this.anim) { this.tweens.delete(this.anim); this.anim = null; }
    this.cells.setAll({ reveal: 1e9, focus: null, drop: 0, glow: 0, fromZero: false, t: 1 });
    for (const c of this.connectors?.children || []) { c.geometry.setDrawRange(0, Infinity); c.material.opacity = restingOpacity(c.name); }
  }

  runAnimation() {
    this.resetEffects();
    const a = ANIMATIONS[this.step.animation.name];
    if (a) a(this, this.step.animation, this.reduced);
    this.invalidate();
  }

  // ---------- hit-testing and the inspector ----------
  /** Screen point → {id, r, c} in drawn coordinates: the ray meets the blocks' z = 0 plane, each block's
   *  rectangle is tested and the cell is computed arithmetically (no per-cell raycast). */
  hitTest(clientX, clientY) {
    const t0 = performance.now();
    const rect = this.renderer.domElement.getBoundingClientRect();
    const ndc = new THREE.Vector2(((clientX - rect.left) / rect.width) * 2 - 1, -((clientY - rect.top) / rect.height) * 2 + 1);
    this._ray = this._ray || new THREE.Raycaster();
    this._ray.setFromCamera(ndc, this.camera);
    const p = new THREE.Vector3(), gap = this.scene.cell.head_gap;
    let hit = null;
    if (this._ray.ray.intersectPlane(new THREE.Plane(new THREE.Vector3(0, 0, 1), 0), p)) {
      for (const b of this.blockById.values()) {
        if (p.x < b.x || p.x >= b.x + b.w || p.y > b.y || p.y <= b.y - b.rows) continue;
        const c = colAt(b, p.x - b.x, gap), r = Math.floor(b.y - p.y);
        if (c >= 0 && r >= 0 && r < b.rows) { hit = { id: b.id, r, c }; break; }
      }
    }
    this.stats.lastHitTestMs = performance.now() - t0;
    return hit;
  }

  cellInfo(id, r, c) { const b = this.blockById.get(id); return b ? cellInfo(this.scene, b, this.tensors, r, c) : null; }

  /** Resolves a trace id (a head slice included) and tensor coordinates to a drawn cell. */
  resolve(id, row, col) {
    const al = this.scene?.slices.find(s => s.id === id);
    if (al) return this.resolve(al.of, row, col + al.col_offset);
    const b = this.blockById.get(id);
    if (!b) return null;
    if (b.shape.length === 0) return { id, r: 0, c: 0 };
    if (b.shape.length === 1) { const k = Math.max(row, col); return b.rows === 1 ? { id, r: 0, c: k } : { id, r: k, c: 0 }; }
    return b.transposed ? { id, r: col, c: row } : { id, r: row, c: col };
  }

  setCursor(cell) { this.cursor = cell; this.markInput(); this.refreshInspector(); this.invalidate(); }

  clampCursor() {
    const b = this.blockById.get(this.cursor.id);
    this.cursor.r = Math.min(this.cursor.r, b.rows - 1); this.cursor.c = Math.min(this.cursor.c, b.cols - 1);
  }

  cellCentre(b, r, c) { return new THREE.Vector3(b.x + colX(b, c, this.scene.cell.head_gap) + 0.5, b.y - r - 0.5, 0); }

  refreshInspector() {
    const el = this.inspector;
    if (!this.cursor || !this.blockById.has(this.cursor.id)) { this.cursorMesh.visible = false; return; }
    const { id, r, c } = this.cursor, b = this.blockById.get(id);
    const info = this.cellInfo(id, r, c);
    const lines = inspectorLines(this.scene, b, info, this.cells.get(id, 'drop') > 0);
    const cmp = this.comparing && !b.param;
    if (cmp) {
      const other = otherValue(this.compareTensors.get(id), info.row, info.col), a = this.trace.input.number, bb = this.compareTrace.input.number;
      info.compareValue = other;
      lines.splice(4, 0, other === undefined ? `input ${bb} has no such cell (drawn hatched)`
        : `input ${a}: ${fmtValue(info.value)} · input ${bb}: ${fmtValue(other)} · difference ${fmtValue(info.value - other)}`);
    }
    el.replaceChildren(...lines.map((l, i) => { const d = document.createElement('div'); d.textContent = l; if (!i) d.className = 'stage-inspector-title'; return d; }));
    Object.assign(el.dataset, { id, row: String(info.row), col: String(info.col), value: String(info.value), drawnRow: String(r), drawnCol: String(c) });
    if (cmp) Object.assign(el.dataset, { compareValue: String(info.compareValue ?? 'absent'), difference: String(info.compareValue === undefined ? 'absent' : info.value - info.compareValue) });
    else { delete el.dataset.compareValue; delete el.dataset.difference; }
    el.hidden = false;
    this.showLegend(b);
    this.cursorMesh.position.copy(this.cellCentre(b, r, c));
    this.cursorMesh.visible = true;
    this.lastInfo = info;
  }

  showLegend(b) {
    const lg = legendOf(this.scene, b, this.cells.entry(b.id).scale,
      this.comparing && !b.param ? `${this.trace.input.number} − ${this.compareTrace.input.number}` : null);
    if (!lg) { this.legend.hidden = true; return; }
    const n = lg.stops.length;
    this.legendBar.style.background = `linear-gradient(to right, ${lg.stops.map((s, i) => `${s} ${100 * i / (n - 1)}%`).join(', ')})`;
    this.legendTitle.textContent = lg.title;
    this.legendLabels.replaceChildren(...lg.labels.map(t => { const s = document.createElement('span'); s.textContent = t; return s; }));
    this.legend.dataset.block = b.id;
    this.legend.hidden = false;
  }

  // ---------- DOM overlay, cursor, input ----------
  buildOverlay() {
    const el = document.createElement('div');
    el.className = 'stage-inspector'; el.setAttribute('role', 'status'); el.setAttribute('aria-live', 'polite'); el.setAttribute('aria-atomic', 'true');
    el.hidden = true;
    this.inspector = el;
    const legend = document.createElement('div');
    legend.className = 'stage-legend'; legend.hidden = true; legend.setAttribute('aria-hidden', 'true');
    this.legendTitle = document.createElement('div'); this.legendTitle.className = 'stage-legend-title';
    this.legendBar = document.createElement('div'); this.legendBar.className = 'stage-legend-bar';
    this.legendLabels = document.createElement('div'); this.legendLabels.className = 'stage-legend-labels';
    legend.append(this.legendTitle, this.legendBar, this.legendLabels);
    this.legend = legend;
    const help = document.createElement('div');
    help.className = 'stage-help';
    help.append(Object.assign(document.createElement('span'), { className: 'stage-help-keys', textContent: 'O whole machine · C step view · R replay · ' }),
      'click a cell: where it comes from');
    help.title = 'drag: orbit · right-drag: pan · wheel: zoom · Tab and arrow keys: move a cell cursor · Enter: explain the cell · Esc: hide it';
    const tools = document.createElement('div');
    tools.className = 'stage-tools';
    const tool = (text, title, fn) => { const bt = document.createElement('button'); bt.type = 'button'; bt.textContent = text; bt.title = title; bt.addEventListener('click', fn); tools.append(bt); return bt; };
    this.pngButton = tool('PNG', 'Download the stage as a PNG image, at its size', () => this.downloadPng());
    this.csvButton = tool('CSV', 'Download the block under the cursor as CSV (rows and columns labelled)', () => this.downloadCsv());
    this.pngButton.className = 'stage-png'; this.csvButton.className = 'stage-csv';
    tool('ONNX', 'Download the whole trace as an ONNX model (open it in Netron)', () => downloadOnnx(this.trace)).className = 'stage-onnx';
    this.banner = document.createElement('div');
    this.banner.className = 'stage-banner'; this.banner.hidden = true; this.banner.setAttribute('aria-live', 'polite');
    this.messageEl = document.createElement('div');
    this.messageEl.className = 'stage-message'; this.messageEl.setAttribute('role', 'alert'); this.messageEl.hidden = true;
    this.messageEl.addEventListener('click', () => { this.messageEl.hidden = true; });
    for (const e of [help, tools]) e.dataset.coversStage = '';  // views keep clear of them (covered())
    this.el.append(el, legend, help, tools, this.banner, this.messageEl);
    this.panel = new ExplainPanel({
      go: (cell, how) => this.select(cell.id, cell.row, cell.col, { how, focusPanel: true }),
      back: i => { const c = this.trail[i]; if (c) { this.trailIndex = i; this.select(c.id, c.row, c.col, { how: 'back', focusPanel: true }); } },
      close: (focusStage) => { this.closeExplanation(); if (focusStage) this.el.focus({ preventScroll: true }); },
      copy: () => this.copyFormula(),
      csv: () => this.downloadCsv(this.explained?.id),
      hover: cell => this.hoverInput(cell),
    });
    this.el.setAttribute('role', this.el.getAttribute('role') || 'application');
    this.el.setAttribute('aria-roledescription', 'model stage');
    if (!this.el.getAttribute('aria-label')) this.el.setAttribute('aria-label', 'The Transformer, every matrix drawn. Tab and arrow keys move a cell cursor; the inspector reads the cell.');
    if (!this.el.hasAttribute('tabindex')) this.el.tabIndex = 0;
  }

  buildCursor() {
    const g = new THREE.EdgesGeometry(new THREE.BoxGeometry(1.1, 1.1, 5.2));
    this.cursorMesh = new THREE.LineSegments(g, new THREE.LineBasicMaterial({ color: 0xffffff }));
    this.cursorMesh.visible = false; this.cursorMesh.renderOrder = 3;
    this.world.add(this.cursorMesh);
  }

  bindInput() {
    const cv = this.renderer.domElement;
    let down = null;
    let pointers = 0;
    cv.addEventListener('pointerdown', e => {
      pointers++;
      down = pointers === 1 && e.button === 0 ? { x: e.clientX, y: e.clientY } : null;
      this.el.focus({ preventScroll: true });
    });
    const up = e => {
      pointers = Math.max(0, pointers - 1);
      if (e.type === 'pointerup' && down && this.scene && Math.hypot(e.clientX - down.x, e.clientY - down.y) < TAP_PX) {
        const hit = this.hitTest(e.clientX, e.clientY);  // a click or a tap, not a drag: explain the cell
        if (hit) { const t = this.cellInfo(hit.id, hit.r, hit.c); this.select(t.id, t.row, t.col, { how: 'click' }); }
      }
      down = null;
    };
    cv.addEventListener('pointerup', up); cv.addEventListener('pointercancel', up);
    cv.addEventListener('pointermove', e => {
      if (down || !this.scene || e.pointerType === 'touch') return;
      const hit = this.hitTest(e.clientX, e.clientY);
      if (hit && (!this.cursor || hit.id !== this.cursor.id || hit.r !== this.cursor.r || hit.c !== this.cursor.c)) this.setCursor(hit);
    });
    this.el.addEventListener('keydown', e => this.onKey(e));
    document.addEventListener('keydown', e => {
      if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
      const t = e.target;
      if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
      const k = e.key.toLowerCase();
      if (k === 'o') { this.showOverview(); e.preventDefault(); } else if (k === 'c') { this.returnToStep(); e.preventDefault(); } else if (k === 'r') { this.replay(); e.preventDefault(); }
    });
  }

  onKey(e) {
    if (!this.scene) return;
    const order = [...this.blockById.keys()], cur = this.cursor;
    const move = (cell) => { e.preventDefault(); e.stopPropagation(); this.setCursor(cell); };
    if (e.key === 'Enter' && cur) {
      e.preventDefault();
      const t = this.cellInfo(cur.id, cur.r, cur.c);
      this.select(t.id, t.row, t.col, { how: 'click', focusPanel: true });
      return;
    }
    if (e.key === 'Escape' && this.explained) { this.closeExplanation(); return; }
    if (e.key === 'Escape') { this.cursor = null; this.inspector.hidden = true; this.legend.hidden = true; this.cursorMesh.visible = false; this.invalidate(); return; }
    if (e.key === 'Tab') {
      const i = cur ? order.indexOf(cur.id) : -1, j = i + (e.shiftKey ? -1 : 1);
      if (j < 0 || j >= order.length) { this.cursor = null; this.cursorMesh.visible = false; this.invalidate(); return; }  // leave the stage
      return move({ id: order[j], r: 0, c: 0 });
    }
    const d = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] }[e.key];
    if (d) {
      if (!cur) return move({ id: order[0], r: 0, c: 0 });
      const b = this.blockById.get(cur.id), r = cur.r + d[0], c = cur.c + d[1];
      if (r >= 0 && r < b.rows && c >= 0 && c < b.cols) return move({ id: cur.id, r, c });
      const next = this.neighbour(b, d);
      if (next) return move(next);
      e.preventDefault(); e.stopPropagation();
    } else if (e.key === 'Home' && cur) move({ id: cur.id, r: 0, c: 0 });
    else if (e.key === 'End' && cur) { const b = this.blockById.get(cur.id); move({ id: cur.id, r: b.rows - 1, c: b.cols - 1 }); }
  }

  /** The nearest block beyond an edge of b in direction d (spatially), entering at the near edge. */
  neighbour(b, [dr, dc]) {
    let best = null, bestD = Infinity;
    const cx = b.x + b.w / 2, cy = b.y - b.rows / 2;
    for (const o of this.blockById.values()) {
      if (o === b) continue;
      const ox = o.x + o.w / 2, oy = o.y - o.rows / 2;
      const ahead = dc ? (ox - cx) * dc > 0 : (dr > 0 ? oy < cy : oy > cy);
      if (!ahead) continue;
      const dist = Math.abs(ox - cx) * (dc ? 1 : 3) + Math.abs(oy - cy) * (dc ? 3 : 1);
      if (dist < bestD) { bestD = dist; best = o; }
    }
    if (!best) return null;
    const r = dr ? (dr > 0 ? 0 : best.rows - 1) : Math.min(this.cursor.r, best.rows - 1);
    const c = dc ? (dc > 0 ? 0 : best.cols - 1) : Math.min(this.cursor.c, best.cols - 1);
    return { id: best.id, r, c };
  }

  /** Screen (client) position of a cell's centre, tensor coordinates. */
  project(id, row, col) {
    const cell = this.resolve(id, row, col);
    if (!cell) return null;
    const p = this.cellCentre(this.blockById.get(cell.id), cell.r, cell.c).project(this.camera);
    const rect = this.renderer.domElement.getBoundingClientRect();
    return { x: rect.left + (p.x + 1) / 2 * rect.width, y: rect.top + (1 - p.y) / 2 * rect.height, visible: Math.abs(p.x) <= 1 && Math.abs(p.y) <= 1 && p.z < 1 };
  }

  framing(ids) {
    const rect = this.renderer.domElement.getBoundingClientRect(), W = rect.width, H = rect.height;
    const px = v => { const p = v.clone().project(this.camera); return [(p.x + 1) / 2 * W, (1 - p.y) / 2 * H]; };
    let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
    const sizes = [];
    for (const id of ids) {
      const b = this.blockById.get(id);
      if (!b) continue;
      for (const [x, y] of [[b.x, b.y], [b.x + b.w, b.y], [b.x, b.y - b.rows], [b.x + b.w, b.y - b.rows]].map(([x, y]) => px(new THREE.Vector3(x, y, 0)))) {
        x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y);
      }
      // a cell's on-screen size at the block's middle: the geometric mean of its projected pitch
      const r = Math.floor(b.rows / 2), c = Math.floor(b.cols / 2), c2 = c + 1 < b.cols ? c + 1 : c - 1, r2 = r + 1 < b.rows ? r + 1 : r - 1;
      const p = px(this.cellCentre(b, r, c)), pc = c2 >= 0 ? px(this.cellCentre(b, r, c2)) : null, pr = r2 >= 0 ? px(this.cellCentre(b, r2, c)) : null;
      const dx = pc ? Math.hypot(pc[0] - p[0], pc[1] - p[1]) : null, dy = pr ? Math.hypot(pr[0] - p[0], pr[1] - p[1]) : null;
      const size = dx && dy ? Math.sqrt(dx * dy) : (dx || dy || 0);
      sizes.push([size, b.rows * b.cols]);
    }
    sizes.sort((a, b) => a[0] - b[0]);
    const total = sizes.reduce((s, [, n]) => s + n, 0);
    let acc = 0, median = 0;
    for (const [size, n] of sizes) { acc += n; if (acc >= total / 2) { median = size; break; } }
    const cx0 = Math.max(0, x0), cx1 = Math.min(W, x1), cy0 = Math.max(0, y0), cy1 = Math.min(H, y1);
    const w = Math.max(0, cx1 - cx0), h = Math.max(0, cy1 - cy0);
    const cover = this.covered();
    return { stageWidth: W, stageHeight: H, covered: cover.top + cover.bottom, areaShare: w * h / (W * H), widthShare: w / W, heightShare: h / H, medianCellPx: median,
      clipped: x0 < -1 || y0 < -1 || x1 > W + 1 || y1 > H + 1 };
  }

  inspect(id, row, col) {
    const cell = this.resolve(id, row, col);
    if (!cell) return null;
    this.setCursor(cell);
    return { ...this.lastInfo, text: this.inspector.textContent };
  }

  // ---------- explaining a cell ----------
  /** {row, col} of a tensor index in the inspector's convention (a vector as the stage lays it). */
  coords(id, idx) {
    if (idx.length === 2) return { row: idx[0], col: idx[1] };
    if (idx.length === 0) return { row: 0, col: 0 };
    const b = this.blockById.get(id);
    return b && b.rows !== 1 ? { row: idx[0], col: 0 } : { row: 0, col: idx[0] };
  }

  /** Where one cell comes from (tensor coordinates; head slices allowed); {error} for a bad cell. */
  explain(id, row, col) {
    if (!this.scene) return { error: 'nothing is drawn yet' };
    return explainCell(this.tensors, String(id), Number(row), Number(col), {
      coords: (i, idx) => this.coords(i, idx),
      token: (i, v) => { const b = this.blockById.get(i); return b?.value_axis ? this.scene.axes[b.value_axis]?.[v] : undefined; },
    });
  }

  /** The block a tensor is drawn in: its own, or for a head slice the block it is cut from. */
  drawnIn(id) {
    const b = this.blockById.get(id);
    if (b) return { block: b, slice: null };
    const s = this.scene.slices.find(x => x.id === id);
    return s ? { block: this.blockById.get(s.of), slice: s } : { block: null, slice: null };
  }

  /** Opens the panel on a cell and lights its inputs. how: click | link | input (a step back to an input
   *  cell, from the panel) | back (along the breadcrumb). Returns the explanation, or {error}. */
  select(id, row, col, { how = 'click', focusPanel = false } = {}) {
    const ex = this.explain(id, row, col);
    if (ex.error) {
      this.message(`Cannot explain that cell: ${ex.error}.`);
      document.dispatchEvent(new CustomEvent('anatomy:explain', { detail: this.explained ? this.cellOf(this.explained) : null }));
      return ex;
    }
    const here = { id: ex.id, row: ex.row, col: ex.col, text: `${this.labelOf(ex.id)} [${ex.index.join(', ')}]` };
    if (how === 'input') { this.trail = [...this.trail.slice(0, this.trailIndex + 1), here]; this.trailIndex = this.trail.length - 1; }
    else if (how !== 'back') { this.trail = [here]; this.trailIndex = 0; }
    this.explained = ex;
    this.paintExplanation();
    const d = this.resolve(ex.id, ex.row, ex.col);
    if (d) { this.cursor = d; this.refreshInspector(); }
    if (how !== 'click' && !this.project(ex.id, ex.row, ex.col)?.visible) this.frameExplanation();
    this.panel.show(this.panelModel(ex));
    this.fitPanel();
    if (focusPanel) this.panel.focus();
    document.dispatchEvent(new CustomEvent('anatomy:explain', { detail: this.cellOf(ex) }));
    this.markInput();
    return ex;
  }

  cellOf(ex) { return { id: ex.id, row: ex.row, col: ex.col }; }

  /** The same cell explained again, for a new trace (or closed, with a message, if it has no such cell). */
  reexplain() {
    const { id, row, col } = this.explained, ex = this.explain(id, row, col);
    if (ex.error) { this.closeExplanation({ restore: false }); this.message(`The explained cell is gone with the new input: ${ex.error}.`); return; }
    this.explained = ex;
    this.trail = [{ id, row, col, text: `${this.labelOf(id)} [${ex.index.join(', ')}]` }]; this.trailIndex = 0;
    this.paintExplanation();
    this.panel.show(this.panelModel(ex));
  }

  /** Lights exactly the explained cell's inputs (one or two rectangles per block they sit in), marks the
   *  cell itself and dims everything else. */
  paintExplanation() {
    const ex = this.explained;
    if (this.anim) { this.tweens.delete(this.anim); this.anim = null; }
    const groups = new Map();
    for (const inp of ex.inputs) {
      const d = this.resolve(inp.id, inp.row, inp.col);
      if (!d) continue;
      if (!groups.has(d.id)) groups.set(d.id, []);
      groups.get(d.id).push([d.r, d.c]);
    }
    const target = this.resolve(ex.id, ex.row, ex.col);
    for (const id of this.blockById.keys()) {
      const cells = groups.get(id);
      let rects = cells ? rectsCovering(cells) : [];
      if (rects.length > 2) {  // more than the state texture holds: light their bounding box (not exact)
        console.warn(`stage: ${rects.length} rectangles of inputs in one block; lighting their bounding box`);
        rects = [[Math.min(...cells.map(x => x[0])), Math.max(...cells.map(x => x[0])), Math.min(...cells.map(x => x[1])), Math.max(...cells.map(x => x[1]))]];
      }
      this.cells.set(id, { dim: cells || id === target?.id ? 1 : DIM_UNRELATED, focus: rects, reveal: 1e9, glow: 0, drop: 0, t: 1, fromZero: false });
    }
    this.cells.setTarget(target);
    this.invalidate();
  }

  /** Closes the panel; restore: the step's own highlight comes back. */
  closeExplanation({ restore = true } = {}) {
    if (!this.explained) return;
    this.explained = null; this.trail = []; this.trailIndex = -1;
    this.panel.hide();
    this.cells?.setTarget(null);
    if (restore && this.step) this.restyle();
    document.dispatchEvent(new CustomEvent('anatomy:explain', { detail: null }));
    this.invalidate();
  }

  /** Where the panel is a sheet under the stage (a phone), it takes the room below the stage, no more. */
  fitPanel() {
    const el = this.panel?.el;
    if (!el) return;
    const sheet = getComputedStyle(el).getPropertyValue('--sheet').trim() === '1';  // set by stage.css
    el.style.maxHeight = sheet ? `${Math.max(160, window.innerHeight - this.el.getBoundingClientRect().bottom)}px` : '';
  }

  /** Moves the camera to the explained cell's block and the blocks of its inputs. */
  frameExplanation() {
    const ex = this.explained, ids = new Set([this.drawnIn(ex.id).block?.id]);
    for (const i of ex.inputs) ids.add(this.drawnIn(i.id).block?.id);
    let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
    for (const id of ids) {
      const b = this.blockById.get(id);
      if (!b) continue;
      x0 = Math.min(x0, b.x); x1 = Math.max(x1, b.x + b.w); y0 = Math.min(y0, b.y - b.rows); y1 = Math.max(y1, b.y + 2.2);
    }
    if (!Number.isFinite(x0)) return;
    const k = this.rig.key, box = [x0, x1, y0, y1];
    const view = { box, target: [(x0 + x1) / 2, (y0 + y1) / 2, 0], azimuth: k.azimuth, elevation: k.elevation, margin: 1.08 };
    this.rig.moveTo(this.keyframe(view), this.reduced ? 0 : MOVE_MS);
  }

  /** Hovering an input in the panel moves the stage's cursor (and inspector) to it. */
  hoverInput(cell) {
    if (!cell) return;
    const d = this.resolve(cell.id, cell.row, cell.col);
    if (d) this.setCursor(d);
  }

  labelOf(id) {
    const { block, slice } = this.drawnIn(id);
    if (!block) return id;
    return slice ? `${block.label} (columns ${slice.col_offset}…${slice.col_offset + slice.cols - 1})` : block.label;
  }

  /** What the panel shows for an explanation (it renders, the stage decides). */
  panelModel(ex) {
    const { block, slice } = this.drawnIn(ex.id), station = this.scene.stations.find(s => s.id === block?.station);
    const d = this.resolve(ex.id, ex.row, ex.col), info = d ? this.cellInfo(d.id, d.r, d.c) : {};
    const axisWords = [];
    if (info.rowToken !== undefined) axisWords.push(`row ${ex.index[0]}: ${info.rowName ?? `token “${info.rowToken}”`}`);
    if (info.colToken !== undefined) axisWords.push(`column ${ex.index[1]} is “${info.colToken}”`);
    if (info.tokenName !== undefined) axisWords.push(`${ex.value} is the id of “${info.tokenName}”`);
    const lines = [`${block?.description || ex.id}${station ? ` — ${station.title}` : ''}`,
      `${ex.id} · ${ex.op}${slice ? ` (columns ${slice.col_offset}… of ${slice.of})` : ''}${axisWords.length ? ` · ${axisWords.join(', ')}` : ''}`];
    const groups = [];
    for (const inp of ex.inputs) {
      let g = groups.find(x => x.id === inp.id && x.arg === inp.arg);
      if (!g) { g = { id: inp.id, arg: inp.arg, label: this.labelOf(inp.id), cells: [] }; groups.push(g); }
      g.cells.push(inp);
    }
    for (const g of groups) {
      const idx = g.cells.map(c => c.index), rank = idx[0].length, rows = new Set(idx.map(i => i[0])), cols = new Set(idx.map(i => i[1]));
      const { block: gb } = this.drawnIn(g.id), tokens = gb?.row_axis ? this.scene.axes[gb.row_axis] : null;
      const tok = r => (tokens?.[r] !== undefined && gb && !gb.transposed ? ` (“${tokens[r]}”)` : '');
      if (rank === 0) g.where = 'the scalar';
      else if (rank === 1) g.where = idx.length === 1 ? `entry ${idx[0][0]}${tok(idx[0][0])}` : `${idx.length} entries`;
      else if (idx.length === 1) g.where = `cell [${idx[0].join(', ')}]${tok(idx[0][0])}`;
      else if (rows.size === 1) g.where = `row ${idx[0][0]}${tok(idx[0][0])}, ${idx.length} cells`;
      else if (cols.size === 1) g.where = `column ${idx[0][1]}, ${idx.length} cells`;
      else g.where = `${idx.length} cells`;
      for (const c of g.cells) {
        c.text = rank === 0 ? '·' : rank === 1 ? String(c.index[0]) : rows.size === 1 && idx.length > 1 ? String(c.index[1])
          : cols.size === 1 && idx.length > 1 ? String(c.index[0]) : c.index.join(',');
      }
    }
    const leaf = ex.op === 'Parameter' ? `A parameter: learned in training, the same for every input.${info.rowToken !== undefined ? ` Row ${ex.index[0]} of this table belongs to the token “${info.rowToken}”.` : ''}`
      : `A constant of the trace: set, not computed from other cells.${info.tokenName !== undefined ? ` ${ex.value} is the id of the token “${info.tokenName}”.` : ''}`;
    const cmp = this.comparing && !block?.param ? { a: this.trace.input.number, input: this.compareTrace.input.number,
      value: otherValue(this.compareTensors.get(ex.id), ex.row, ex.col) } : null;
    const title = this.labelOf(ex.id);
    return { ex, title, titleText: title.replace(/[\^_]\{([^}]*)\}/g, '$1'), lines, groups, top: ex.top || [], leaf,
      trail: this.trail, trailIndex: this.trailIndex, compare: cmp, katex: window.katex };
  }

  /** Every lit cell as the state texture says (tensor coordinates, head slices as their block's cells):
   *  blocks with a focus give the cells inside their rectangles; a block without one is lit whole
   *  when fully bright ({id, all: true}). The marked cell is `target`. */
  lit() {
    const cells = [];
    for (const [id, b] of this.blockById) {
      if (!(this.cells.get(id, 'focusOn') > 0)) { if (this.cells.get(id, 'dim') >= 0.999) cells.push({ id, all: true }); continue; }
      for (const [r0, r1, c0, c1] of this.cells.focusRects(id)) {
        for (let r = Math.max(0, r0); r <= Math.min(r1, b.rows - 1); r++) {
          for (let c = Math.max(0, c0); c <= Math.min(c1, b.cols - 1); c++) { const t = tensorIndex(b, r, c); cells.push({ id, row: t.row, col: t.col }); }
        }
      }
    }
    const u = this.cells.material.uniforms.uTarget.value, tb = [...this.blockById.values()][u.x];
    const target = u.x >= 0 && tb ? { id: tb.id, ...tensorIndex(tb, u.y, u.z) } : null;
    return { cells, target };
  }

  /** What the GPU draws at a cell: {value, absent, masked} (compare mode: the difference). */
  drawnCell(id, row, col) {
    const c = this.resolve(id, row, col);
    if (!c) return null;
    const v = this.cells.drawnValue(c.id, c.r, c.c);
    return { value: v, absent: v >= ABSENT * 0.1, masked: v <= -ABSENT * 0.1 };
  }

  // ---------- messages, compare banner, exports ----------
  message(text) {
    const el = this.messageEl;
    el.textContent = text; el.hidden = false;
    clearTimeout(this.messageTimer);
    this.messageTimer = setTimeout(() => { el.hidden = true; }, 12000);
  }

  refreshBanner() {
    const el = this.banner;
    if (!this.compareTrace || !this.trace) { el.hidden = true; el.replaceChildren(); return; }
    if (!this.comparing) {
      el.textContent = `Pinned ${this.compareTrace.input.number}: type another input to see the difference.`;
    } else {
      const s = compareSummary(this.scene, this.trace, this.compareTrace);
      el.replaceChildren(Object.assign(document.createElement('strong'), { textContent: `Colours: ${s.a} − ${s.b}` }),
        ' (activations; parameters as they are)', ...s.notes.map(n => Object.assign(document.createElement('div'), { textContent: n })));
    }
    el.hidden = false;
  }

  /** A block (a head slice: its block) as CSV text. */
  csv(id) {
    const { block } = this.drawnIn(id);
    if (!block) return null;
    return blockCsv(this.scene, block, this.tensors.get(block.id));
  }

  downloadCsv(id = this.explained?.id || this.cursor?.id) {
    const { block } = id ? this.drawnIn(id) : { block: null };
    if (!block) { this.message('Point at a block (or explain a cell) first: the CSV is of that block.'); return false; }
    download(fileName(this.trace?.input?.number, block.id, 'csv'), this.csv(block.id), 'text/csv');
    return true;
  }

  /** The stage as a PNG data URL, at the canvas's size. */
  png() { return canvasPng(this.renderer, this.world, this.camera); }

  downloadPng() { download(fileName(this.trace?.input?.number, null, 'png'), dataUrlBlob(this.png())); }

  async copyFormula() {
    const f = this.explained?.formula;
    if (!f) return false;
    if (await copyText(f)) { this.panel.flash('.explain-copy', 'Copied'); return true; }
    this.panel.showCopyFallback(f);
    return false;
  }
}

const fmtValue = v => (v === -Infinity ? '−∞' : formatNumber(v, Number.isInteger(v) ? 'text' : 'sig5'));
