// The parity rule between a trace static/compute/trace.js computes and the server's (/api/trace as the page
// decodes it): the header's fields equal, the lens's top pieces to the engine's rule, the nodes to
// ./engine_compare.mjs's rule and in the page's decoded form, the article's live figures to 1e-9 of their
// size (computed from the server's nodes) or to OWN_FIGURES (from our own), and the scene exactly.
// Shared by the Node tests (test_local_trace.py, test_local_derived.py) and Chromium's (test_browser_engine.py).
import { compareTrace, ATOL, RTOL } from "./engine_compare.mjs";

export const FIGURES_RELATIVE = 1e-9;
// figures computed from our own nodes: a figure reduces many values (a sum of logs, a mean), so ten times the
// nodes' 1e-5, and a number in a sentence may land on the other side of a rounding edge (one in its last digit)
export const OWN_FIGURES = { absolute: 10 * ATOL, relative: 10 * RTOL, lastDigit: true };
const NUMBER = /[−-]?\d+(?:\.\d+)?/g;

/** `a` and `b` the same text but for decimals that differ by at most one in their last printed digit
 *  (whole numbers, counts and rows, exactly). */
function sameButLastDigit(a, b) {
  const split = (t) => ({ words: t.split(NUMBER), numbers: t.match(NUMBER) || [] });
  const x = split(a),
    y = split(b),
    value = (n) => Number(n.replace("−", "-"));
  return (
    x.words.join("\u0000") === y.words.join("\u0000")
    && x.numbers.length === y.numbers.length
    && x.numbers.every((n, i) => {
      const m = y.numbers[i],
        decimals = (m.split(".")[1] || "").length;
      return (
        n === m
        || (decimals > 0 && n.length === m.length && Math.abs(value(n) - value(m)) <= 1.000001 * 10 ** -decimals)
      );
    })
  );
}

export const canonical = (v) =>
  JSON.stringify(v, (k, x) =>
    x && typeof x === "object" && !Array.isArray(x)
      ? Object.fromEntries(
          Object.keys(x)
            .sort()
            .map((key) => [key, x[key]]),
        )
      : x,
  );
export const near = (a, b) => Math.abs(a - b) <= ATOL + RTOL * Math.abs(b);
const kind = (v) => (v === null ? "null" : typeof v);

/** Where two JSON values differ, as text: numbers to `absolute` plus `relative` of their size (both 0:
 *  exactly), text exactly (`lastDigit`: but for numbers one apart in their last digit), everything else
 *  exactly, objects with the same keys (`ordered`: in the same order). */
export function differences(
  ours,
  theirs,
  path,
  out = [],
  { relative = 0, absolute = 0, ordered = false, lastDigit = false } = {},
) {
  const rule = { relative, absolute, ordered, lastDigit };
  if (typeof theirs === "number" && typeof ours === "number") {
    if (!(
      ours === theirs || Math.abs(ours - theirs) <= absolute + relative * Math.max(Math.abs(ours), Math.abs(theirs))
    )) {
      out.push(`${path}: ${ours} ≠ ${theirs}`);
    }
  } else if (Array.isArray(theirs) && Array.isArray(ours)) {
    if (ours.length !== theirs.length) out.push(`${path}: ${ours.length} items ≠ ${theirs.length}`);
    else theirs.forEach((x, i) => differences(ours[i], x, `${path}[${i}]`, out, rule));
  } else if (theirs && ours && typeof theirs === "object" && typeof ours === "object") {
    const keys = (o) => (ordered ? Object.keys(o) : Object.keys(o).sort()).join(",");
    if (keys(ours) !== keys(theirs)) {
      const only = [
        ...Object.keys(ours)
          .filter((k) => !(k in theirs))
          .map((k) => `${k} only in ours`),
        ...Object.keys(theirs)
          .filter((k) => !(k in ours))
          .map((k) => `${k} only in the server's`),
      ];
      out.push(`${path}: keys ${only.length ? only.join(", ") : "in another order"}`);
    }
    for (const k of Object.keys(theirs)) if (k in ours) differences(ours[k], theirs[k], `${path}.${k}`, out, rule);
  } else if (
    ours !== theirs
    && !(lastDigit && typeof ours === "string" && typeof theirs === "string" && sameButLastDigit(ours, theirs))
  ) {
    out.push(`${path}: ${JSON.stringify(ours)} ≠ ${JSON.stringify(theirs)}`);
  }
  return out;
}

