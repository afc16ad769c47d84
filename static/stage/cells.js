// Every cell of every block in ONE instanced mesh (one draw call; STYLE: three.js instancing examples).
// Per instance: the cell's centre (new and previous, so a re-laid block glides), its drawn row and
// column, its value (new and previous, so a new input animates on the GPU) and its block's index.
// Per block, a row of a small float texture: its scale, kind, brightness, reveal, up to two focus
// rectangles, glow, dropout and animation time; changing a block's state rewrites a few floats, never
// the instances. One cell may be marked (the explained cell: a uniform). Colours come from the
// scene's palette (published colour maps), heights from |value| / scale. In compare mode a cell's
// value is a difference, and a cell the other input does not have is ABSENT (drawn hatched, flat).
// Colours are display (sRGB) values from end to end: the palette's bytes go into the ramp texture and
// out to the screen unconverted (three.js's colour management would read them as linear light and
// crush the dark half of a map towards black). Probabilities (kind bar) lie flat and unlit, so the
// screen shows the palette's colour itself; the largest of each row (its distribution, the tensor's
// last axis) is outlined in the palette's `row_max` colour.
import * as THREE from "three";
import { fragmentShader, vertexShader } from "./cell-shaders.js";
import { NEG_INF, layCells, layoutOf } from "./cell-layout.js";

export { colAt, colX } from "./cell-layout.js";

export const ABSENT = 1e30; // compare mode: the other input has no such cell
const KINDS = { value: 0, bar: 1, masked: 2, relu: 3, bool: 4, ids: 5 };
// state texels per block: 0 scale, kind, dim · 1 reveal, drop, glow, rects · 2 rect A · 3 t, fromZero, window
// · 4 rect B
const TEXELS = 5;
const isSentinel = (v) => v <= -1e29 || v >= 1e29;

