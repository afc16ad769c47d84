// The "predict, then reveal" questions about the reader's input, each answered from the trace: the question,
// the right values, the answer said, why, and the cell that is the evidence. Asked only of the paper's layout
// (a trace with the scaled embedding); step 25's count reads the parameters' sizes, which the recipe sends.
import { formatNumber } from "../js/format.js";
import { workedChoice } from "./lessons.js";
import { lossFigures } from "./loss.js";
import { argmax, argmin, max, norm, softmax, sum } from "./reductions.js";
import { cell, exercise, indices, numberQuestion, options } from "./exercise_forms.js";
import { whyHeads, whyMask, whyResidual, whyScale } from "./concepts.js";

/** A cell question on one row of a weight block: right are its largest weight and any within the tie. */
function rowPeak(ctx, step, key, block, row, cols, weights, question, other) {
  const { say, tie } = ctx,
    top = argmax(weights);
  const right = indices(weights, (w) => w >= weights[top] - tie).map((c) => say.say("cell_value", { row, col: c }));
  const choices = cols.map((token, c) => ({
    value: say.say("cell_value", { row, col: c }),
    label: say.say("peak_choice", { token, col: c + 1 }),
  }));
  const pairs = say.listed(
    "pairs",
    cols.map((token, i) => ({ token, value: weights[i] })),
  );
  const why = say.say("peak_why", { row: row + 1, weight: weights[top], token: cols[top], other, pairs });
  const answer = say.say("peak_answer", { token: cols[top], col: top + 1, weight: weights[top] });
  return exercise(say, step, key, "cell", question, why, answer, cell(block, row, top), { block, choices, right });
}

function scale(ctx) {
  const { t, say, trace, recipe } = ctx,
    scaled = t.node(recipe.nodes.scaled);
  const [emb, factor] = scaled.inputs.map((id) => t.tensor(id).data);
  const a = emb[0],
    s = factor[0],
    ans = t.tensor(scaled.id).data[0],
    d = recipe.constants.d_model;
  const q = say.say("scale_question", { token: trace.source_tokens[0], a, d_model: d });
  const why = say.say("scale_why", { d_model: d, s, a, ans });
  return numberQuestion(say, 4, "scale", q, why, ans, 0.01, cell(scaled.id, 0, 0));
}

function queryPeak(ctx, c) {
  const { t, say, trace, recipe, tie } = ctx,
    whole = recipe.nodes.first_q,
    part = ctx.heads[c.head].q;
  const off = t.node(part).attrs.starts[0],
    r = c.row,
    row = t.tensor(part).row(r),
    top = argmax(row);
  const dK = recipe.constants.d_k,
    head = c.head + 1;
  const right = indices(row, (x) => x >= row[top] - tie).map((j) => say.say("cell_value", { row: r, col: off + j }));
  const choices = row.map((_, j) => ({
    value: say.say("cell_value", { row: r, col: off + j }),
    label: say.say("query_choice", { col: off + j + 1 }),
  }));
  const q = say.say("query_question", {
    station: ctx.name(recipe.nodes.worked_station),
    head,
    d_k: dK,
    first: off + 1,
    last: off + dK,
    token: trace.source_tokens[r],
    row: r + 1,
  });
  const columns = say.listed(
    "query_columns",
    row.map((value, j) => ({ col: off + j + 1, value })),
  );
  const why = say.say("query_why", { row: r + 1, head, columns, top: row[top], col: off + top + 1 });
  const answer = say.say("query_answer", { col: off + top + 1, top: row[top] });
  return exercise(say, 6, "query", "cell", q, why, answer, cell(whole, r, off + top), { block: whole, choices, right });
}

const otherHead = (c, shift) => (c.head + shift) % c.heads;

function weightsPeak(ctx, c) {
  const { t, say, trace } = ctx,
    block = ctx.heads[otherHead(c, 1)].weights,
    toks = trace.source_tokens;
  const q = say.say("weights_question", { block: ctx.name(block), token: toks[0] });
  return rowPeak(ctx, 7, "weights", block, 0, toks, t.tensor(block).row(0), q, say.say("weights_other"));
}

