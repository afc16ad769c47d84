// The live figures' sentences, filled from the table of templates /api/live sends (`sentences`: the article's
// words, kept beside the recipe in article/sentences.py), with the page's one way of printing a number
// (../js/format.js formatNumber):
//
//   {name}        the value as text        {name:.Nm}  N decimals and a true minus sign
//   {name:.Nf}    N decimals ("fixedN")    {name:g}    six significant digits ("sig6")
//
// sentences(table) → { say(entry, values), listed(entry, items) }; a list entry is {item, sep}.

import { formatNumber } from "../js/format.js";

const PLACEHOLDER = /\{(\w+)(?::([^}]*))?\}/g;
const TRUE_MINUS = "\u2212";
const FIXED = /^\.(\d)([mf])$/;

function field(value, spec, name) {
  if (spec === undefined) {
    if (typeof value !== "string" && !Number.isInteger(value)) throw new TypeError(`{${name}} is not text: ${value}`);
    return String(value);
  }
  const fixed = FIXED.exec(spec);
  if (fixed) {
    const text = formatNumber(value, `fixed${fixed[1]}`);
    return fixed[2] === "m" ? text.replaceAll("-", TRUE_MINUS) : text;
  }
  if (spec === "g") return formatNumber(value, "sig6");
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
