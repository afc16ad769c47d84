// Cells: one instanced, shader-driven mesh per block (never one object per cell).
// Colour and height come from the value, scaled per block (|v| / max|v| of the block), so a bias
// of ±0.05 and an embedding of ±3 both read. Values animate on the GPU: each instance carries its
// old and new value and the shader mixes them with uT, so a recompute costs no per-frame JavaScript.
import * as THREE from 'three';
import { colX } from './layout.js';

export const CELL = 0.86;          // cell footprint (pitch is 1)
export const MAX_HEIGHT = 2.4;     // height of the largest |value| of a block
export const NEG_INF = -1e30;      // masked score (−∞, null in the trace)
const KIND = { value: 0, bar: 1, masked: 2, relu: 3, bool: 4, ids: 5 };

const vertexShader = /* glsl */`
  attribute vec2 aPos;      // cell centre in the block's local plane
  attribute vec2 aRC;       // drawn row, column
  attribute float aVal;     // new value
  attribute float aPrev;    // old value (recompute animates from it)
  uniform float uT, uScale, uPrevScale, uKind, uReveal, uDrop, uH;
  uniform vec4 uFocus;      // rows [x, y], cols [z, w] lit; others dimmed while uFocusOn
  uniform float uFocusOn;
  varying vec3 vColor;
  varying float vShade;
  varying float vLit;

  vec3 diverging(float t) {           // blue – pale grey – orange-red, centred on 0
    vec3 neg = vec3(0.16, 0.42, 0.85), mid = vec3(0.80, 0.80, 0.78), pos = vec3(0.93, 0.38, 0.16);
    return t < 0.0 ? mix(mid, neg, min(-t, 1.0)) : mix(mid, pos, min(t, 1.0));
  }
  vec3 sequential(float t) {          // bars: dark teal to yellow
    return mix(mix(vec3(0.10, 0.22, 0.30), vec3(0.13, 0.62, 0.55), clamp(t * 2.0, 0.0, 1.0)),
               vec3(0.98, 0.88, 0.30), clamp(t * 2.0 - 1.0, 0.0, 1.0));
  }
  float hash(vec2 p) { return fract(sin(dot(p, vec2(12.9898, 78.233)) + uDrop * 0.618) * 43758.5453); }

  void main() {
    bool inf = aVal < -1e29;
    float prevV = aPrev < -1e29 ? 0.0 : aPrev;
    float newV = inf ? 0.0 : aVal;
    float v = mix(prevV, newV, uT);
    float s = mix(uPrevScale, uScale, uT);
    float t = s > 0.0 ? v / s : 0.0;
    float h; vec3 c;
    if (uKind == 1.0) { h = max(v, 0.0) * uH; c = sequential(v); }
    else if (uKind == 4.0) { h = 0.15; c = v > 0.5 ? vec3(0.80, 0.80, 0.78) : vec3(0.42, 0.05, 0.08); }
    else if (uKind == 5.0) { h = 0.15; c = vec3(0.55, 0.58, 0.66); }
    else { h = t * uH; c = diverging(t); }
    if (inf) { h = 0.12; c = vec3(0.42, 0.05, 0.08); }                    // masked: dark red
    if (uKind == 3.0 && newV == 0.0 && uT >= 1.0) { c = vec3(0.17, 0.18, 0.20); }  // ReLU zero: dark
    if (uDrop > 0.0 && hash(aRC) < 0.1) { h = 0.0; c = vec3(0.10, 0.10, 0.11); }   // dropout (illustrative)
    if (aRC.x >= uReveal) { h = 0.0; c = mix(c, vec3(0.12, 0.13, 0.15), 0.85); }  // not yet computed
    if (abs(h) < 0.06) h = h < 0.0 ? -0.06 : 0.06;
    vLit = 1.0;
    if (uFocusOn > 0.5) {
      bool inR = aRC.x >= uFocus.x && aRC.x <= uFocus.y, inC = aRC.y >= uFocus.z && aRC.y <= uFocus.w;
      vLit = (inR && inC) ? 1.0 : 0.28;
    }
    vec3 p = position;                 // unit box, z in [0, 1]
    p.xy *= ${CELL.toFixed(2)};
    p.z *= h;
    p.xy += aPos;
    vec3 n = normal * vec3(1.0, 1.0, sign(h));
    vShade = 0.62 + 0.38 * max(dot(normalize(n), normalize(vec3(0.35, 0.55, 0.75))), 0.0);
    vColor = c;
    gl_Position = projectionMatrix * modelViewMatrix * vec4(p, 1.0);
  }`;

const fragmentShader = /* glsl */`
  uniform float uDim, uGlow;
  uniform vec3 uBg;
  varying vec3 vColor;
  varying float vShade;
  varying float vLit;
  void main() {
    vec3 c = vColor * vShade;
    c = mix(c, vec3(1.0, 0.95, 0.7), uGlow * 0.25);
    c = mix(uBg, c, uDim * vLit);
    gl_FragColor = vec4(c, 1.0);
  }`;

