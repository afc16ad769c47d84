// The numbers the stage draws: the trace's nodes (per input) and the parameters (fetched once).
import { tensorIndex } from './inspector.js';

let weightsPromise = null;

/** Every parameter tensor, fetched once per page (the browser also revalidates with the ETag). */
export function fetchWeights(url = '/api/weights') {
  if (!weightsPromise) {
    weightsPromise = fetch(url).then(r => {
      if (!r.ok) throw new Error(`weights: HTTP ${r.status}`);
      return r.json();
    }).then(parseWeights).catch(e => { weightsPromise = null; throw e; });
  }
  return weightsPromise;
}

/** /api/weights' document ({parameters: [{id, shape, data}]}) as tensors by id. The numbers are kept as
 *  JSON gave them (float64), like the trace's: a cell is explained and exported with the same digits. */
export function parseWeights(json) {
  return new Map(json.parameters.map(p => [p.id, { id: p.id, shape: p.shape, data: Float64Array.from(p.data) }]));
}

/** A trace's nodes as tensors (op, inputs, attrs, shape, dtype, data): null (masked, −∞) becomes -Infinity. */
export function traceTensors(trace) {
  const out = new Map();
  for (const n of trace.nodes) {
    out.set(n.id, { id: n.id, op: n.op, inputs: n.inputs, attrs: n.attrs || {}, shape: n.shape, dtype: n.dtype, data: Float64Array.from(n.data, v => (v === null ? -Infinity : v)) });
  }
  return out;
}

/** A block's values in drawn (row, column) order. */
export function drawnValues(block, tensor) {
  const out = new Float64Array(block.rows * block.cols);
  for (let r = 0, i = 0; r < block.rows; r++) for (let c = 0; c < block.cols; c++, i++) out[i] = tensor.data[tensorIndex(block, r, c).flat];
  return out;
}

/** The trace of one input as plain JSON (the page streams it; this is for the stage on its own). */
export async function fetchTrace(input, ablation = []) {
  const off = ablation.length ? `&ablate=${encodeURIComponent(ablation.join(','))}` : '';
  const r = await fetch(`/api/trace?input=${encodeURIComponent(input)}${off}`, { headers: { Accept: 'application/json' } });
  const body = await r.json().catch(() => null);
  if (!r.ok) throw new Error(body?.detail?.message || `HTTP ${r.status}`);
  return body;
}
