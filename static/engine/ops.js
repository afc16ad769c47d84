// One function per ONNX operator, computing whole tensors in float64: (inputs, attrs) → {shape, data}.
// Driven only by the operator's inputs and attributes, as ONNX defines them for the attributes a
// program sets (recorder/program.py); the explanation panel's per-element evaluators
// (stage/explain.js) cover the same operators and read elements by the same rules (tensor.js).
// Slice and Unsqueeze take their ranges and axes as attributes (the trace's form, as opset 1 did).
import { around, axisOf, broadcastShape, elementwise, size, strides } from "./tensor.js";

const unary =
  (f) =>
  ([X]) =>
    elementwise([X], f);
const binary =
  (f) =>
  ([A, B]) =>
    elementwise([A, B], f);

function matmul(A, B, { alpha = 1, transA = 0, transB = 0 } = {}) {
  if (A.shape.length !== 2 || B.shape.length !== 2) throw new Error("MatMul and Gemm are computed for matrices only");
  const [r, k] = transA ? [A.shape[1], A.shape[0]] : A.shape,
    [k2, c] = transB ? [B.shape[1], B.shape[0]] : B.shape;
  if (k !== k2) throw new Error(`inner dimensions ${k} and ${k2} differ`);
  const a = A.data,
    b = B.data,
    out = new Float64Array(r * c);
  const [ai, ak] = transA ? [1, r] : [k, 1],
    [bk, bj] = transB ? [1, k] : [c, 1];
  for (let i = 0; i < r; i++) {
    for (let j = 0; j < c; j++) {
      let s = 0;
      for (let t = 0; t < k; t++) s += a[i * ai + t * ak] * b[t * bk + j * bj];
      out[i * c + j] = alpha * s;
    }
  }
  return { shape: [r, c], data: out };
}

function gemm([A, B, C], attrs = {}) {
  const Y = matmul(A, B, attrs);
  if (!C) return Y;
  const beta = attrs.beta ?? 1;
  return elementwise([Y, C], (y, c) => y + beta * c);
}

function softmax([X], { axis = -1 } = {}) {
  const { outer, len, inner } = around(X.shape, axis),
    x = X.data,
    out = new Float64Array(x.length);
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      const at = (j) => o * len * inner + j * inner + i;
      let m = -Infinity,
        s = 0;
      for (let j = 0; j < len; j++) m = Math.max(m, x[at(j)]);
      for (let j = 0; j < len; j++) {
        const e = Math.exp(x[at(j)] - m);
        out[at(j)] = e;
        s += e;
      }
      for (let j = 0; j < len; j++) out[at(j)] /= s;
    }
  }
  return { shape: X.shape, data: out };
}

/** (X − mean)/√(var + ε)·γ + β (LayerNormalization) or X/√(mean(X²) + ε)·γ (RMSNormalization), over the
 *  axes from `axis` to the last; γ and β broadcast over those axes.
 *  @param {any[]} inputs  @param {{axis?: number, epsilon?: number}} [attrs]  @param {boolean} [centred] */
function normalize([X, S, B], { axis = -1, epsilon = 1e-5 } = {}, centred = true) {
  const ax = axisOf(axis, X.shape.length),
    len = size(X.shape.slice(ax)),
    rows = X.data.length / len;
  const x = X.data,
    out = new Float64Array(x.length),
    g = S.data,
    b = B ? B.data : null;
  for (let r = 0; r < rows; r++) {
    const o = r * len;
    let mu = 0,
      v = 0;
    if (centred) {
      for (let j = 0; j < len; j++) mu += x[o + j];
      mu /= len;
    }
    for (let j = 0; j < len; j++) v += (x[o + j] - mu) ** 2;
    const d = Math.sqrt(v / len + epsilon);
    for (let j = 0; j < len; j++) out[o + j] = ((x[o + j] - mu) / d) * g[j % g.length] + (b ? b[j % b.length] : 0);
  }
  return { shape: X.shape, data: out };
}

