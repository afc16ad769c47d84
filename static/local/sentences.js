// The live figures' sentences, formatted from the table Python formats from too (article/sentences.py, sent
// in /api/live's `sentences`), with Python's own number formats:
//
//   {name}        the value as text        {name:.Nm}  N decimals and a true minus sign (the page's way)
//   {name:.Nf}    Python's f"{x:.Nf}"      {name:g}    Python's f"{x:g}"
//
// sentences(table) → { say(entry, values), listed(entry, items) }; a list entry is {item, sep}.

const PLACEHOLDER = /\{(\w+)(?::([^}]*))?\}/g;
const TRUE_MINUS = "\u2212";

/** Python's f"{x:.{digits}f}": the exact binary value rounded to `digits` decimals, a tie to even. */
export function pythonFixed(x, digits) {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  const sign = x < 0 || Object.is(x, -0) ? "-" : "";
  const a = Math.abs(x), twice = a * 2 ** (digits + 1);  // exact: a power of two
  // a tie lies exactly halfway only when a·2^(digits+1) is an odd integer; toFixed would round it up
  if (!(Number.isSafeInteger(twice) && twice % 2 === 1)) return sign + a.toFixed(digits);
  const low = Math.floor(a * 10 ** digits), even = low % 2 === 0 ? low : low + 1;
  const text = String(even).padStart(digits + 1, "0");
  return sign + (digits ? `${text.slice(0, -digits)}.${text.slice(-digits)}` : text);
}

/** Python's round(x, digits) for a float: the float nearest the correctly rounded decimal. */
export const pythonRound = (x, digits) => Number(pythonFixed(x, digits));

const strip = (text) => text.includes(".") ? text.replace(/0+$/, "").replace(/\.$/, "") : text;

/** Python's f"{x:g}": six significant digits, trailing zeros dropped, exponent form outside 1e-4 … 1e6. */
export function pythonGeneral(x) {
  if (x === 0) return Object.is(x, -0) ? "-0" : "0";
  const [mantissa, exp] = x.toExponential(5).split("e");
  const e = Number(exp);
  if (e >= -4 && e < 6) return strip(x.toFixed(5 - e));
  return `${strip(mantissa)}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
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
