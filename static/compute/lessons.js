// The teaching steps' live figures: the worked attention row of steps 6–9 (chosen by ./worked.js chooseWorked,
// the rule the stage's card reads too), step 14's decoder pairs, step 16's reordering, and the encoder's first
// sub-layer's sizes.
import { argmax, argmin, max, mean, norm, softmax, std } from "./reductions.js";
import { formatNumber } from "../js/format.js";
import { crossMean } from "./tensors.js";
import { chooseWorked } from "./worked.js";

const pairs = (say, tokens, values, digits = 3) =>
  say.listed(
    digits === 3 ? "pairs" : "pairs_2",
    tokens.map((token, i) => ({ token, value: values[i] })),
  );
const vector = (say, values) =>
  say.listed(
    "vector",
    values.map((x) => ({ x })),
  );
const distances = (rows, point) => rows.map((row) => norm(row.map((x, i) => x - point[i])));

/** The worked row of steps 6–9 (./worked.js chooseWorked: the one rule, which the stage's card reads too). */
export const workedChoice = (trace, t, recipe) =>
  chooseWorked(
    trace.source_tokens,
    recipe.nodes.worked_heads.map((ids) => t.node(ids.weights)),
    recipe.constants.worked_words,
    trace.worked_asked,
  );

function claim(say, toks, weights, v, out) {
  const top = argmax(weights),
    dist = distances(v, out),
    near = argmin(dist);
  const head = say.say("claim_head", { token: toks[top], weight: weights[top] });
  if (near === top) {
    const others = toks.map((_, j) => j).filter((j) => j !== top);
    const next = others.length ? others.reduce((a, j) => (dist[j] < dist[a] ? j : a)) : null;
    const tail = next === null ? "" : say.say("claim_next", { token: toks[next], distance: dist[next] });
    return say.say("claim_nearest", { head, token: toks[top], distance: dist[top], tail });
  }
  return say.say("claim_elsewhere", {
    head,
    distance: dist[top],
    token: toks[top],
    near_token: toks[near],
    near_distance: dist[near],
    rest: 1 - weights[top],
  });
}

function workedRow(trace, t, recipe, say) {
  const c = workedChoice(trace, t, recipe),
    ids = recipe.nodes.worked_heads[c.head],
    r = c.row,
    j = c.key;
  const scoresNode = t.node(ids.scores),
    scores = t.tensor(ids.scores).row(r);
  const weights = t.tensor(ids.weights).row(r),
    q = t.tensor(ids.q).row(r),
    k = t.tensor(ids.k).row(j);
  const v = t.tensor(ids.v).rows(),
    out = t.tensor(ids.out).row(r);
  const alpha = scoresNode.attrs.alpha ?? 1.0;
  const unscaled = softmax(scores.map((x) => x / alpha)),
    toks = trace.source_tokens,
    top = argmax(weights);
  let reason = say.say(`reason_${c.rule}`, {
    head: c.head + 1,
    rows: c.rows,
    heads: c.heads,
    tokens: toks.length,
    row_token: toks[r],
    row: r + 1, // rows, heads and columns as a reader counts them: from 1
    weight: weights[top],
    key_token: toks[j],
  });
  if (c.missing)
    reason = say.say("reason_missing", { asked_head: c.missing.head + 1, asked_row: c.missing.row + 1, reason });
  const products = q.map((x, i) => x * k[i]);
  return {
    worked_head: c.head + 1,
    worked_row: r + 1,
    worked_token: toks[r],
    worked_q_col: t.node(ids.q).attrs.starts[0] + 1,
    worked_reason: reason,
    worked_key_token: toks[j],
    worked_q: vector(say, q),
    worked_k: vector(say, k),
    worked_qk_products: vector(say, products),
    worked_qk_dot: products.reduce((a, x) => a + x, 0),
    worked_qk_score: scores[j],
    worked_scores: pairs(say, toks, scores),
    worked_weights: pairs(say, toks, weights),
    worked_unscaled_weights: pairs(say, toks, unscaled),
    worked_top_token: toks[top],
    worked_top_weight: weights[top],
    worked_unscaled_top_weight: max(unscaled),
    worked_blend: say.listed(
      "blend",
      toks.map((token, i) => ({ weight: weights[i], token })),
    ),
    worked_output: vector(say, out),
    worked_v_top: vector(say, v[top]),
    worked_distances: pairs(say, toks, distances(v, out), 2),
    worked_claim: claim(say, toks, weights, v, out),
  };
}

