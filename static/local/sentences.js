// The live figures' sentences, formatted from the table Python formats from too (article/sentences.py, sent
// in /api/live's `sentences`), with Python's own number formats:
//
//   {name}        the value as text        {name:.Nm}  N decimals and a true minus sign (the page's way)
//   {name:.Nf}    Python's f"{x:.Nf}"      {name:g}    Python's f"{x:g}"
//
// sentences(table) → { say(entry, values), listed(entry, items) }; a list entry is {item, sep}.

const PLACEHOLDER = /\{(\w+)(?::([^}]*))?\}/g;
const TRUE_MINUS = "\u2212";

// A finite double's exact decimal value: |x| = digits × 10^−point (a double is m·2^k, and 2^−k = 5^k / 10^k).
function exactDecimal(x) {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(x));
  const high = view.getUint32(0), biased = high >>> 20;
  const fraction = (BigInt(high & 0xfffff) << 32n) | BigInt(view.getUint32(4));
  const m = biased ? fraction | (1n << 52n) : fraction, k = (biased || 1) - 1075;
  return k >= 0 ? { digits: m << BigInt(k), point: 0 } : { digits: m * 5n ** BigInt(-k), point: -k };
}

// |x| rounded to `decimals` places (any integer), a tie to even, as n with |x| ≈ n × 10^−decimals
function rounded(exact, decimals) {
  const cut = exact.point - decimals;
  if (cut <= 0) return exact.digits * 10n ** BigInt(-cut);
  const unit = 10n ** BigInt(cut), head = exact.digits / unit, twice = 2n * (exact.digits % unit);
  return twice > unit || (twice === unit && head % 2n === 1n) ? head + 1n : head;
}

function withPoint(n, decimals) {
  const text = n.toString().padStart(decimals + 1, "0");
  return decimals > 0 ? `${text.slice(0, -decimals)}.${text.slice(-decimals)}` : text;
}

const signOf = (x) => x < 0 || Object.is(x, -0) ? "-" : "";

function special(x) {
  if (Number.isNaN(x)) return "nan";
  return Number.isFinite(x) ? null : x > 0 ? "inf" : "-inf";
}

/** Python's f"{x:.{digits}f}": the exact binary value rounded to `digits` decimals, a tie to even. */
export function pythonFixed(x, digits) {
  return special(x) ?? signOf(x) + withPoint(rounded(exactDecimal(x), digits), digits);
}

/** Python's round(x, digits) for a float: the float nearest the correctly rounded decimal. */
export const pythonRound = (x, digits) => Number(pythonFixed(x, digits));

const strip = (text) => text.includes(".") ? text.replace(/0+$/, "").replace(/\.$/, "") : text;
const SIGNIFICANT = 6;  // %g's default precision

/** Python's f"{x:g}": six significant digits, trailing zeros dropped, exponent form outside 1e-4 … 1e6. */
export function pythonGeneral(x) {
  if (special(x)) return special(x);
  if (x === 0) return `${signOf(x)}0`;
  const exact = exactDecimal(x);
  let e = exact.digits.toString().length - 1 - exact.point;
  let n = rounded(exact, SIGNIFICANT - 1 - e);
  if (n.toString().length > SIGNIFICANT) n = rounded(exact, SIGNIFICANT - 1 - ++e);  // 999999.5 → 1e+06
  if (e >= -4 && e < SIGNIFICANT) return signOf(x) + strip(withPoint(n, SIGNIFICANT - 1 - e));
  const exponent = `e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
  return signOf(x) + strip(withPoint(n, SIGNIFICANT - 1)) + exponent;
}

function field(value, spec, name) {
  if (spec === undefined) {
    if (typeof value !== "string" && !Number.isInteger(value)) throw new TypeError(`{${name}} is not text: ${value}`);
    return String(value);
  }
  const fixed = /^\.(\d)([mf])$/.exec(spec);
  if (fixed) {
    const text = pythonFixed(value, Number(fixed[1]));
    return fixed[2] === "m" ? text.replaceAll("-", TRUE_MINUS) : text;
  }
  if (spec === "g") return pythonGeneral(value);
  throw new Error(`unknown format {${name}:${spec}}`);
}

function format(template, values) {
  return template.replace(PLACEHOLDER, (_, name, spec) => {
    if (!(name in values)) throw new Error(`no value for {${name}} in ${template}`);
    return field(values[name], spec, name);
  });
}

/** The table's two readers: a sentence with its values, and a list of items joined. */
export function sentences(table) {
  const entry = (name, kind) => {
    const found = table[name];
    if (found === undefined || (typeof found === "string") !== (kind === "sentence")) {
      throw new Error(`the sentence table has no ${kind} ${name}`);
    }
    return found;
  };
  return {
    say: (name, values = {}) => format(entry(name, "sentence"), values),
    listed: (name, items) => {
      const list = entry(name, "list");
      return items.map((item) => format(list.item, item)).join(list.sep);
    },
  };
}