/** The header's differences: every field but scene and derived equal; the lens's top pieces to the rule:
 *  each slot's p near the server's, and its piece the server's unless the two are tied to the rule (our
 *  probability of the server's piece near the server's: float32 ties among pieces the model never writes,
 *  which torch's topk orders as it likes). `pieces`: the vocabulary. */
export function headerProblems(ours, theirs, pieces) {
  const problems = [];
  const keys = Object.keys(theirs).filter((k) => !["scene", "derived", "nodes", "lens"].includes(k));
  if (canonical(Object.keys(ours)) !== canonical(Object.keys(theirs)))
    problems.push(`keys ${Object.keys(ours)} ≠ ${Object.keys(theirs)}`);
  for (const k of keys)
    if (canonical(ours[k]) !== canonical(theirs[k]))
      problems.push(`${k}: ${canonical(ours[k])} ≠ ${canonical(theirs[k])}`);
  const bare = (l) => l.map(({ top, ...rest }) => ({ ...rest, rows: top.map((row) => row.length) }));
  if (canonical(bare(ours.lens)) !== canonical(bare(theirs.lens)))
    return [...problems, `lens: ${canonical(bare(ours.lens))} ≠ ${canonical(bare(theirs.lens))}`];
  ours.lens.forEach((l, i) => {
    const probs = ours.nodes.find((x) => x.id === l.probs),
      width = probs.shape.at(-1);
    l.top.forEach((row, r) =>
      row.forEach((x, j) => {
        const want = theirs.lens[i].top[r][j],
          ourP = probs.data[r * width + pieces.indexOf(want.piece)];
        if (!near(x.p, want.p)) problems.push(`lens ${i} row ${r} top ${j}: p ${x.p} ≠ ${want.p}`);
        else if (x.piece !== want.piece && !near(ourP, want.p))
          problems.push(`lens ${i} row ${r} top ${j}: ${x.piece} ≠ ${want.piece}`);
      }),
    );
  });
  return problems;
}

/** The nodes' differences: the engine's rule on the values, and the page's form as its decoder gives it
 *  (static/js/compact.js: a float32 node's data a Float32Array, −∞ as −Infinity; any other node's the
 *  JSON's array, every value exactly). */
export function nodeProblems(ours, theirs) {
  const asNumbers = (t) => ({ ...t, nodes: t.nodes.map((x) => ({ ...x, data: Float64Array.from(x.data, Number) })) });
  const problems = compareTrace(asNumbers(ours), theirs);
  ours.nodes.slice(0, theirs.nodes.length).forEach((x, i) => {
    const want = theirs.nodes[i].data,
      float32 = x.dtype === "float32";
    if (
      x.data.length !== want.length
      || float32 !== x.data instanceof Float32Array
      || float32 !== want instanceof Float32Array
    )
      problems.push(`node ${x.id}: not in the page's form`);
    else if (!float32 && (canonical(x.data) !== canonical(want) || x.data.some((v, j) => kind(v) !== kind(want[j])))) {
      problems.push(`node ${x.id}: ${canonical(x.data)} ≠ ${canonical(want)}`);
    }
  });
  return problems;
}

/** Every difference of a trace computed here from the server's, by part: `trace` (header and nodes),
 *  `derived` (the live figures, computed from our own nodes: OWN_FIGURES) and `scene` (exactly, keys in the
 *  server's order, as tests/scene/test_local_scene.py holds it). */
export function traceProblems(ours, theirs, pieces) {
  return {
    trace: [...headerProblems(ours, theirs, pieces), ...nodeProblems(ours, theirs)],
    derived: differences(ours.derived, theirs.derived, "derived", [], OWN_FIGURES),
    scene: differences(ours.scene, theirs.scene, "scene", [], { ordered: true }),
  };
}