// numpy's argsort of a short row is stable; read backwards, the largest first and a tie's later index first
const largestFirst = (row) => row.map((x, i) => i).sort((a, b) => row[b] - row[a] || b - a);

function reordering(trace, t, recipe, say) {
  const cross = crossMean(t, recipe.nodes.last_cross_weights),
    { und, units_before_und: units } = recipe.constants;
  const { source_tokens: src, target_tokens: rows, output_tokens: out } = trace;
  const splits = [];
  let found = 0,
    counted = 0;
  out.forEach((piece, r) => {
    if (piece === und) {
      const [a, b] = largestFirst(cross[r]);
      splits.push({ row: r + 1, reads: rows[r], a: src[a], wa: cross[r][a], b: src[b], wb: cross[r][b] });
    }
    if (r + 1 < out.length && out[r + 1] === und && Object.hasOwn(units, piece)) {
      counted += 1;
      found += src[argmax(cross[r])] === units[piece] ? 1 : 0;
    }
  });
  return {
    und_rows: splits.length ? say.listed("und_rows", splits) : say.say("und_none"),
    units_on_their_word: counted ? say.say("units_found", { found, units: counted }) : say.say("units_none"),
  };
}

const rowNorms = (rows) => rows.map(norm);

function layoutFigures(trace, t, recipe, say) {
  const n = recipe.nodes,
    figures = { scaled_row_norms: null, pe_row_norm: null, ln_row_mean: null, ln_row_std: null };
  if (t.has(n.scaled)) {
    // the paper's embedding: √d·E[token] + PE
    const pe = t.tensor(t.node(n.x0).inputs[1]).rows();
    figures.scaled_row_norms = pairs(say, trace.source_tokens, rowNorms(t.tensor(n.scaled).rows()), 2);
    figures.pe_row_norm = Number(formatNumber(mean(rowNorms(pe)), "fixed4"));
  }
  if (t.has(n.first_ln)) {
    // post-LN: the first sub-layer's LayerNorm output
    const row = t.tensor(n.first_ln).row(0);
    Object.assign(figures, { ln_row_mean: mean(row), ln_row_std: std(row) });
  }
  return figures;
}

/** Every teaching figure of lessons.teaching_figures; a layout's missing tensors give null, as served. */
export function teachingFigures(trace, t, recipe, say) {
  const n = recipe.nodes,
    active = t
      .tensor(n.ffn_hidden)
      .rows()
      .map((row) => row.filter((x) => x > 0).length);
  const [x, sub] = t.node(n.first_sum).inputs.map((id) => rowNorms(t.tensor(id).rows()));
  const { target_tokens: rows, output_tokens: out } = trace;
  const context = (i) =>
    say.listed(
      "words",
      rows.slice(0, i + 1).map((word) => ({ word })),
    );
  return {
    ...workedRow(trace, t, recipe, say),
    ...reordering(trace, t, recipe, say),
    decoder_pairs: say.listed(
      "decoder_pairs",
      out.map((writes, i) => ({ context: context(i), writes })),
    ),
    row_reads_writes: out.map((writes, i) => say.say("reads_writes", { reads: rows[i], writes })),
    ffn_active_units: mean(active),
    ffn_active_min: Math.min(...active),
    ffn_active_max: Math.max(...active),
    attn_input_norm: mean(x),
    attn_output_norm: mean(sub),
    ...layoutFigures(trace, t, recipe, say),
  };
}