/** A palette colour '#rrggbb' as display (sRGB) components 0..1, unconverted (see the head comment). */
const bytes = (hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
const rgb = (hex) => new THREE.Vector3(...bytes(hex).map((b) => b / 255));

function rampTexture(stops) {
  const data = new Uint8Array(stops.length * 4);
  stops.forEach((hex, i) => data.set([...bytes(hex), 255], i * 4));
  const tex = new THREE.DataTexture(data, stops.length, 1, THREE.RGBAFormat);
  tex.magFilter = tex.minFilter = THREE.LinearFilter;
  tex.needsUpdate = true;
  return tex;
}

/** The largest |value| of a block (its colour and height scale); 1 when all are zero. */
function blockScale(values) {
  let m = 0;
  for (const v of values) if (Number.isFinite(v) && !isSentinel(v) && Math.abs(v) > m) m = Math.abs(v);
  return m || 1;
}

/** 1 for each cell that is the largest of its distribution (a bar block's drawn row; a column when the
 *  block is drawn transposed), ties all marked; 0 elsewhere and in other blocks. vs: values, drawn order. */
export function rowMaxMarks(b, vs) {
  const marks = new Float32Array(b.rows * b.cols);
  if (b.kind !== "bar") return marks;
  const [outer, inner, at] = b.transposed
    ? [b.cols, b.rows, (o, i) => i * b.cols + o]
    : [b.rows, b.cols, (o, i) => o * b.cols + i];
  for (let o = 0; o < outer; o++) {
    let m = -Infinity;
    for (let i = 0; i < inner; i++) {
      const v = vs[at(o, i)];
      if (Number.isFinite(v) && v > m) m = v;
    }
    for (let i = 0; i < inner; i++) if (vs[at(o, i)] === m) marks[at(o, i)] = 1;
  }
  return marks;
}

/** Block i's row of the state texture, reset (its scale now and before, its kind; all revealed, t = 1);
 *  returns its scale. */
function blockState(state, i, b, vs, prev) {
  const scale = b.kind === "bar" ? 1 : blockScale(vs);
  state.set([scale, prev ? prev.scale : scale, KINDS[b.kind] ?? 0, 1], i * TEXELS * 4);
  state.set([1e9, 0, 0, 0], i * TEXELS * 4 + 4);
  state.set([0, 0, 0, 0], i * TEXELS * 4 + 8);
  state.set([1, 0, 0, 0], i * TEXELS * 4 + 12);
  state.set([0, 0, 0, 0], i * TEXELS * 4 + 16);
  return scale;
}

export class CellField {
  /** @param {import("../types.js").Scene} scene */
  constructor(scene) {
    const p = scene.palette,
      cell = scene.cell;
    this.cell = cell;
    this.material = new THREE.ShaderMaterial({
      vertexShader,
      fragmentShader,
      uniforms: {
        uState: { value: null },
        uDiverging: { value: rampTexture(p.diverging) },
        uSequential: { value: rampTexture(p.sequential) },
        uH: { value: cell.max_height },
        uFootprint: { value: cell.footprint },
        uFlatH: { value: cell.flat_height },
        uMaskedH: { value: cell.masked_height },
        uMinH: { value: cell.min_height },
        uMasked: { value: rgb(p.masked) },
        uReluZero: { value: rgb(p.relu_zero) },
        uBoolTrue: { value: rgb(p.bool_true) },
        uIds: { value: rgb(p.ids) },
        uAbsent: { value: rgb(p.absent || p.relu_zero) },
        uBg: { value: rgb(p.background) },
        uTarget: { value: new THREE.Vector3(-1, 0, 0) },
        uRowMax: { value: rgb(p.row_max) },
        uMarkW: { value: cell.mark_width },
      },
    });
    const box = new THREE.BoxGeometry(1, 1, 1);
    box.translate(0, 0, 0.5);
    this.box = box;
    this.mesh = new THREE.Mesh(new THREE.InstancedBufferGeometry(), this.material);
    this.mesh.frustumCulled = false; // instances spread over the whole machine; the box's own sphere is wrong
    this.index = new Map(); // block id → {i (state row), block, start, count, drawn (values as drawn), scale}
    this.count = 0;
  }

  /** Lays out every block's cells. values(block) → a Float64Array in drawn order (−∞: masked); the previous
   *  layout (if any) supplies each cell's old value and position, so the change animates (blocks' t goes 0 → 1).
   *  Blocks laid out as before (an input of the same shape) keep the instance buffers: only the values, the row
   *  maxima and the blocks' scales are written, in place. Returns whether it laid the cells out anew. */
  build(blocks, values) {
    const layout = blocks.map(layoutOf).join("|");
    if (layout === this.layout) {
      this.update(blocks, values);
      return false;
    }
    this.layout = layout;
    this.placed = false; // the cells glide from the previous layout's places
    const old = this.index,
      headGap = this.cell.head_gap;
    let n = 0;
    for (const b of blocks) n += b.rows * b.cols;
    const pos = new Float32Array(n * 4),
      val = new Float32Array(n * 2),
      rc = new Float32Array(n * 2),
      blk = new Float32Array(n),
      mark = new Float32Array(n);
    const index = new Map(),
      state = new Float32Array(Math.max(1, blocks.length) * TEXELS * 4);
    // one plain loop with its counters local: V8 kept the cell loop slow inside a forEach closure that
    // wrote the shared counter (13 ms for 94 000 cells against 3 ms)
    let k = 0;
    for (let i = 0; i < blocks.length; i++) {
      const b = blocks[i],
        vs = values(b),
        prev = old.get(b.id),
        start = k;
      mark.set(rowMaxMarks(b, vs), start);
      k = layCells(b, i, vs, prev, start, headGap, { pos, val, rc, blk });
      const scale = blockState(state, i, b, vs, prev);
      index.set(b.id, { i, block: b, start, count: b.rows * b.cols, drawn: Float64Array.from(vs), scale });
    }
    const g = new THREE.InstancedBufferGeometry();
    g.index = this.box.index;
    g.setAttribute("position", this.box.getAttribute("position"));
    g.setAttribute("normal", this.box.getAttribute("normal"));
    g.setAttribute("uv", this.box.getAttribute("uv")); // the top face's own square: the row maximum's outline
    g.setAttribute("aPos", new THREE.InstancedBufferAttribute(pos, 4));
    g.setAttribute("aVal", new THREE.InstancedBufferAttribute(val, 2));
    g.setAttribute("aRC", new THREE.InstancedBufferAttribute(rc, 2));
    g.setAttribute("aBlock", new THREE.InstancedBufferAttribute(blk, 1));
    g.setAttribute("aMark", new THREE.InstancedBufferAttribute(mark, 1));
    g.instanceCount = n;
    this.mesh.geometry.dispose();
    this.mesh.geometry = g;
    this.state = state;
    this.material.uniforms.uState.value?.dispose();
    const tex = new THREE.DataTexture(state, TEXELS, Math.max(1, blocks.length), THREE.RGBAFormat, THREE.FloatType);
    tex.needsUpdate = true;
    this.material.uniforms.uState.value = tex;
    this.index = index;
    this.veiled = new Map(); // fresh marks: nothing veiled until veil() (stage.js applies its veils next)
    this.count = n;
    return true;
  }

  /** New values for the blocks as laid out now (build() has checked): each cell's value now and before, the row
   *  maxima and each block's state row, written into the buffers the GPU already holds. */
  update(blocks, values) {
    const g = this.mesh.geometry,
      valAttr = /** @type {THREE.InstancedBufferAttribute} */ (g.getAttribute("aVal")),
      markAttr = /** @type {THREE.InstancedBufferAttribute} */ (g.getAttribute("aMark")),
      val = /** @type {Float32Array} */ (valAttr.array),
      mark = /** @type {Float32Array} */ (markAttr.array);
    for (let i = 0; i < blocks.length; i++) {
      const b = blocks[i],
        e = this.index.get(b.id),
        vs = values(b),
        before = e.drawn;
      for (let j = 0, k = 2 * e.start; j < e.count; j++, k += 2) {
        const v = vs[j],
          o = before[j];
        val[k] = v === -Infinity ? NEG_INF : v;
        val[k + 1] = o === -Infinity ? NEG_INF : o;
      }
      mark.set(rowMaxMarks(b, vs), e.start);
      e.scale = blockState(this.state, i, b, vs, e);
      e.drawn = Float64Array.from(vs);
      e.block = b;
    }
    valAttr.needsUpdate = markAttr.needsUpdate = true;
    if (!this.placed) {
      // the cells stand where they are: "before" is now here too, or they would glide again from the layout
      // before the last (a value tween moves the cells as well)
      const posAttr = /** @type {THREE.InstancedBufferAttribute} */ (g.getAttribute("aPos")),
        pos = /** @type {Float32Array} */ (posAttr.array);
      for (let k = 0; k < pos.length; k += 4) {
        pos[k + 2] = pos[k];
        pos[k + 3] = pos[k + 1];
      }
      posAttr.needsUpdate = this.placed = true;
    }
    this.material.uniforms.uState.value.needsUpdate = true;
    this.veiled = new Map(); // fresh marks, as build() leaves them
  }

  /** Veils the cells of `rects` ({id, rows: [r0, r1], cols: [c0, c1]}, tensor coordinates, ends included):
   *  drawn flat and grey, without an outline (an open exercise's answer); every other cell as its values say.
   *  Kept across builds: stage.js applies it to each new trace's cells. */
  veil(rects) {
    const mark = /** @type {THREE.InstancedBufferAttribute | undefined} */ (this.mesh.geometry.getAttribute("aMark"));
    if (!mark) return;
    const marks = /** @type {Float32Array} */ (mark.array);
    // only the blocks veiled before get their outlines back (build() leaves every block's marks fresh)
    for (const id of this.veiled?.keys() || []) {
      const e = this.index.get(id);
      if (e) marks.set(rowMaxMarks(e.block, e.drawn), e.start);
    }
    this.veiled = new Map();
    for (const { id, rows, cols } of rects) {
      const e = this.index.get(id);
      if (!e) continue;
      const b = e.block,
        cells = new Set(this.veiled.get(id));
      // tensor coordinates; a block drawn transposed has the tensor's rows as its drawn columns
      const [tRows, tCols] = b.transposed ? [b.cols, b.rows] : [b.rows, b.cols];
      for (let r = Math.max(0, rows[0]); r <= Math.min(rows[1], tRows - 1); r++)
        for (let c = Math.max(0, cols[0]); c <= Math.min(cols[1], tCols - 1); c++) {
          marks[e.start + (b.transposed ? c * b.cols + r : r * b.cols + c)] = 2;
          cells.add(`${r}:${c}`);
        }
      this.veiled.set(id, cells);
    }
    mark.needsUpdate = true;
  }

  /** Whether the cell (tensor row, column) of block `id` is veiled. */
  isVeiled(id, row, col) {
    return !!this.veiled?.get(id)?.has(`${row}:${col}`);
  }

  has(id) {
    return this.index.has(id);
  }
  entry(id) {
    return this.index.get(id);
  }
  ids() {
    return this.index.keys();
  }

  /** Sets state slots of a block: t (0..1 value mix), fromZero, dim, reveal, drop, glow, focus, clip. focus
   *  is one rectangle [r0, r1, c0, c1] of drawn cells (inclusive), a list of up to two, or null: the block's
   *  cells outside them are dimmed (an empty list dims them all); clip [c0, c1]: only those drawn columns
   *  are drawn (null: all). */
  set(id, s) {
    const e = this.index.get(id);
    if (!e) return;
    const o = e.i * TEXELS * 4,
      st = this.state;
    if ("dim" in s) st[o + 3] = s.dim;
    if ("reveal" in s) st[o + 4] = s.reveal;
    if ("drop" in s) st[o + 5] = s.drop;
    if ("glow" in s) st[o + 6] = s.glow;
    if ("focus" in s) {
      const rects = !s.focus ? null : typeof s.focus[0] === "number" ? [s.focus] : s.focus;
      if (rects && rects.length > 2) throw new Error("at most two focus rectangles per block");
      if (!rects) st[o + 7] = 0;
      else {
        st[o + 7] = Math.max(1, rects.length);
        st.set(rects[0] || [1, 0, 1, 0], o + 8); // none: an empty rectangle, every cell dimmed
        st.set(rects[1] || [1, 0, 1, 0], o + 16);
      }
    }
    if ("t" in s) st[o + 12] = s.t;
    if ("fromZero" in s) st[o + 13] = s.fromZero ? 1 : 0;
    // drawn columns c0..c1 only (windowed.js)
    if ("clip" in s) st.set(s.clip ? [s.clip[0], s.clip[1] + 1] : [0, 0], o + 14);
    this.material.uniforms.uState.value.needsUpdate = true;
  }

  get(id, slot) {
    const e = this.index.get(id);
    if (!e) return undefined;
    const o = e.i * TEXELS * 4;
    return {
      dim: this.state[o + 3],
      reveal: this.state[o + 4],
      drop: this.state[o + 5],
      glow: this.state[o + 6],
      focusOn: this.state[o + 7],
      t: this.state[o + 12],
    }[slot];
  }

  /** The focus rectangles of a block as the shader reads them ([] when its focus is off). */
  focusRects(id) {
    const e = this.index.get(id);
    if (!e) return [];
    const o = e.i * TEXELS * 4,
      n = this.state[o + 7];
    return [[...this.state.subarray(o + 8, o + 12)], [...this.state.subarray(o + 16, o + 20)]].slice(0, n);
  }

  /** Marks one drawn cell (the explained one): always lit, glowing, at least a little tall; null: none. */
  setTarget(cell) {
    const e = cell && this.index.get(cell.id);
    this.material.uniforms.uTarget.value.set(e ? e.i : -1, e ? cell.r : 0, e ? cell.c : 0);
  }

  /** Every block at once (a new input: t → 0 then animated to 1). */
  setAll(s) {
    for (const id of this.index.keys()) this.set(id, s);
  }

  /** The z of a drawn cell's top face as the shader stands it (the marked cell aside): probabilities,
   *  ids and booleans lie flat, a −∞ entry low, other values |v| / scale of the tallest. */
  top(id, r, c) {
    const e = this.index.get(id),
      cell = this.cell;
    if (!e) return null;
    const v = e.drawn[r * e.block.cols + c],
      kind = e.block.kind;
    if (v === -Infinity) return cell.masked_height;
    if (kind === "bar" || kind === "bool" || kind === "ids") return cell.flat_height;
    const h = (Math.abs(v) / e.scale) * cell.max_height;
    return Math.max(h, cell.min_height) * (v < 0 ? -1 : 1);
  }

  /** The cells outlined as the largest of their row ({row, col} of the tensor, drawn now: revealed). */
  outlined(id) {
    const e = this.index.get(id);
    if (!e) return [];
    const b = e.block,
      mark = this.mesh.geometry.getAttribute("aMark").array,
      out = [],
      rows = this.get(id, "reveal");
    for (let r = 0; r < Math.min(b.rows, rows); r++) {
      for (let c = 0; c < b.cols; c++)
        if (mark[e.start + r * b.cols + c] > 0.5) out.push(b.transposed ? { row: c, col: r } : { row: r, col: c });
    }
    return out;
  }

  /** The value the GPU draws now at a drawn cell. */
  drawnValue(id, r, c) {
    const e = this.index.get(id);
    if (!e) return null;
    return this.mesh.geometry.getAttribute("aVal").array[2 * (e.start + r * e.block.cols + c)];
  }

  dispose() {
    this.mesh.geometry.dispose();
    this.material.dispose();
    this.box.dispose();
  }
}
