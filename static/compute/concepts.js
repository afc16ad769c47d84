// The concept questions of the "predict, then reveal" exercises: why the model is built as it is (why divide by
// √d_k, why several heads, why the residual sum, why the mask), beside ./exercises.js's questions of how much;
// each a choice among reasons, with this input's own numbers in its answer.
import { cell, options } from "./exercise_forms.js";
import { argmax, max, softmax } from "./reductions.js";

/** A concept question: a choice among reasons (`choices`: [key, sentence key]), `right` the key that is right. */
function concept(ctx, step, key, choices, right, numbers, evidence) {
  const { say } = ctx;
  const q = say.say(`concept_${key}_question`, numbers),
    why = say.say(`concept_${key}_why`, numbers);
  const labelled = choices.map((k) => [k, say.say(`concept_${key}_${k}`, numbers)]);
  return { ...options(say, step, `why-${key}`, q, why, labelled, [right], evidence), concept: true };
}

/** Step 8: why divide by √d_k (the worked row's top weight with the division and without). */
export function whyScale(ctx, c) {
  const { t, trace } = ctx,
    ids = ctx.heads[c.head],
    node = t.node(ids.scores),
    alpha = node.attrs.alpha ?? 1.0;
  const w = t.tensor(ids.weights).row(c.row),
    u = softmax(
      t
        .tensor(ids.scores)
        .row(c.row)
        .map((x) => x / alpha),
    );
  const numbers = { head: c.head + 1, token: trace.source_tokens[c.row], scaled: max(w), unscaled: max(u) };
  return concept(ctx, 8, "scale", ["sum", "wide", "positive"], "wide", numbers, cell(ids.weights, c.row, argmax(w)));
}

/** Step 10: why several heads (where each head's row of the worked token rests most). */
export function whyHeads(ctx, c) {
  const { t, say, trace, recipe } = ctx,
    toks = trace.source_tokens;
  const tops = ctx.heads.map((ids, h) => {
    const w = t.tensor(ids.weights).row(c.row),
      j = argmax(w);
    return { head: h + 1, token: toks[j], weight: w[j] };
  });
  const { n_heads: heads, d_k: dK, d_model: dModel } = recipe.constants;
  const numbers = {
    heads,
    d_k: dK,
    d_model: dModel,
    token: toks[c.row],
    tops: say.listed("concept_heads_top", tops),
  };
  const evidence = cell(ctx.heads[c.head].weights, c.row, c.key);
  return concept(ctx, 10, "heads", ["params", "several", "order"], "several", numbers, evidence);
}

/** Step 11: why the residual sum (the first cell of encoder 1's first sub-layer: input, output, sum). */
export function whyResidual(ctx) {
  const { t, recipe } = ctx,
    total = t.tensor(recipe.nodes.first_sum).data[0],
    proj = t.tensor(recipe.nodes.first_proj).data[0];
  const numbers = { proj, x: total - proj, sum: total };
  return concept(ctx, 11, "residual", ["norm", "sum", "path"], "path", numbers, cell(recipe.nodes.first_sum, 0, 0));
}

/** Step 15: why the mask (row 0 of the decoder's first self-attention head, which may read only itself). */
export function whyMask(ctx) {
  const { t, trace, recipe } = ctx,
    block = recipe.nodes.first_decoder_weights;
  const numbers = { token: trace.target_tokens[0], weight: t.tensor(block).at(0, 0) };
  return concept(ctx, 15, "mask", ["speed", "future", "english"], "future", numbers, cell(block, 0, 0));
}