/** RotaryEmbedding (opset 23) on a (sequence, hidden) input: the opset's (batch, sequence, hidden) form
 *  with batch = 1 left out; num_heads heads side by side, the first rotary_embedding_dim of each rotated,
 *  pairs (2i, 2i+1) when interleaved, else halves; position_ids pick the cache rows. */
function rotary([X, C, S, P], { interleaved = 0, num_heads: heads = 0, rotary_embedding_dim: dim = 0 } = {}) {
  if (X.shape.length !== 2 || !heads)
    throw new Error("RotaryEmbedding is computed for (sequence, hidden) inputs with num_heads");
  const [t, hidden] = X.shape,
    dk = hidden / heads,
    rot = dim || dk,
    half = rot / 2,
    cw = C.shape[C.shape.length - 1];
  const x = X.data,
    out = Float64Array.from(x);
  for (let p = 0; p < t; p++) {
    const row = P ? P.data[p] : p;
    for (let h = 0; h < heads; h++) {
      const base = p * hidden + h * dk;
      for (let i = 0; i < half; i++) {
        const [u, w] = interleaved ? [base + 2 * i, base + 2 * i + 1] : [base + i, base + i + half];
        const cos = C.data[row * cw + i],
          sin = S.data[row * cw + i];
        out[u] = cos * x[u] - sin * x[w];
        out[w] = sin * x[u] + cos * x[w];
      }
    }
  }
  return { shape: X.shape, data: out };
}

function gather([D, I], { axis = 0 } = {}) {
  const { ax, outer, len, inner } = around(D.shape, axis),
    n = I.data.length,
    out = new Float64Array(outer * n * inner);
  for (let o = 0; o < outer; o++) {
    for (let k = 0; k < n; k++) {
      let j = I.data[k];
      if (j < 0) j += len;
      if (!(j >= 0 && j < len)) throw new Error(`Gather index ${I.data[k]} is out of range (0…${len - 1})`);
      out.set(D.data.subarray((o * len + j) * inner, (o * len + j + 1) * inner), (o * n + k) * inner);
    }
  }
  return { shape: [...D.shape.slice(0, ax), ...I.shape, ...D.shape.slice(ax + 1)], data: out };
}

/** Y[o] = X[perm⁻¹(o)]: any rank.  @param {any[]} inputs  @param {{perm?: number[]}} [attrs] */
function transpose([X], { perm } = {}) {
  const rank = X.shape.length,
    p = perm || [...Array(rank).keys()].reverse();
  const shape = p.map((i) => X.shape[i]),
    from = strides(X.shape),
    read = p.map((i) => from[i]);
  return { shape, data: gatherStrided(X.data, shape, read, 0) };
}

/** The elements of `data` at offset + Σ index·read over every index of `shape`, row-major. */
function gatherStrided(data, shape, read, offset) {
  const n = size(shape),
    out = new Float64Array(n),
    idx = new Array(shape.length).fill(0);
  let at = offset;
  for (let i = 0; i < n; i++) {
    out[i] = data[at];
    for (let d = shape.length - 1; d >= 0; d--) {
      idx[d]++;
      at += read[d];
      if (idx[d] < shape[d]) break;
      at -= read[d] * shape[d];
      idx[d] = 0;
    }
  }
  return out;
}

/** ONNX Slice: per axis, start and end clamped to the dimension (negative ones counted from its end).
 *  @param {any[]} inputs  @param {{axes?: number[], starts?: number[], ends?: number[], steps?: number[]}} [attrs] */
function slice([X], { axes, starts, ends, steps } = {}) {
  const shape = X.shape.slice(),
    from = strides(X.shape),
    read = from.slice();
  let offset = 0;
  (axes || starts.map((_, i) => i)).forEach((axis, i) => {
    const ax = axisOf(axis, X.shape.length),
      dim = X.shape[ax],
      step = steps?.[i] ?? 1;
    if (step <= 0) throw new Error("Slice is computed for positive steps only");
    const clamp = (v) => Math.min(Math.max(v < 0 ? v + dim : v, 0), dim);
    const s = clamp(starts[i]),
      e = clamp(ends[i]);
    shape[ax] = Math.max(0, Math.ceil((e - s) / step));
    offset += s * from[ax];
    read[ax] = from[ax] * step;
  });
  return { shape, data: gatherStrided(X.data, shape, read, offset) };
}

