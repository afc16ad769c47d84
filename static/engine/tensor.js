// Tensors of the engine: {shape, data, dtype}, row-major, every dtype held as float64 numbers (ids and
// booleans too: 1 and 0), masked scores as -Infinity. Shared with the explanation panel (stage/explain.js):
// the index rules here are the ones it reads single elements by.

export const size = (shape) => shape.reduce((a, b) => a * b, 1);
export const axisOf = (axis, rank) => (axis < 0 ? axis + rank : axis);

/** The flat position of an index (row-major). */
export function flatIndex(shape, idx) {
  let f = 0,
    k = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    f += idx[i] * k;
    k *= shape[i];
  }
  return f;
}

/** The index of a broadcast input (numpy rules: aligned on the right, size-1 dimensions read 0). */
export const bcast = (shape, index) => shape.map((n, i) => (n === 1 ? 0 : index[index.length - shape.length + i]));

export function tensor(shape, data, dtype = "float32") {
  return { shape, data: data instanceof Float64Array ? data : Float64Array.from(data), dtype };
}

/** Row-major strides of a shape. */
export function strides(shape) {
  const s = new Array(shape.length);
  for (let i = shape.length - 1, k = 1; i >= 0; i--) {
    s[i] = k;
    k *= shape[i];
  }
  return s;
}

/** The shape two or more shapes broadcast to (numpy rules), or an error. */
export function broadcastShape(...shapes) {
  const rank = Math.max(...shapes.map((s) => s.length)),
    out = new Array(rank).fill(1);
  for (const s of shapes) {
    s.forEach((n, i) => {
      const j = rank - s.length + i;
      if (n !== 1 && out[j] !== 1 && out[j] !== n)
        throw new Error(`shapes ${shapes.map((x) => `[${x}]`).join(", ")} do not broadcast`);
      if (n !== 1) out[j] = n;
    });
  }
  return out;
}

/** Strides of `shape` read at an index of `out` (0 where the dimension is broadcast). */
function readStrides(shape, target) {
  const own = strides(shape),
    s = new Array(target.length).fill(0);
  shape.forEach((n, i) => {
    s[target.length - shape.length + i] = n === 1 ? 0 : own[i];
  });
  return s;
}

/** f applied elementwise over inputs broadcast together: a tensor of dtype `dtype`. */
export function elementwise(inputs, f, dtype) {
  const shape = broadcastShape(...inputs.map((t) => t.shape)),
    n = size(shape),
    out = new Float64Array(n);
  const same = inputs.every((t) => t.data.length === n);
  if (same) {
    const ds = inputs.map((t) => t.data);
    if (ds.length === 1) for (let i = 0; i < n; i++) out[i] = f(ds[0][i]);
    else if (ds.length === 2) for (let i = 0; i < n; i++) out[i] = f(ds[0][i], ds[1][i]);
    else for (let i = 0; i < n; i++) out[i] = f(...ds.map((d) => d[i]));
    return { shape, data: out, dtype };
  }
  const reads = inputs.map((t) => readStrides(t.shape, shape)),
    idx = new Array(shape.length).fill(0);
  const at = new Array(inputs.length).fill(0),
    args = new Array(inputs.length);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < inputs.length; k++) args[k] = inputs[k].data[at[k]];
    out[i] = f(...args);
    for (let d = shape.length - 1; d >= 0; d--) {
      // the next index, odometer-wise
      idx[d]++;
      for (let k = 0; k < inputs.length; k++) at[k] += reads[k][d];
      if (idx[d] < shape[d]) break;
      for (let k = 0; k < inputs.length; k++) at[k] -= reads[k][d] * shape[d];
      idx[d] = 0;
    }
  }
  return { shape, data: out, dtype };
}

/** A tensor split at `axis` as (outer, len, inner): the loops a reduction along one axis needs. */
export function around(shape, axis) {
  const ax = axisOf(axis, shape.length);
  return { ax, outer: size(shape.slice(0, ax)), len: shape[ax], inner: size(shape.slice(ax + 1)) };
}