let baseBox = null;
function box() {
  if (!baseBox) { baseBox = new THREE.BoxGeometry(1, 1, 1); baseBox.translate(0, 0, 0.5); }
  return baseBox;
}

export function blockScale(values) {
  let m = 0;
  for (const v of values) if (Number.isFinite(v) && Math.abs(v) > m) m = Math.abs(v);
  return m || 1;
}

/** One block's mesh: geometry with one instance per cell, a material whose uniforms carry the block's
 *  scale, animation state, highlight and focus. `values` is in drawn (row, col) order. */
export class CellBlock {
  constructor(block, values, bg) {
    this.block = block;
    this.material = new THREE.ShaderMaterial({
      vertexShader, fragmentShader,
      uniforms: {
        uT: { value: 1 }, uScale: { value: 1 }, uPrevScale: { value: 1 }, uKind: { value: KIND[block.kind] ?? 0 },
        uReveal: { value: 1e9 }, uDrop: { value: 0 }, uH: { value: MAX_HEIGHT }, uFocus: { value: new THREE.Vector4() },
        uFocusOn: { value: 0 }, uDim: { value: 1 }, uGlow: { value: 0 }, uBg: { value: new THREE.Color(bg) },
      },
    });
    this.mesh = new THREE.Mesh(new THREE.InstancedBufferGeometry(), this.material);
    this.mesh.matrixAutoUpdate = true;
    this.mesh.userData.block = block.id;
    this.setShape(block, values, null);
  }

  get u() { return this.material.uniforms; }

  /** (Re)builds the instances for a block's shape; prev maps (r, c) → old value or is null. */
  setShape(block, values, prevOf) {
    this.block = block;
    const n = block.rows * block.cols;
    const g = new THREE.InstancedBufferGeometry();
    const b = box();
    g.index = b.index; g.setAttribute('position', b.getAttribute('position')); g.setAttribute('normal', b.getAttribute('normal'));
    const pos = new Float32Array(n * 2), rc = new Float32Array(n * 2), val = new Float32Array(n), prev = new Float32Array(n);
    for (let r = 0, i = 0; r < block.rows; r++) {
      for (let c = 0; c < block.cols; c++, i++) {
        pos[2 * i] = colX(block, c) + 0.5; pos[2 * i + 1] = -r - 0.5;
        rc[2 * i] = r; rc[2 * i + 1] = c;
        const v = values[i];
        val[i] = v === -Infinity || v === null ? NEG_INF : v;
        prev[i] = prevOf ? prevOf(r, c) : val[i];
      }
    }
    g.setAttribute('aPos', new THREE.InstancedBufferAttribute(pos, 2));
    g.setAttribute('aRC', new THREE.InstancedBufferAttribute(rc, 2));
    g.setAttribute('aVal', new THREE.InstancedBufferAttribute(val, 1));
    g.setAttribute('aPrev', new THREE.InstancedBufferAttribute(prev, 1));
    g.instanceCount = n;
    // For three's frustum culling: the block's own extent, not the unit box's.
    g.boundingSphere = new THREE.Sphere(new THREE.Vector3(block.w / 2, -block.rows / 2, 0),
      Math.hypot(block.w / 2, block.rows / 2, MAX_HEIGHT) + 1);
    g.boundingBox = new THREE.Box3(new THREE.Vector3(0, -block.rows, -MAX_HEIGHT), new THREE.Vector3(block.w, 0, MAX_HEIGHT));
    const old = this.mesh.geometry;
    this.mesh.geometry = g;
    if (old && old !== g) old.dispose();
    this.values = Float32Array.from(values, v => (v === null ? -Infinity : v));
    const s = block.kind === 'bar' ? 1 : blockScale(this.values);
    this.u.uPrevScale.value = prevOf ? this.u.uScale.value : s;
    this.u.uScale.value = s;
    this.count = n;
  }

  /** New values of the same shape: old ones become aPrev; the caller animates uT 0 → 1. */
  setValues(values) {
    const g = this.mesh.geometry, val = g.getAttribute('aVal'), prev = g.getAttribute('aPrev');
    prev.array.set(val.array); val.array.set(Float32Array.from(values, v => (v === null || v === -Infinity ? NEG_INF : v)));
    val.needsUpdate = prev.needsUpdate = true;
    this.values = Float32Array.from(values, v => (v === null ? -Infinity : v));
    this.u.uPrevScale.value = this.u.uScale.value;
    this.u.uScale.value = this.block.kind === 'bar' ? 1 : blockScale(this.values);
  }

  valueAt(r, c) { return this.values[r * this.block.cols + c]; }
  dispose() { this.mesh.geometry.dispose(); this.material.dispose(); }
}
