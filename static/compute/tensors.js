// A trace's nodes as the live figures read them: each value the float32 the server computed (a float32
// node's data is a Float32Array, −∞ as −Infinity: static/js/compact.js), rows as plain arrays of numbers
// (true and false as 1 and 0), so that a figure may map them to anything.

/** The trace's nodes by id: has(id), node(id) (as sent), tensor(id) → {shape, data, row(i), rows(), at(i, j)}. */
export function nodesOf(trace) {
  const byId = new Map(trace.nodes.map((n) => [n.id, n]));
  const tensors = new Map();
  const node = (id) => {
    const found = byId.get(id);
    if (!found) throw new Error(`the trace has no node ${id}`);
    return found;
  };
  const tensor = (id) => {
    if (!tensors.has(id)) {
      const { shape, data } = node(id);
      const values = Array.from(data, Number);
      const width = shape.length > 1 ? shape[shape.length - 1] : values.length;
      const row = (i) => values.slice(i * width, (i + 1) * width);
      tensors.set(id, {
        shape,
        data: values,
        row,
        at: (i, j) => values[i * width + j],
        rows: () => Array.from({ length: values.length / width }, (_, i) => row(i)),
      });
    }
    return tensors.get(id);
  };
  return { has: (id) => byId.has(id), node, tensor };
}

/** The last decoder layer's cross-attention weights averaged over its heads. */
export function crossMean(t, ids) {
  const heads = ids.map((id) => t.tensor(id).data);
  const width = t.tensor(ids[0]).shape.at(-1);
  const meanOf = heads[0].map((_, i) => heads.reduce((acc, h) => acc + h[i], 0) / heads.length);
  return Array.from({ length: meanOf.length / width }, (_, r) => meanOf.slice(r * width, (r + 1) * width));
}