function concat(X, { axis = 0 } = {}) {
  const { ax } = around(X[0].shape, axis),
    shape = X[0].shape.slice();
  shape[ax] = X.reduce((a, t) => a + t.shape[ax], 0);
  const outer = size(shape.slice(0, ax)),
    inner = size(shape.slice(ax + 1)),
    out = new Float64Array(size(shape));
  let at = 0;
  for (let o = 0; o < outer; o++) {
    for (const t of X) {
      const w = t.shape[ax] * inner;
      out.set(t.data.subarray(o * w, (o + 1) * w), at);
      at += w;
    }
  }
  return { shape, data: out };
}

function argmax([X], { axis = 0, keepdims = 1 } = {}) {
  const { ax, outer, len, inner } = around(X.shape, axis),
    out = new Float64Array(outer * inner),
    x = X.data;
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      let best = 0; // the first of equal largest values, as ONNX's default select_last_index = 0
      for (let j = 1; j < len; j++) if (x[(o * len + j) * inner + i] > x[(o * len + best) * inner + i]) best = j;
      out[o * inner + i] = best;
    }
  }
  const shape = X.shape.slice();
  if (keepdims) shape[ax] = 1;
  else shape.splice(ax, 1);
  return { shape, data: out };
}

function range([start, limit, delta]) {
  const s = start.data[0],
    d = delta.data[0],
    n = Math.max(Math.ceil((limit.data[0] - s) / d), 0);
  return { shape: [n], data: Float64Array.from({ length: n }, (_, i) => s + i * d) };
}

function unsqueeze([X], { axes }) {
  const rank = X.shape.length + axes.length,
    shape = [],
    at = new Set(axes.map((a) => axisOf(a, rank)));
  for (let i = 0, k = 0; i < rank; i++) shape.push(at.has(i) ? 1 : X.shape[k++]);
  return { shape, data: X.data };
}

export const OPS = {
  Gemm: gemm,
  MatMul: ([A, B]) => matmul(A, B),
  Add: binary((a, b) => a + b),
  Sub: binary((a, b) => a - b),
  Mul: binary((a, b) => a * b),
  Div: binary((a, b) => a / b),
  Relu: unary((x) => Math.max(0, x)),
  Sigmoid: unary((x) => 1 / (1 + Math.exp(-x))),
  Softmax: softmax,
  LayerNormalization: (X, attrs) => normalize(X, attrs, true),
  RMSNormalization: ([X, S], attrs) => normalize([X, S], attrs, false),
  RotaryEmbedding: rotary,
  Gather: gather,
  Transpose: transpose,
  Slice: slice,
  Concat: concat,
  Where: ([C, A, B]) => elementwise([C, A, B], (c, a, b) => (c ? a : b)),
  ArgMax: argmax,
  // what a program's length-dependent constants are made with (recorder/program.py)
  Identity: ([X]) => ({ shape: X.shape, data: X.data }),
  Range: range,
  Unsqueeze: unsqueeze,
  Equal: binary((a, b) => (a === b ? 1 : 0)),
  LessOrEqual: binary((a, b) => (a <= b ? 1 : 0)),
  Not: unary((x) => (x ? 0 : 1)),
  And: binary((a, b) => (a && b ? 1 : 0)),
};

export const COMPUTED_OPS = Object.keys(OPS);

/** One operation: the output of `op` on input tensors, or an error naming it. */
export function compute(op, inputs, attrs = {}) {
  const fn = OPS[op];
  if (!fn) throw new Error(`the engine has no operator ${op}`);
  return fn(inputs, attrs || {});
}

export { broadcastShape };
