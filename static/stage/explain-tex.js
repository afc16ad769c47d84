// The formulas' LaTeX for ./explain.js and its evaluators (./evaluators.js): numbers through the site's one
// formatter, text escaped, subscripts, and a long sum shortened to its first terms and its last.
import { formatNumber } from "../js/format.js";

const FIRST = 2; // a long sum shows its first FIRST terms, "…", its last term and its total

/** A number as LaTeX, through the site's one formatter (format.js). */
export function tex(v, fmt = "sig4") {
  if (v === -Infinity) return "-\\infty";
  if (v === Infinity) return "\\infty";
  if (typeof v !== "number" || Number.isNaN(v)) return "\\text{NaN}";
  const s = formatNumber(v, Number.isInteger(v) && Math.abs(v) < 1e9 ? "text" : fmt);
  return s.replace(/·10\^(-?\d+)/, "\\cdot 10^{$1}");
}
export const par = (v, fmt) => (v < 0 ? `(${tex(v, fmt)})` : tex(v, fmt));
export const plus = (v) => (v < 0 ? ` - ${tex(-v)}` : ` + ${tex(v)}`); // "+ b" written with b's sign
/** Text inside \text{…}, escaped. */
export function texText(s) {
  return String(s).replace(
    /[\\{}&%$#_^~]/g,
    (m) => ({ "\\": "\\textbackslash{}", "~": "\\textasciitilde{}", "^": "\\textasciicircum{}" })[m] || `\\${m}`,
  );
}
export const sub = (idx) => (idx.length ? `_{${idx.join(",")}}` : "");
/** A sum of many terms: the first few, "…", the last. */
export function sum(terms) {
  if (terms.length <= FIRST + 2) return terms.join(" + ");
  return [...terms.slice(0, FIRST), "\\dots", terms[terms.length - 1]].join(" + ");
}
export const tokenNote = (name) => (name === undefined ? "" : `\\;\\text{“${texText(name)}”}`);
