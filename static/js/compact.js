// The compact form of a trace (app/serving/trace_bytes.py) read straight into typed arrays.
//
//   decodeCompactTrace(buffer) → { head, trace }
//   pageNode(node) → node;  pageTrace(trace) → trace
//
// The body: an 8-byte little-endian header length N, N bytes of JSON ({format, head, nodes}), then the
// data. A node with `data_offsets` holds little-endian float32 values there; its `data` becomes a
// Float32Array over those bytes (a view where the bytes are aligned and the machine little-endian, else a
// copy), −∞ (masked scores) staying −Infinity. Any other node has its `data` in the header already.
// `trace` is {...head, nodes} with each node's keys in the JSON form's order.
//
// One representation for the whole page: a float32 node's `data` is a Float32Array, −∞ as −Infinity;
// integer and bool nodes are plain arrays, as JSON gives them. The compact form decodes to it, the
// in-page engine's trace (static/compute/trace.js) is assembled in it, and a JSON-form node (the NDJSON
// stream, a JSON document read by a test) is brought to it by pageNode: its float32 values, written as
// their shortest decimal (null for −∞), become the very float32s the compact form holds. Nothing on the
// page converts float32s back to decimals to read them; the shortest decimal is the JSON form's alone.

export const COMPACT_FORMAT = "anatomy-trace-compact/1";

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** `count` little-endian float32s at byte `at` of `buffer`: a view, or a copy where a view cannot read them. */
function values(buffer, at, count) {
  if (LITTLE_ENDIAN && at % 4 === 0) return new Float32Array(buffer, at, count);
  const view = new DataView(buffer, at, 4 * count),
    out = new Float32Array(count);
  for (let i = 0; i < count; i++) out[i] = view.getFloat32(4 * i, true);
  return out;
}

/** A node as the page holds it: a float32 node's JSON values (null for −∞) as a Float32Array; others as sent. */
export function pageNode(node) {
  if (node.dtype !== "float32" || node.data instanceof Float32Array) return node;
  const data = new Float32Array(node.data.length);
  for (let i = 0; i < data.length; i++) {
    const v = node.data[i];
    data[i] = v === null ? -Infinity : v;
  }
  return { ...node, data };
}

/** A JSON-form trace with its nodes as the page holds them (pageNode). */
export const pageTrace = (trace) => ({ ...trace, nodes: trace.nodes.map(pageNode) });

/** A compact body (an ArrayBuffer) as { head, trace }: head is the trace without its nodes.
 *  @param {ArrayBuffer} buffer
 *  @returns {{head: Omit<import("../types.js").Trace, "nodes">, trace: import("../types.js").Trace}} */
export function decodeCompactTrace(buffer) {
  if (buffer.byteLength < 8) throw new Error("the server sent an empty trace");
  const view = new DataView(buffer),
    length = Number(view.getBigUint64(0, true));
  if (8 + length > buffer.byteLength) throw new Error("the compact trace ended inside its header");
  const header = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 8, length)));
  if (header.format !== COMPACT_FORMAT) throw new Error(`not a compact trace: ${header.format}`);
  const dataAt = 8 + length;
  const nodes = header.nodes.map((m) => {
    let data = m.data;
    if (m.data_offsets) {
      const [start, end] = m.data_offsets;
      if (dataAt + end > buffer.byteLength) throw new Error(`the compact trace ended inside ${m.id}`);
      data = values(buffer, dataAt + start, (end - start) / 4);
    }
    return { id: m.id, op: m.op, inputs: m.inputs, attrs: m.attrs, shape: m.shape, dtype: m.dtype, data };
  });
  return { head: header.head, trace: { ...header.head, nodes } };
}
