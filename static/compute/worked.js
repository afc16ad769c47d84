// The worked attention row (steps 6–9) for one input: the one rule that picks it (chooseWorked: the live
// figures of ./lessons.js and the stage's card both read it) and the stage's part of it; the structure
// document (scene/structure.py) names every node read.
//
//   chooseWorked(tokens, heads, words, asked) → {head, row, key, rule, rows, heads, missing?}
//   workedOf(definition, trace, node) → scene.worked ({} for a graph without the sub-layer)
//   withWorked(steps, worked, definition, tokenCount) → the steps with the row's targets put in
//
// `definition` is the document's personal.worked; `node(id)` a trace node ({data, shape}).
import { argmax } from "./reductions.js";

// The kinds of row, best first: a tens word resting mostly on the unit right after it (the question German's
// order raises: zweiundvierzig says the unit first); a word resting most on another word; the end token resting
// on a word; any row.
const RULES = ["tens", "word", "end", "any"];

/** Which kind of row (RULES) a row is: its token, its largest weight `peak` and the key `key` it falls on. */
function ruleOf(tokens, row, key, peak, words) {
  const onWord = key !== row && tokens[key] !== words.eos;
  if (onWord && key === row + 1 && peak > 0.5 && words.tens.includes(tokens[row]) && words.units.includes(tokens[key]))
    return "tens";
  if (onWord) return tokens[row] === words.eos ? "end" : "word";
  return "any";
}

/** Of every row of every head (`heads`: each head's weights node, {data, shape}), the row steps 6–9 follow:
 * of the best kind of row (RULES) the input has, the one with the largest weight; ties to the first head,
 * then row. `words`: {eos, tens, units} (article/live_nodes.py WORKED_WORDS). A row the reader chose (`asked`:
 * {head, row}, counted from 0) is followed instead (rule "chosen"), where the input has it; where it has not,
 * the rule's row, with `missing` the row asked for. */
export function chooseWorked(tokens, heads, words, asked = null) {
  const rows = [];
  heads.forEach(({ data, shape: [count, keys] }, head) => {
    for (let row = 0; row < count; row++) {
      const weights = data.slice(row * keys, (row + 1) * keys),
        key = argmax(weights);
      rows.push({ head, row, key, peak: weights[key], rule: ruleOf(tokens, row, key, weights[key], words) });
    }
  });
  const better = (r, a) => RULES.indexOf(r.rule) < RULES.indexOf(a.rule) || (r.rule === a.rule && r.peak > a.peak);
  const picked = asked && rows.find((r) => r.head === asked.head && r.row === asked.row);
  const best = picked ? { ...picked, rule: "chosen" } : rows.reduce((a, r) => (better(r, a) ? r : a), rows[0]);
  const missing = asked && !picked ? { missing: { head: asked.head, row: asked.row } } : {};
  return {
    head: best.head,
    row: best.row,
    key: best.key,
    rule: best.rule,
    rows: rows.length,
    heads: heads.length,
    ...missing,
  };
}

export function workedOf(definition, trace, node) {
  if (!definition) return {};
  const c = chooseWorked(trace.source_tokens, definition.weights.map(node), definition.words, trace.worked_asked);
  return { ...definition.heads[c.head], heads: c.heads, row: c.row, key: c.key, rule: c.rule };
}

// A step animation's targets with the row put in: the query cell's animation points at the row's query (its
// head's first column), the sweep ends with the row framed; each says which phase it shows.
function targets(animation, worked, definition, n) {
  const r = worked.row,
    out = { ...animation, worked: definition.phases[animation.name] };
  if (animation.name === definition.query_cell && animation.out) Object.assign(out, { row: r, col: worked.q_cols[0] });
  if (animation.name === definition.sweep) {
    const [off, dk] = worked.v_cols;
    out.rects = [
      [worked.scores, [r, r, 0, n - 1]],
      [worked.weights, [r, r, 0, n - 1]],
      [worked.v_full, [0, n - 1, off, off + dk - 1]],
      [worked.out, [r, r, 0, dk - 1]],
    ];
  }
  return out;
}

export function withWorked(steps, worked, definition, tokenCount) {
  if (!Object.keys(worked).length) return steps;
  return steps.map((s) =>
    Object.hasOwn(definition.phases, s.animation.name ?? "")
      ? { ...s, animation: targets(s.animation, worked, definition, tokenCount) }
      : s,
  );
}
