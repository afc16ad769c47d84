// The compact form of a trace (app/trace_bytes.py) read back into the very object the JSON form parses to.
//
//   decodeCompactTrace(buffer) → { head, trace }
//
// The body: an 8-byte little-endian header length N, N bytes of JSON ({format, head, nodes}), then the
// data. A node with `data_offsets` holds little-endian float32 values there; each becomes the number
// JSON.parse gives for the JSON form's text of it (float32's shortest digits: float32Decimal), and −∞
// becomes null as in the JSON. Any other node has its `data` in the header already. `trace` is
// {...head, nodes} with each node's keys in the JSON form's order.
import { float32Decimal } from "./format.js";

export const COMPACT_FORMAT = "anatomy-trace-compact/1";

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

// A float32 node's values as the JSON form's numbers (null for −∞, as JSON writes it).
function values(buffer, at, count) {
  const f32 = LITTLE_ENDIAN && at % 4 === 0 ? new Float32Array(buffer, at, count) : null;
  const view = f32 ? null : new DataView(buffer, at, 4 * count);
  const out = new Array(count);
  for (let i = 0; i < count; i++) {
    const v = f32 ? f32[i] : view.getFloat32(4 * i, true);
    out[i] = Number.isFinite(v) ? float32Decimal(v) : null;
  }
  return out;
}

/** A compact body (an ArrayBuffer) as { head, trace }: head is the trace without its nodes. */
export function decodeCompactTrace(buffer) {
  if (buffer.byteLength < 8) throw new Error("the server sent an empty trace");
  const view = new DataView(buffer), length = Number(view.getBigUint64(0, true));
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
