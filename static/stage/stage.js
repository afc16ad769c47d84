// The stage: builds the scene from the layout and the numbers, renders on demand, and answers
// hover, keyboard and tour events. Rendering only: where things go is layout.js's job.
import * as THREE from 'three';
import { computeLayout, colX, colAt, boundsOf, matches, HEAD_GAP, STATION_GAP } from './layout.js';
import { CellBlock, MAX_HEIGHT } from './cells.js';
import { buildLabels, labelOf } from './labels.js';
import { buildConnectors } from './connectors.js';
import { CameraRig, ease } from './camera.js';
import { drawnValues, tensorIndex, traceTensors } from './data.js';
import { inspectorLines, rowStats } from './inspector.js';
import { viewOf, STEPS } from './steps.js';
import { ANIMATIONS } from './animations.js';

const BG = 0x16181d;
const MOVE_MS = 650, VALUE_MS = 700;

export class Stage {
  constructor(container) {
    this.el = container;
    this.reduced = matchMedia('(prefers-reduced-motion: reduce)').matches;
    matchMedia('(prefers-reduced-motion: reduce)').addEventListener?.('change', e => { this.reduced = e.matches; });
    this.renderer = new THREE.WebGLRenderer({ antialias: true, powerPreference: 'high-performance' });
    this.renderer.setPixelRatio(Math.min(devicePixelRatio || 1, 2));
    this.renderer.setClearColor(BG);
    this.renderer.info.autoReset = true;
    const cv = this.renderer.domElement;
    Object.assign(cv.style, { display: 'block', width: '100%', height: '100%', touchAction: 'none', outline: 'none' });
    cv.setAttribute('aria-hidden', 'true');
    container.appendChild(cv);
    if (getComputedStyle(container).position === 'static') container.style.position = 'relative';
    this.scene = new THREE.Scene();
    this.camera = new THREE.PerspectiveCamera(30, 1, 1, 10000);
    this.rig = new CameraRig(this.camera, cv, user => { if (user) this.markInput(); this.invalidate(); });
    this.blocks = new Map();       // id → CellBlock
    this.tensors = new Map();      // id → {shape, data, op, inputs}
    this.tweens = new Set();
    this.stats = { drawCalls: 0, cellsDrawn: 0, cellsSubmitted: 0, blocks: 0, lastFrameMs: 0, lastInputToRedrawMs: 0,
      lastHitTestMs: 0, frames: 0, triangles: 0 };
    this.step = STEPS[0]; this.highlight = [];
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
    this.submitted = 0;
    this.renderer.render(this.scene, this.camera);
    const info = this.renderer.info.render;
    const t1 = performance.now();
    Object.assign(this.stats, { drawCalls: info.calls, triangles: info.triangles, lastFrameMs: t1 - t0, frames: this.stats.frames + 1, cellsSubmitted: this.submitted });
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

  /** A new trace: values animate to the new numbers; blocks whose shape changed re-lay smoothly. */
  setTrace(trace) {
    const t0 = performance.now();
    const nodes = traceTensors(trace);
    if (!nodes.size) throw new Error('trace has no nodes');
    const tensors = new Map(nodes);
    for (const [id, p] of this.params) tensors.set(id, { id, shape: p.shape, data: p.data });
    const layout = computeLayout(tensors);
    const first = !this.layout;
    const moves = [];
    for (const id of layout.order) {
      const b = layout.blocks.get(id), values = drawnValues(id, tensors.get(id));
      let cb = this.blocks.get(id);
      if (!cb) {
        cb = new CellBlock(b, values, BG);
        cb.mesh.onBeforeRender = () => { this.submitted += cb.count; };
        this.blocks.set(id, cb); this.scene.add(cb.mesh);
        cb.mesh.position.set(b.x, b.y, 0);
        if (!first) moves.push(cb);
        continue;
      }
      const old = cb.block;
      if (old.rows !== b.rows || old.cols !== b.cols) {
        const oldVals = cb.values, oc = old.cols, or = old.rows;
        cb.setShape(b, values, (r, c) => (r < or && c < oc ? oldVals[r * oc + c] : 0));
      } else if (!(tensors.get(id).data === this.tensors.get(id)?.data)) {
        cb.block = b; cb.setValues(values);
      } else cb.block = b;
      moves.push(cb);
    }
    this.tensors = tensors; this.trace = trace; this.layout = layout;
    this.stats.blocks = this.blocks.size;
    this.stats.cellsDrawn = [...this.blocks.values()].reduce((s, cb) => s + cb.count, 0);
    const relaid = moves.filter(cb => cb.mesh.position.x !== cb.block.x || cb.mesh.position.y !== cb.block.y);
    const from = relaid.map(cb => cb.mesh.position.clone());
    if (!first) {
      for (const cb of moves) cb.u.uT.value = 0;
      if (this.decor) this.decor.visible = false;
      this.tween(VALUE_MS, e => {
        for (const cb of moves) cb.u.uT.value = e;
        relaid.forEach((cb, i) => cb.mesh.position.set(from[i].x + (cb.block.x - from[i].x) * e, from[i].y + (cb.block.y - from[i].y) * e, 0));
      }, () => { this.rebuildDecor(); this.refreshInspector(); });
    } else this.rebuildDecor();
    this.markInput(t0);
    if (this.cursor && !this.blocks.has(this.cursor.id)) this.cursor = null;
    if (this.cursor) this.clampCursor();
    this.refreshInspector();
    if (first) { this.applyStep(this.step, { cut: true, animate: false }); }
    this.invalidate();
  }

  rebuildDecor() {
    if (this.decor) { this.scene.remove(this.decor); this.decor.traverse(o => { o.geometry?.dispose(); o.material?.map?.dispose(); o.material?.dispose(); }); }
    this.decor = new THREE.Group();
    this.labels = buildLabels(this.labelList());
    this.connectors = buildConnectors(this.layout, this.tensors);
    this.decor.add(this.labels, this.connectors);
    this.scene.add(this.decor);
    this.invalidate();
  }

  // Every label keeps at least a legible line height on screen (labels.js grows it up to a limit and
  // hides it beyond): block names need ~15 px, station titles ~22 px; a head's labels may not grow
  // past the 2-cell gap to the next head block.
  labelList() {
    const out = [], L = this.layout;
    for (const b of L.blocks.values()) {
      const small = b.rows === 1 && b.cols === 1, head = /\.h\d\./.test(b.id);
      out.push({ text: labelOf(b.id), x: b.x, y: b.y + 0.45, size: small ? 1.1 : 1.5,
        maxWidth: head ? b.w + 1.6 : Math.max(b.w + 3, 5), color: b.param ? '#c9d3e6' : '#ece8df',
        minPx: 15, maxScale: 2.4, room: head ? b.w + 1.7 : Math.max(b.w + 3.5, 8) });
    }
    // titles spill outward (the encoder's to the left, the decoder's to the right) when they grow
    for (const s of L.stations) {
      const left = s.side === 'src';
      out.push({ text: s.title, x: left ? s.x + s.w : s.x, y: s.y + STATION_GAP / 2, anchor: left ? 'right' : 'left', baseline: 'middle',
        size: 6.5, maxWidth: s.w, weight: 700, color: '#f1c27d', minPx: 22, maxScale: 8, maxPx: 34 });
    }
    const tokenLabel = { size: 0.85, color: '#ffe9a8', baseline: 'middle', minPx: 14, maxScale: 2.5 };
    const rowsOf = (id, toks) => { const b = L.blocks.get(id); if (b) toks.forEach((t, r) => out.push({ ...tokenLabel, text: t, x: b.x - 0.6, y: b.y - r - 0.5, anchor: 'right' })); };
    rowsOf('src.ids', this.trace.source_tokens || []); rowsOf('tgt.ids', this.trace.target_tokens || []);
    const tok = L.blocks.get('out.tokens');
    if (tok) (this.trace.output_tokens || []).forEach((t, r) => out.push({ ...tokenLabel, text: t, x: tok.x + tok.w + 0.6, y: tok.y - r - 0.5 }));
    return out;
  }

  // ---------- camera and tour ----------
  keyframe(viewName) {
    const v = viewOf(viewName);
    return this.rig.frame(boundsOf(this.layout, v.frame), v.azimuth, v.elevation, this.camera.aspect);
  }

  showOverview() { if (this.layout) { this.markInput(); this.rig.moveTo(this.keyframe('overview'), this.reduced ? 0 : MOVE_MS); } }
  returnToStep() { if (this.layout) { this.markInput(); this.rig.moveTo(this.keyframe(this.step.view), this.reduced ? 0 : MOVE_MS); } }
  replay() { this.markInput(); this.runAnimation(this.step.animation); }

  /** step: {step, view, highlight, animation}; unknown views fall back to the overview. */
  applyStep(detail, { cut = false, animate = true } = {}) {
    const base = STEPS.find(s => s.step === Number(detail.step)) || {};
    this.step = { ...base, ...detail, view: detail.view || base.view || 'overview', animation: detail.animation || base.animation || 'none' };
    this.highlight = (detail.highlight && detail.highlight.length ? detail.highlight : base.highlight) || [];
    if (!this.layout) return;
    this.markInput();
    this.rig.moveTo(this.keyframe(this.step.view), cut || this.reduced ? 0 : MOVE_MS);
    this.resetEffects();
    this.cursor = null; this.inspector.hidden = true; this.cursorMesh.visible = false;  // a new step starts clean
    this.applyHighlight();
    if (animate) this.runAnimation(this.step.animation); else ANIMATIONS[this.step.animation]?.(this, true);
  }

  applyHighlight() {
    const hl = this.highlight, paramsStep = this.step.animation === 'parameters';
    const from = new Map([...this.blocks].map(([id, cb]) => [id, cb.u.uDim.value]));
    const to = new Map();
    for (const [id, cb] of this.blocks) {
      let d = !hl.length || matches(id, hl, this.layout) ? 1 : 0.32;
      if (paramsStep && !cb.block.param) d = Math.min(d, 0.16);
      to.set(id, d);
    }
    this.tween(300, e => { for (const [id, cb] of this.blocks) cb.u.uDim.value = from.get(id) + (to.get(id) - from.get(id)) * e; });
  }

  resetEffects() {
    if (this.anim) { this.tweens.delete(this.anim); this.anim = null; }
    for (const cb of this.blocks.values()) { const u = cb.u; u.uReveal.value = 1e9; u.uFocusOn.value = 0; u.uDrop.value = 0; u.uGlow.value = 0; }
    if (this.connectors) for (const c of this.connectors.children) { c.geometry.setDrawRange(0, Infinity); c.material.opacity = c.name === 'thread' ? 0.55 : 0.95; }
  }

  runAnimation(name) {
    this.resetEffects();
    const a = ANIMATIONS[name];
    if (!a) { this.invalidate(); return; }
    if (this.reduced) { a(this, true); this.invalidate(); return; }
    a(this, false);
  }

  block(id) { return this.blocks.get(id); }

  // ---------- hit-testing and the inspector ----------
  /** Screen point → {id, r, c} in drawn coordinates: the ray meets the z = 0 plane of the blocks,
   *  each block's rectangle is tested and the cell is computed arithmetically (no per-cell raycast). */
  hitTest(clientX, clientY) {
    const t0 = performance.now();
    const rect = this.renderer.domElement.getBoundingClientRect();
    const ndc = new THREE.Vector2(((clientX - rect.left) / rect.width) * 2 - 1, -((clientY - rect.top) / rect.height) * 2 + 1);
    this._ray = this._ray || new THREE.Raycaster();
    this._ray.setFromCamera(ndc, this.camera);
    const p = new THREE.Vector3();
    let hit = null;
    if (this._ray.ray.intersectPlane(new THREE.Plane(new THREE.Vector3(0, 0, 1), 0), p)) {
      for (const cb of this.blocks.values()) {
        const b = cb.block, x = cb.mesh.position.x, y = cb.mesh.position.y;
        if (p.x < x || p.x >= x + b.w || p.y > y || p.y <= y - b.rows) continue;
        const c = colAt(b, p.x - x), r = Math.floor(y - p.y);
        if (c >= 0 && r >= 0 && r < b.rows) { hit = { id: b.id, r, c }; break; }
      }
    }
    this.stats.lastHitTestMs = performance.now() - t0;
    return hit;
  }

  /** Everything the inspector says about a drawn cell, in the tensor's own coordinates. */
  cellInfo(id, r, c) {
    const cb = this.blocks.get(id), t = this.tensors.get(id);
    if (!cb || !t) return null;
    const b = cb.block, { row, col, flat } = tensorIndex(b, r, c);
    const value = t.data[flat];
    const info = { id, shape: t.shape, row, col, value, op: t.op || 'Parameter' };
    if (/\.scaled$/.test(id)) info.raw = this.tensors.get(id.replace('.scaled', '.emb')).data[flat];
    if (/\.(sum|ln)$/.test(id)) { const s = rowStats(t.data, b.cols, r); info.rowMean = s.mean; info.rowStd = s.std; }
    if (/\.h\d\.(scores|masked|weights)$/.test(id) && id.startsWith('dec.') && id.includes('.self.')) {
      const mask = this.tensors.get('dec.mask'); info.masked = mask ? !mask.data[row * t.shape[1] + col] : false;
    } else if (/\.h\d\.(scores|weights)$/.test(id)) info.masked = false;
    if (/\.(ids)$|^out\.tokens$/.test(id)) info.tokenName = this.tokenName(value);
    if (b.gapEvery && /\.[qkv]$/.test(id)) info.alias = `${id}.h${Math.floor(c / 8)}[${row}, ${c % 8}]`;
    if (id.endsWith('.W_2')) info.note = 'drawn transposed: this cell is W₂[row, column] shown at (column, row)';
    if (cb.u.uDrop.value > 0) info.note = 'dropout mask shown for illustration (training only); the value is the inference value';
    return info;
  }

  tokenName(id) {
    const lists = [[this.tensors.get('src.ids'), this.trace.source_tokens], [this.tensors.get('tgt.ids'), this.trace.target_tokens],
      [this.tensors.get('out.tokens'), this.trace.output_tokens]];
    for (const [t, toks] of lists) if (t && toks) { const i = [...t.data].indexOf(id); if (i >= 0) return toks[i]; }
    return undefined;
  }

  rowToken(id, row, shape) {
    if (shape.length < 1 || id === 'E' || id.startsWith('out.ET') || this.blocks.get(id)?.block.param) return null;
    if (id.startsWith('src.') || id.startsWith('enc.')) return this.trace.source_tokens?.[row];
    if (id.startsWith('tgt.') || id.startsWith('dec.') || id.startsWith('out.')) return this.trace.target_tokens?.[row];
    return null;
  }

  colToken(id, col, shape) {
    if (shape.length !== 2) return null;
    if (/\.h\d\.(scores|masked|weights)$/.test(id)) return (id.startsWith('enc.') || id.includes('.cross.') ? this.trace.source_tokens : this.trace.target_tokens)?.[col];
    if (/^out\.(logits|probs)$/.test(id)) return this.vocabToken(col);
    return null;
  }

  vocabToken(i) { return this.tokenName(i); }

  /** Resolves a trace id (Slice aliases included) and tensor coordinates to a drawn cell. */
  resolve(id, row, col) {
    const al = this.layout?.aliases.get(id);
    if (al) return { id: al.of, r: row, c: col + al.colOffset };
    const cb = this.blocks.get(id);
    if (!cb) return null;
    const t = this.tensors.get(id);
    if (t.shape.length === 1 && cb.block.rows === 1) return { id, r: 0, c: Math.max(row, col) };
    if (t.shape.length === 1) return { id, r: Math.max(row, col), c: 0 };
    return cb.block.transposed ? { id, r: col, c: row } : { id, r: row, c: col };
  }

  setCursor(cell, { fromHover = false } = {}) {
    this.cursor = cell;
    this.markInput();
    this.refreshInspector(fromHover);
    this.invalidate();
  }

  clampCursor() {
    const b = this.blocks.get(this.cursor.id).block;
    this.cursor.r = Math.min(this.cursor.r, b.rows - 1); this.cursor.c = Math.min(this.cursor.c, b.cols - 1);
  }

  refreshInspector() {
    const el = this.inspector;
    if (!this.cursor || !this.blocks.has(this.cursor.id)) { this.cursorMesh.visible = false; return; }
    const { id, r, c } = this.cursor;
    const cb = this.blocks.get(id), info = this.cellInfo(id, r, c);
    const lines = inspectorLines(info, this);
    el.replaceChildren(...lines.map((l, i) => { const d = document.createElement('div'); d.textContent = l; if (!i) d.className = 'stage-inspector-title'; return d; }));
    Object.assign(el.dataset, { id, row: String(info.row), col: String(info.col), value: String(info.value), drawnRow: String(r), drawnCol: String(c) });
    el.hidden = false;
    this.cursorMesh.position.set(cb.mesh.position.x + colX(cb.block, c) + 0.5, cb.mesh.position.y - r - 0.5, 0);
    this.cursorMesh.visible = true;
    this.lastInfo = info;
  }

  // ---------- DOM overlay, cursor, input ----------
  buildOverlay() {
    const el = document.createElement('div');
    el.className = 'stage-inspector'; el.setAttribute('role', 'status'); el.setAttribute('aria-live', 'polite'); el.setAttribute('aria-atomic', 'true');
    el.hidden = true;
    this.inspector = el;
    const help = document.createElement('div');
    help.className = 'stage-help';
    help.textContent = 'O whole machine · C step view · R replay';
    help.title = 'drag: orbit · right-drag: pan · wheel: zoom · Tab and arrow keys: move a cell cursor · Esc: hide it';
    this.el.append(el, help);
    this.el.setAttribute('role', this.el.getAttribute('role') || 'application');
    this.el.setAttribute('aria-roledescription', 'model stage');
    if (!this.el.getAttribute('aria-label')) this.el.setAttribute('aria-label', 'The Transformer, every matrix drawn. Tab and arrow keys move a cell cursor; the inspector reads the cell.');
    if (!this.el.hasAttribute('tabindex')) this.el.tabIndex = 0;
  }

  buildCursor() {
    const g = new THREE.EdgesGeometry(new THREE.BoxGeometry(1.1, 1.1, MAX_HEIGHT * 2 + 0.4));
    this.cursorMesh = new THREE.LineSegments(g, new THREE.LineBasicMaterial({ color: 0xffffff }));
    this.cursorMesh.visible = false; this.cursorMesh.renderOrder = 3;
    this.scene.add(this.cursorMesh);
  }

  bindInput() {
    const cv = this.renderer.domElement;
    let down = null;
    cv.addEventListener('pointerdown', e => { down = { x: e.clientX, y: e.clientY }; this.el.focus({ preventScroll: true }); });
    cv.addEventListener('pointerup', () => { down = null; });
    cv.addEventListener('pointermove', e => {
      if (down || !this.layout || e.pointerType === 'touch') return;
      const hit = this.hitTest(e.clientX, e.clientY);
      if (hit && (!this.cursor || hit.id !== this.cursor.id || hit.r !== this.cursor.r || hit.c !== this.cursor.c)) this.setCursor(hit, { fromHover: true });
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
    if (!this.layout) return;
    const order = this.layout.order, cur = this.cursor;
    const move = (cell) => { e.preventDefault(); e.stopPropagation(); this.setCursor(cell); };
    if (e.key === 'Escape') { this.cursor = null; this.inspector.hidden = true; this.cursorMesh.visible = false; this.invalidate(); return; }
    if (e.key === 'Tab') {
      const i = cur ? order.indexOf(cur.id) : -1, j = i + (e.shiftKey ? -1 : 1);
      if (j < 0 || j >= order.length) { this.cursor = null; this.cursorMesh.visible = false; this.invalidate(); return; }  // leave the stage
      return move({ id: order[j], r: 0, c: 0 });
    }
    const d = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] }[e.key];
    if (d) {
      if (!cur) return move({ id: order[0], r: 0, c: 0 });
      const b = this.blocks.get(cur.id).block, r = cur.r + d[0], c = cur.c + d[1];
      if (r >= 0 && r < b.rows && c >= 0 && c < b.cols) return move({ id: cur.id, r, c });
      const next = this.neighbour(b, d);
      if (next) return move(next);
      e.preventDefault(); e.stopPropagation();
    } else if (e.key === 'Home' && cur) move({ id: cur.id, r: 0, c: 0 });
    else if (e.key === 'End' && cur) { const b = this.blocks.get(cur.id).block; move({ id: cur.id, r: b.rows - 1, c: b.cols - 1 }); }
  }

  /** The nearest block beyond an edge of b in direction d (spatially), entering at the near edge. */
  neighbour(b, [dr, dc]) {
    let best = null, bestD = Infinity;
    const cx = b.x + b.w / 2, cy = b.y - b.rows / 2;
    for (const cb of this.blocks.values()) {
      const o = cb.block; if (o === b) continue;
      const ox = o.x + o.w / 2, oy = o.y - o.rows / 2;
      const along = dc ? (ox - cx) * dc : (cy - oy) * dr * -1 * -1;
      const ahead = dc ? along > 0 : (dr > 0 ? oy < cy : oy > cy);
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
    const cb = this.blocks.get(cell.id);
    const p = new THREE.Vector3(cb.mesh.position.x + colX(cb.block, cell.c) + 0.5, cb.mesh.position.y - cell.r - 0.5, 0).project(this.camera);
    const rect = this.renderer.domElement.getBoundingClientRect();
    return { x: rect.left + (p.x + 1) / 2 * rect.width, y: rect.top + (1 - p.y) / 2 * rect.height, visible: Math.abs(p.x) <= 1 && Math.abs(p.y) <= 1 && p.z < 1 };
  }

  inspect(id, row, col) {
    const cell = this.resolve(id, row, col);
    if (!cell) return null;
    this.setCursor(cell);
    return { ...this.lastInfo, text: this.inspector.textContent };
  }
}

export { HEAD_GAP };
