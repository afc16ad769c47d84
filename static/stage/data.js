// The numbers the stage draws: the trace's nodes (per input) and the parameters (fetched once).
import { drawnShape } from './layout.js';

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

// Accepts {parameters: [{id, shape, data}]} / {tensors: [...]} / {id: {shape, data}}.
export function parseWeights(json) {
  const list = Array.isArray(json) ? json : json.parameters || json.tensors ||
    Object.entries(json.weights || json).filter(([, v]) => v && v.shape).map(([id, v]) => ({ id, ...v }));
  const out = new Map();
  for (const p of list) if (p && p.id && p.shape && p.data) out.set(p.id, { id: p.id, shape: p.shape, data: Float32Array.from(p.data) });
  return out;
}

/** A trace's nodes as tensors: null (masked, −∞) becomes -Infinity. */
export function traceTensors(trace) {
  const out = new Map();
  for (const n of trace.nodes) {
    out.set(n.id, { id: n.id, op: n.op, inputs: n.inputs, shape: n.shape, dtype: n.dtype,
      data: Float64Array.from(n.data === null ? [] : (Array.isArray(n.data) ? n.data : [n.data]), v => (v === null ? -Infinity : Number(v))) });
  }
  return out;
}

/** Streams an NDJSON trace (a header line, then one node per line) into the trace JSON shape. */
export async function fetchTraceStream(url) {
  const r = await fetch(url, { headers: { Accept: 'application/x-ndjson, application/json' } });
  if (!r.ok) { let msg = `HTTP ${r.status}`; try { msg = (await r.json()).detail || msg; } catch { /* not JSON */ } throw new Error(msg); }
  const ctype = r.headers.get('content-type') || '';
  if (!ctype.includes('ndjson')) return r.json();
  const reader = r.body.getReader(), dec = new TextDecoder();
  let buf = '', header = null; const nodes = [];
  const line = (s) => { if (!s.trim()) return; const o = JSON.parse(s); if (!header) header = o; else nodes.push(o.node || o); };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let i; while ((i = buf.indexOf('\n')) >= 0) { line(buf.slice(0, i)); buf = buf.slice(i + 1); }
  }
  line(buf);
  return { ...(header.trace || header), nodes };
}

/** The values of a tensor in drawn order (row-major over the drawn rows and columns). */
export function drawnValues(id, t) {
  const [rows, cols] = drawnShape(id, t.shape);
  if (!id.endsWith('.W_2')) return t.data;
  const out = new Float32Array(rows * cols);  // W₂ (128×32) drawn as W₂ᵀ (32×128)
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[r * cols + c] = t.data[c * rows + r];
  return out;
}

/** Tensor coordinates (row, col) of a drawn cell; 1-D tensors use (0, k) for vectors drawn as a row
 *  and (k, 0) for ids drawn as a column; both map to flat index k. */
export function tensorIndex(block, r, c) {
  if (block.transposed) return { row: c, col: r, flat: c * block.rows + r };
  return { row: r, col: c, flat: r * block.cols + c };
}