function unscaled(ctx, c) {
  const { t, say } = ctx,
    ids = ctx.heads[otherHead(c, 1)],
    node = t.node(ids.scores);
  const alpha = node.attrs.alpha ?? 1.0,
    w = t.tensor(ids.weights).row(0);
  const u = softmax(
      t
        .tensor(ids.scores)
        .row(0)
        .map((x) => x / alpha),
    ),
    top = max(w),
    sharp = max(u);
  const key = sharp >= top + 5e-4 ? "larger" : sharp <= top - 5e-4 ? "smaller" : "same";
  const q = say.say("unscaled_question", { block: ctx.name(node.id), top });
  const wider = say.say("unscaled_wider", { times: 1 / alpha });
  const which = key !== "same" ? "unscaled_why" : top > 0.99 ? "unscaled_why_one" : "unscaled_why_flat";
  const why = say.say(which, { wider, top, unscaled: sharp });
  const choices = ["larger", "smaller", "same"].map((k) => [k, say.say(`unscaled_${k}`)]);
  return options(say, 8, "unscaled", q, why, choices, [key], cell(node.id, 0, argmax(w)));
}

function nearestValue(ctx, c) {
  const { t, say, trace, tie } = ctx,
    ids = ctx.heads[otherHead(c, 2)],
    toks = trace.source_tokens;
  const r = Math.max(0, toks.length - 2),
    w = t.tensor(ids.weights).row(r),
    out = t.tensor(ids.out).row(r);
  const dist = t
      .tensor(ids.v)
      .rows()
      .map((row) => norm(row.map((x, i) => x - out[i]))),
    near = argmin(dist);
  const right = indices(dist, (d) => d <= dist[near] + tie).map(String);
  const q = say.say("nearest_question", { block: ctx.name(ids.out), token: toks[r], row: r + 1 });
  const pairs = (values, list) =>
    say.listed(
      list,
      toks.map((token, i) => ({ token, value: values[i] })),
    );
  const why = say.say("nearest_why", {
    weights: pairs(w, "pairs"),
    distance: dist[near],
    near_token: toks[near],
    near: near + 1,
    distances: pairs(dist, "pairs_2"),
  });
  const choices = toks.map((token, j) => [String(j), say.say("nearest_choice", { token, row: j + 1 })]);
  return options(say, 9, "nearest", q, why, choices, right, cell(ids.out, r, 0));
}

function reluZero(ctx) {
  const { t, say, trace, recipe } = ctx,
    hidden = t.node(recipe.nodes.ffn_hidden);
  const pre = t.tensor(hidden.inputs[0]).row(0),
    after = t.tensor(hidden.id).row(0);
  const zero = indices(after, (x) => x === 0),
    which = zero.length ? zero : indices(after, (x) => x > 0);
  const unit = which[0],
    token = trace.source_tokens[0];
  const asked = say.say(zero.length ? "relu_zeroes" : "relu_passes");
  const q = say.say("relu_question", { block: ctx.name(hidden.id), asked, token });
  const why = say.say(zero.length ? "relu_why" : "relu_why_none", {
    zeros: zero.length,
    units: after.length,
    unit: unit + 1,
    pre: pre[unit],
  });
  const choices = after.map((_, j) => ({
    value: say.say("cell_value", { row: 0, col: j }),
    label: say.say("relu_choice", { unit: j + 1 }),
  }));
  const right = which.map((j) => say.say("cell_value", { row: 0, col: j }));
  return exercise(
    say,
    12,
    "relu",
    "cell",
    q,
    why,
    say.say("relu_answer", { count: which.length, unit: unit + 1 }),
    cell(hidden.id, 0, unit),
    { block: hidden.id, choices, right },
  );
}

function maskFirst(ctx) {
  const { t, say, trace, recipe } = ctx,
    block = recipe.nodes.first_decoder_weights,
    m = trace.target_tokens.length;
  const weight = t.tensor(block).at(0, 0);
  const q = say.say("mask_question", { block: ctx.name(block), token: trace.target_tokens[0] });
  const hidden = m > 2 ? say.say("mask_hidden_many", { count: m - 1 }) : say.say("mask_hidden_one");
  return numberQuestion(say, 15, "mask", q, say.say("mask_why", { hidden, weight }), weight, 0.01, cell(block, 0, 0));
}

function crossFirst(ctx) {
  const { t, say, trace, recipe } = ctx,
    block = recipe.nodes.last_cross_weights.at(-1);
  const q = say.say("cross_question", {
    block: ctx.name(block),
    reads: trace.target_tokens[0],
    writes: trace.output_tokens[0],
  });
  return rowPeak(ctx, 16, "cross", block, 0, trace.source_tokens, t.tensor(block).row(0), q, say.say("cross_other"));
}

