// The stage: draws the scene the server computed (trace.scene: blocks, labels, connectors, colours,
// each step's subject and view) with the trace's and the weights' numbers, renders on demand, and
// answers hover, keyboard and tour events. It knows nothing about the model itself: what a block is,
// where it sits and what each step shows all come from the scene (model/scene.py).
import * as THREE from 'three';
import { CellField, colX, colAt } from './cells.js';
import { buildLabels, styleLabels } from './labels.js';
import { buildConnectors, restingOpacity } from './connectors.js';
import { CameraRig, ease } from './camera.js';
import { drawnValues, traceTensors } from './data.js';
import { cellInfo, inspectorLines, legendOf } from './inspector.js';
import { ANIMATIONS } from './animations.js';

const MOVE_MS = 650, VALUE_MS = 700, DIM = 0.32, DIM_COMPUTED = 0.16;

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
    this.buildOverlay();
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
    this.cells.build(blocks, b => drawnValues(b, tensors.get(b.id)));
    this.scene = scene; this.tensors = tensors; this.trace = trace;
    this.blockById = new Map(blocks.map(b => [b.id, b]));
    this.stats.blocks = blocks.length; this.stats.cellsDrawn = this.cells.count;
    if (this.cursor && !this.blockById.has(this.cursor.id)) this.cursor = null;
    if (this.cursor) this.clampCursor();
    this.rebuildDecor();
    this.applyStep({ step: this.stepNo }, { cut: true, animate: false, keepCamera: !first });
    if (!first) {
      this.cells.setAll({ t: 0 });
      if (this.decor) this.decor.visible = false;
      this.tween(VALUE_MS, e => this.cells.setAll({ t: e }), () => { if (this.decor) this.decor.visible = true; this.refreshInspector(); });
      this.rig.moveTo(this.keyframe(this.step.view), this.reduced ? 0 : MOVE_MS);
    }
    this.markInput(t0);
    this.refreshInspector();
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
  keyframe(view) { return this.rig.frame(view, this.camera.aspect); }
  stepOf(n) { return this.scene?.steps.find(s => s.step === n) || this.scene?.steps[0] || null; }

  showOverview() { if (this.scene) { this.markInput(); this.rig.moveTo(this.keyframe(this.scene.overview), this.reduced ? 0 : MOVE_MS); } }
  returnToStep() { if (this.step) { this.markInput(); this.rig.moveTo(this.keyframe(this.step.view), this.reduced ? 0 : MOVE_MS); } }
  replay() { if (this.step) { this.markInput(); this.runAnimation(); } }

  /** detail: {step}; the scene says what the step lights, frames and animates. */
  applyStep(detail, { cut = false, animate = true, keepCamera = false } = {}) {
    this.stepNo = Number(detail?.step) || this.stepNo;
    if (!this.scene) return;
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
    this.cells.setAll({ reveal: 1e9, focus: null, drop: 0, glow: 0, fromZero: false });
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
    el.replaceChildren(...lines.map((l, i) => { const d = document.createElement('div'); d.textContent = l; if (!i) d.className = 'stage-inspector-title'; return d; }));
    Object.assign(el.dataset, { id, row: String(info.row), col: String(info.col), value: String(info.value), drawnRow: String(r), drawnCol: String(c) });
    el.hidden = false;
    this.showLegend(b);
    this.cursorMesh.position.copy(this.cellCentre(b, r, c));
    this.cursorMesh.visible = true;
    this.lastInfo = info;
  }

  showLegend(b) {
    const lg = legendOf(this.scene, b, this.cells.entry(b.id).scale);
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
    help.textContent = 'O whole machine · C step view · R replay';
    help.title = 'drag: orbit · right-drag: pan · wheel: zoom · Tab and arrow keys: move a cell cursor · Esc: hide it';
    this.el.append(el, legend, help);
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
    cv.addEventListener('pointerdown', e => { down = { x: e.clientX, y: e.clientY }; this.el.focus({ preventScroll: true }); });
    cv.addEventListener('pointerup', () => { down = null; });
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
    return { stageWidth: W, stageHeight: H, areaShare: w * h / (W * H), widthShare: w / W, heightShare: h / H, medianCellPx: median,
      clipped: x0 < -1 || y0 < -1 || x1 > W + 1 || y1 > H + 1 };
  }

  inspect(id, row, col) {
    const cell = this.resolve(id, row, col);
    if (!cell) return null;
    this.setCursor(cell);
    return { ...this.lastInfo, text: this.inspector.textContent };
  }
}
