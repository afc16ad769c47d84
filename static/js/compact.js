// The compact form of a trace (app/trace_bytes.py) read back into the very object the JSON form parses to.
//
//   decodeCompactTrace(buffer) → { head, trace }
//
// The body: an 8-byte little-endian header length N, N bytes of JSON ({format, head, nodes}), then the
// data. A node with `data_offsets` holds little-endian float32 values there; each becomes the number
// JSON.parse gives for the JSON form's text of it (float32's shortest digits: float32Decimal), and −∞
// becomes null as in the JSON. Any other node has its `data` in the header already. `trace` is
// {...head, nodes} with each node's keys in the JSON form's order.
import { shortestFloat32 } from "./format.js";

export const COMPACT_FORMAT = "anatomy-trace-compact/1";

const POW10 = Float64Array.from({ length: 23 }, (_, i) => Number(`1e${i}`));  // exact doubles up to 1e22

// m · 10^s, rounded once (so exactly the double the text "<m>e<s>" parses to: m < 2^53, |s| ≤ 22).
const scaled = (m, s) => (s >= 0 ? m * POW10[s] : m / POW10[-s]);

// The integer nearest a · 10^−s, exactly (BigInt: a = M · 2^k), an exact half going to the even one as the
// JSON form's writer (Ryu, in orjson) rounds. Only near a half, so rarely.
function exactNearest(a, s) {
  F32[0] = a;
  const E = BITS[0] >>> 23, M = BigInt(E ? (BITS[0] & 0x7fffff) | 0x800000 : BITS[0] & 0x7fffff);
  const k = (E || 1) - 150, t = -s;
  let num = M, den = 1n;
  if (t >= 0) num *= 10n ** BigInt(t); else den *= 10n ** BigInt(-t);
  if (k >= 0) num <<= BigInt(k); else den <<= BigInt(-k);
  let m = num / den;
  const twice = 2n * (num - m * den);
  if (twice > den || (twice === den && m % 2n === 1n)) m += 1n;
  return Number(m);
}

// The p-digit decimal nearest a (> 0, a float32; e = floor(log10 a)) as a double, an exact half to even;
// NaN where e is not a's decade or the scale is out of the exact range (the caller falls back to text).
function nearest(a, e, p) {
  const s = e - p + 1;
  if (s > 22 || s < -22) return NaN;
  const q = s >= 0 ? a / POW10[s] : a * POW10[-s];  // a · 10^−s, off by at most 10^9 · 2^−53
  if (q >= POW10[p] || q < POW10[p - 1]) return NaN;
  const m = Math.round(q);
  return scaled(Math.abs(q - m) > 0.4999 ? exactNearest(a, s) : m, s);
}

// floor(log10 a) for a float32 a > 0 from its binary exponent: log10 2^E's floor, or one more from the
// threshold 10^(that + 1) on. Where the threshold's double is not exact, nearest() finds q out of range
// and the caller falls back to the text way.
const F32 = new Float32Array(1), BITS = new Uint32Array(F32.buffer);
const DECADE = new Int32Array(256), THRESHOLD = new Float64Array(256);
for (let E = 1; E < 255; E++) {
  DECADE[E] = Math.floor((E - 127) * Math.LOG10E * Math.LN2);
  THRESHOLD[E] = Number(`1e${DECADE[E] + 1}`);
}

function decade(a) {
  F32[0] = a;
  const E = BITS[0] >>> 23;
  return E === 0 ? Math.floor(Math.log10(a)) : (a >= THRESHOLD[E] ? DECADE[E] + 1 : DECADE[E]);
}

/** The number JSON.parse gives for the JSON form's text of a float32 value x: the double of float32's
 *  shortest round-tripping decimal, as shortestFloat32 finds it (tried from 8 digits) but by arithmetic,
 *  several times faster, and with an exact half rounded to even as the JSON form's writer does (where
 *  shortestFloat32, converting through text, rounds it up: −0.283203125 is −0.28320312, not −0.28320313).
 *  shortestFloat32 itself below 1e−14 or above 1e30, where no half can arise. */
export function float32Decimal(x) {
  if (!Number.isFinite(x) || x === 0) return x;
  const a = Math.abs(x), e = decade(a);
  const eight = nearest(a, e, 8);
  if (Number.isNaN(eight)) return shortestFloat32(x);
  let best = eight;
  if (Math.fround(eight) !== a) {
    best = nearest(a, e, 9);
    if (Number.isNaN(best)) return shortestFloat32(x);
  } else {
    for (let p = 7; p >= 1; p--) {
      const y = nearest(a, e, p);
      if (Number.isNaN(y)) return shortestFloat32(x);
      if (Math.fround(y) !== a) break;
      best = y;
    }
  }
  return x < 0 ? -best : best;
}

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