function firstProbability(ctx) {
  const { t, say, trace, recipe } = ctx,
    logits = t.tensor(recipe.nodes.logits).row(0);
  const probs = t.tensor(recipe.nodes.probs).row(0),
    top = argmax(probs),
    most = max(logits);
  const lse = most + Math.log(sum(logits.map((x) => Math.exp(x - most)))); // ln Σ_u e^{logit_u}, stably
  const piece = recipe.constants.vocabulary[top],
    logit = logits[top];
  const q = say.say("softmax_question", { reads: trace.target_tokens[0], piece, logit, count: logits.length, lse });
  const why = say.say("softmax_why", { logit, lse, difference: logit - lse, p: probs[top] });
  return numberQuestion(say, 18, "softmax", q, why, probs[top], 0.01, cell(recipe.nodes.probs, 0, top));
}

function turns(ctx) {
  const { t, say, trace, recipe } = ctx,
    written = trace.output_tokens,
    n = written.length;
  const eos = recipe.constants.eos;
  const pieces = say.listed(
    "words",
    written.filter((token) => token !== eos).map((word) => ({ word })),
  );
  const why = say.say(written.at(-1) === eos ? "turns_why_end" : "turns_why_limit", { pieces, turns: n });
  const last = t.tensor(recipe.nodes.probs).row(n - 1);
  return numberQuestion(
    say,
    19,
    "turns",
    say.say("turns_question"),
    why,
    n,
    0,
    cell(recipe.nodes.probs, n - 1, argmax(last)),
    String(n),
  );
}

function smoothedOrPlain(ctx) {
  const { say, recipe } = ctx,
    row = ctx.loss().loss_rows[0],
    smooth = row.loss,
    plain = row.plain_loss;
  const key = smooth > plain + 5e-4 ? "smoothed" : plain > smooth + 5e-4 ? "plain" : "equal";
  const q = say.say("loss_question", { reads: row.reads, reference: row.reference, p: row.p_reference });
  const why = say.say(key === "smoothed" ? "loss_why" : "loss_why_short", { plain, smooth });
  const choices = ["smoothed", "plain", "equal"].map((k) => [k, say.say(`loss_${k}`)]);
  return options(say, 20, "loss", q, why, choices, [key], cell(recipe.nodes.probs, 0, row.reference_id));
}

function dropoutScale(ctx) {
  const { t, say, trace, recipe } = ctx,
    block = recipe.nodes.first_proj,
    p = recipe.constants.dropout;
  const v = t.tensor(block).data[0],
    ans = v / (1 - p);
  const q = say.say("dropout_question", { p, token: trace.source_tokens[0], block: ctx.name(block), v });
  const why = say.say("dropout_why", { keep: 1 - p, v, ans });
  return numberQuestion(say, 22, "dropout", q, why, ans, Math.max(0.01, 0.01 * Math.abs(ans)), cell(block, 0, 0));
}

/** Step 25: how many parameters a station holds, counted from its tensors' sizes (the recipe's `parameters`). */
function parameterCount(ctx) {
  const { say, recipe } = ctx,
    { station, tensors } = recipe.parameters;
  const total = sum(tensors.map((x) => x.size)),
    count = formatNumber(total, "int");
  const q = say.say("parameters_question", { station: ctx.name(station) });
  const sizes = say.listed(
    "parameters_sizes",
    tensors.map((x) => ({ symbol: x.symbol, size: formatNumber(x.size, "int") })),
  );
  const why = say.say("parameters_why", { sizes, total: count });
  return numberQuestion(say, 25, "parameters", q, why, total, 0, cell(tensors[0].id, 0, 0), count);
}

/** Every exercise for the trace, in the order of the steps; none for a trace of another layout. */
export function exercises(trace, t, recipe, say) {
  if (!t.has(recipe.nodes.scaled)) return [];
  let loss = null;
  const ctx = {
    t,
    say,
    trace,
    recipe,
    tie: recipe.constants.tie,
    heads: recipe.nodes.worked_heads,
    name: (id) => recipe.names[id],
    loss: () => (loss ??= lossFigures(trace, t, recipe, say)),
  };
  const worked = workedChoice(trace, t, recipe);
  return [
    scale(ctx),
    queryPeak(ctx, worked),
    weightsPeak(ctx, worked),
    unscaled(ctx, worked),
    whyScale(ctx, worked),
    nearestValue(ctx, worked),
    whyHeads(ctx, worked),
    whyResidual(ctx),
    reluZero(ctx),
    maskFirst(ctx),
    whyMask(ctx),
    crossFirst(ctx),
    firstProbability(ctx),
    turns(ctx),
    smoothedOrPlain(ctx),
    dropoutScale(ctx),
    parameterCount(ctx),
  ];
}
