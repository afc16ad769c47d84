// How the site prints a number for the reader: the same named formats as article/format.py (Jinja's
// `number` filter, the server-filled live values); tests/test_format.py runs both on one table of values.
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
  if (Math.abs(n) >= 1e21) return String(n);  // written with an exponent: no groups
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
    case "fixed": return value.toFixed(digits);
    case "pct": return (100 * value).toFixed(digits) + "%";
    case "sci": return sci(value, digits);
    default: return sig(value, Math.max(digits, 1));
  }
}

/** The float64 that float32 `x`'s shortest round-trip decimal reads as: what the JSON document (float32
 *  written at its shortest, by orjson) gives for the same parameter, so both routes hold the same numbers. */
export function shortestFloat32(x) {
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
