// How the site prints a number for the reader: the same named formats as article/format.py (Jinja's
// `number` filter, the server-filled live values); tests/page/test_format.py runs both on one table of values.
//
//   text     String(n) (1, 0.25, 1e-7); yes/no for a boolean
//   int      Math.round, thousands split by a thin space: 61 472
//   fixedN   toFixed(N)
//   pctN     100·v, toFixed(N), and a per-cent sign
//   sciN     toExponential(N) written as the page writes powers of ten: 1.2·10^-7
//   sigN     N significant digits, trailing zeros dropped; sci style outside 10^-4 … 10^N (like %g)
//
// N is one digit. Any format prints null (or undefined) as an en dash, an array as its items (each in
// the format) joined by spaces, and anything that is not a number as String() does. An unknown format
// name throws.

const THIN_SPACE = "\u2009";
const PARAMETRIC = /^(fixed|pct|sci|sig)(\d)$/;

function grouped(n) {
  if (Math.abs(n) >= 1e21) return String(n); // written with an exponent: no groups
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, THIN_SPACE);
}

function sci(v, decimals) {
  if (v === 0) return "0";
  return v.toExponential(decimals).replace("e", "·10^").replace("^+", "^");
}

const strip = (text) => (text.includes(".") ? text.replace(/0+$/, "").replace(/\.$/, "") : text);

function sig(v, places) {
  if (v === 0) return "0";
  const [mantissa, exp] = v.toExponential(places - 1).split("e");
  const e = Number(exp);
  if (e >= -4 && e < places) return strip(v.toFixed(places - 1 - e));
  return `${strip(mantissa)}·10^${e}`;
}

export function formatNumber(value, format = "text") {
  const m = PARAMETRIC.exec(format);
  if (format !== "text" && format !== "int" && !m) throw new Error(`unknown number format "${format}"`);
  if (value === null || value === undefined) return "–";
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (Array.isArray(value)) return value.map((v) => formatNumber(v, format)).join(" ");
  if (typeof value !== "number") return String(value);
  if (format === "text" || !Number.isFinite(value)) return String(value);
  if (format === "int") return grouped(Math.round(value));
  const digits = Number(m[2]);
  switch (m[1]) {
    case "fixed":
      return value.toFixed(digits);
    case "pct":
      return (100 * value).toFixed(digits) + "%";
    case "sci":
      return sci(value, digits);
    default:
      return sig(value, Math.max(digits, 1));
  }
}

/** The float64 that float32 `x`'s shortest round-trip decimal reads as, found through text: float32Decimal's
 *  fallback where its arithmetic leaves the exact range (an exact half rounds up here, never reached there). */
function shortestFloat32(x) {
  if (!Number.isFinite(x) || x === 0) return x;
  // 9 significant digits always round-trip a float32; if p digits do, p + 1 do. Most weights need 8
  // (then 7 fails), a few 9, so trying 8 first takes about two conversions per value.
  const eight = Number(x.toPrecision(8));
  if (Math.fround(eight) !== x) return Number(x.toPrecision(9));
  let best = eight;
  for (let p = 7; p >= 1; p--) {
    const y = Number(x.toPrecision(p));
    if (Math.fround(y) !== x) break;
    best = y;
  }
  return best;
}

// float32Decimal: the same number by arithmetic, with the JSON writer's rounding of an exact half (to even).
const POW10 = Float64Array.from({ length: 23 }, (_, i) => Number(`1e${i}`)); // exact doubles up to 1e22

// m · 10^s, rounded once (so exactly the double the text "<m>e<s>" parses to: m < 2^53, |s| ≤ 22).
const scaled = (m, s) => (s >= 0 ? m * POW10[s] : m / POW10[-s]);

// The integer nearest a · 10^−s, exactly (BigInt: a = M · 2^k), an exact half going to the even one as the
// JSON form's writer (Ryu, in orjson) rounds. Only near a half, so rarely.
function exactNearest(a, s) {
  F32[0] = a;
  const E = BITS[0] >>> 23,
    M = BigInt(E ? (BITS[0] & 0x7fffff) | 0x800000 : BITS[0] & 0x7fffff);
  const k = (E || 1) - 150,
    t = -s;
  let num = M,
    den = 1n;
  if (t >= 0) num *= 10n ** BigInt(t);
  else den *= 10n ** BigInt(-t);
  if (k >= 0) num <<= BigInt(k);
  else den <<= BigInt(-k);
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
  const q = s >= 0 ? a / POW10[s] : a * POW10[-s]; // a · 10^−s, off by at most 10^9 · 2^−53
  if (q >= POW10[p] || q < POW10[p - 1]) return NaN;
  const m = Math.round(q);
  return scaled(Math.abs(q - m) > 0.4999 ? exactNearest(a, s) : m, s);
}

// floor(log10 a) for a float32 a > 0 from its binary exponent: log10 2^E's floor, or one more from the
// threshold 10^(that + 1) on. Where the threshold's double is not exact, nearest() finds q out of range
// and the caller falls back to the text way.
const F32 = new Float32Array(1),
  BITS = new Uint32Array(F32.buffer);
const DECADE = new Int32Array(256),
  THRESHOLD = new Float64Array(256);
for (let E = 1; E < 255; E++) {
  DECADE[E] = Math.floor((E - 127) * Math.LOG10E * Math.LN2);
  THRESHOLD[E] = Number(`1e${DECADE[E] + 1}`);
}

function decade(a) {
  F32[0] = a;
  const E = BITS[0] >>> 23;
  return E === 0 ? Math.floor(Math.log10(a)) : a >= THRESHOLD[E] ? DECADE[E] + 1 : DECADE[E];
}

/** The number JSON.parse gives for the JSON form's text of a float32 value x: the double of float32's
 *  shortest round-tripping decimal, as shortestFloat32 finds it (tried from 8 digits) but by arithmetic,
 *  several times faster, and with an exact half rounded to even as the JSON form's writer does (where
 *  shortestFloat32, converting through text, rounds it up: −0.283203125 is −0.28320312, not −0.28320313).
 *  shortestFloat32 itself below 1e−14 or above 1e30, where no half can arise. */
export function float32Decimal(x) {
  if (!Number.isFinite(x) || x === 0) return x;
  const a = Math.abs(x),
    e = decade(a);
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
