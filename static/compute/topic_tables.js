// The "go deeper" pages' tables for one input (/topics/SLUG?input=N), computed in the page from the trace as
// the page holds it and the model's recipe (GET /api/live, article/recipe.py: which nodes to read, the
// constants, the reader's names of blocks): the input's tokens, their rows of E, their positional encodings,
// the worked attention row and its heads, the decoder's mask, logits at several temperatures, a LayerNorm's
// rows, the loss per position and the paths a recurrent network would take. The served page, the static
// site and the server's render for a reader without JavaScript (scripts/prerender.mjs) all run this.
//
//   topicTables(slug, trace, recipe) → [{id, title, caption, columns: [{name, format, bar}], rows}]
//     format: a static/js/format.js format; bar: draw a bar of the value (a weight in 0…1) beside it; the
//     first cell of each row heads it. [] for a topic with no per-input table, or whose nodes the model's
//     layout lacks (today's recipe has no sinusoids, no post-LN, no tied output).
//
// Rows are counted from 0 and heads and layers from 1, as everywhere on the page. A value is a number, a
// string or null (printed as a dash).
import { formatNumber } from "../js/format.js";
import { workedChoice } from "./lessons.js";
import { lossFigures } from "./loss.js";
import { argmax, argmin, max, mean, norm, softmax, std, sum } from "./reductions.js";
import { sentences } from "./sentences.js";
import { nodesOf } from "./tensors.js";

const col = (name, format = "text", bar = false) => ({ name, format, bar });
const table = (id, title, caption, columns, rows) => ({ id, title, caption, columns, rows });
const quoted = (token) => `“${token}”`;
const dot = (a, b) => a.reduce((acc, x, i) => acc + x * b[i], 0);
const capitalised = (text) => text.slice(0, 1).toUpperCase() + text.slice(1);
const range = (n) => Array.from({ length: n }, (_, i) => i);

function tokens(c) {
  const { trace, t, topic } = c,
    rows = [];
  for (const [side, label, toks] of [
    ["src", "encoder", trace.source_tokens],
    ["tgt", "decoder", trace.target_tokens],
  ]) {
    const at = t.tensor(topic.nodes[`${side}_ids`]).data;
    toks.forEach((tok, i) => rows.push([`${label} row ${i + 1}`, tok, at[i]]));
  }
  return [
    table(
      "tokens",
      "Your input's tokens and their ids",
      "The encoder reads the English words and </s>; the decoder reads <s> and the German pieces written before "
        + "each prediction. The model never sees letters, only the ids: a piece has the same id wherever it stands, "
        + "and each id picks one row of E.",
      [col("row"), col("token"), col("id", "int")],
      rows,
    ),
  ];
}

/** E's rows, read from the output layer's Eᵀ (the tied matrix the trace records): e(k) = column k of Eᵀ. */
function embeddingOf(t, id) {
  const et = t.tensor(id),
    [d] = et.shape;
  return (k) => range(d).map((c) => et.at(c, k));
}

function tiedOutput(c, e) {
  const { trace, t, recipe } = c,
    logits = t.node(recipe.nodes.logits);
  const z = t.tensor(logits.id),
    h = t.tensor(logits.inputs[0]);
  const rows = Array.from(t.tensor(recipe.nodes.tokens).data, (k, i) => {
    const zk = z.at(i, k),
      he = dot(h.row(i), e(k));
    return [`row ${i + 1}`, trace.output_tokens[i], zk, he, Math.abs(zk - he)];
  });
  return table(
    "tied-output",
    "The same matrix at the output: each written piece's logit",
    "The output layer multiplies each decoder row h by Eᵀ, so a piece's logit is h times that piece's row of E, "
      + "the very row the embedding looks up: the two columns agree, up to the rounding of 32-bit floats (the last "
      + "column).",
    [
      col("decoder row"),
      col("writes"),
      col("logit in the trace", "fixed3"),
      col("h · E[writes]", "fixed3"),
      col("difference", "sig2"),
    ],
    rows,
  );
}

function embeddings(c) {
  const { trace, t, topic } = c,
    n = topic.nodes;
  if (![n.src_scaled, n.tgt_scaled, n.output_embedding].every((id) => t.has(id))) return [];
  const e = embeddingOf(t, n.output_embedding),
    seen = new Map();
  for (const [side, toks] of [
    ["src", trace.source_tokens],
    ["tgt", trace.target_tokens],
  ]) {
    const at = t.tensor(n[`${side}_ids`]).data,
      scaled = t.tensor(n[`${side}_scaled`]);
    toks.forEach((tok, i) => {
      if (!seen.has(tok)) seen.set(tok, [tok, at[i], norm(e(at[i])), norm(scaled.row(i))]);
    });
  }
  const sqrtD = formatNumber(Math.sqrt(c.recipe.constants.d_model), "fixed3");
  const lookup = table(
    "embedding-rows",
    `Your tokens' rows of E, and the same rows times √d_model = ${sqrtD}`,
    "A token's embedding is its row of E, multiplied by √d_model before the position is added: every length grows "
      + "by that same factor. Each token is listed once: wherever it appears, it reads the same row.",
    [col("token"), col("id", "int"), col("length of E[id]", "fixed3"), col("length of √d·E[id]", "fixed3")],
    [...seen.values()],
  );
  return [lookup, tiedOutput(c, e)];
}

function positions(c) {
  const { trace, t, topic } = c,
    n = topic.nodes;
  if (!t.has(n.src_pe) || !t.has(n.tgt_pe)) return [];
  const [src, tgt] = [t.tensor(n.src_pe), t.tensor(n.tgt_pe)];
  const pe = tgt.shape[0] > src.shape[0] ? tgt : src; // the same table; the longer
  const [count, d] = pe.shape,
    shown = [...range(topic.constants.pe_columns), d - 2, d - 1];
  const { source_tokens: s, target_tokens: g } = trace;
  const rows = range(count).map((p) => [
    `position ${p}`,
    s[p] ?? "",
    g[p] ?? "",
    ...shown.map((k) => pe.at(p, k)),
    norm(pe.row(p)),
  ]);
  return [
    table(
      "pe-rows",
      `The positional-encoding rows of your positions (columns ${shown.join(", ")} of ${d})`,
      "Columns 2i and 2i + 1 are the sine and the cosine of the position at one speed: the first pair turns fast "
        + "from row to row, the last pair hardly moves across a sentence. The row depends on the position only, not on "
        + "the token, and every row has the same length √(d/2).",
      [
        col("position"),
        col("encoder token"),
        col("decoder token"),
        ...shown.map((k) => col(`PE col ${k}`, "fixed3")),
        col("row length", "fixed3"),
      ],
      rows,
    ),
  ];
}

function attentionRow(c) {
  const { trace, t, recipe } = c,
    { head, row } = workedChoice(trace, t, recipe);
  const blocks = recipe.nodes.worked_heads[head],
    toks = trace.source_tokens;
  const q = t.tensor(blocks.q).row(row),
    k = t.tensor(blocks.k).rows();
  const scores = t.tensor(blocks.scores).row(row),
    weights = t.tensor(blocks.weights).row(row);
  const dots = k.map((key) => dot(q, key)),
    plain = softmax(dots); // the same row without the 1/√d_k scale
  const rows = toks.map((tok, j) => [tok, dots[j], scores[j], weights[j], plain[j]]);
  rows.push(["sum", null, null, sum(weights), sum(plain)]);
  return [
    table(
      "attention-row",
      `${capitalised(recipe.names[blocks.weights])}: the row of ${quoted(toks[row])} `
        + `(row ${row + 1}), the one the article works through`,
      "A row's scores are its query's dot products with every key, divided by √d_k; the softmax turns them into "
        + "weights that are positive, sum to 1 and keep the scores' order. Without the division (the last column) "
        + "the differences between scores are √d_k times larger and the largest weight grows: the softmax heads for "
        + "a hard choice, where its gradient vanishes.",
      [
        col("key"),
        col("q · k", "fixed3"),
        col("score q · k / √d_k", "fixed3"),
        col("weight", "fixed3", true),
        col("weight without ÷ √d_k", "fixed3", true),
      ],
      rows,
    ),
  ];
}

function headsOfRow(c) {
  const { trace, t, recipe } = c,
    { row } = workedChoice(trace, t, recipe),
    toks = trace.source_tokens;
  const rows = recipe.nodes.worked_heads.map((blocks, h) => {
    const w = t.tensor(blocks.weights).row(row);
    return [`head ${h + 1}`, ...w, toks[argmax(w)]];
  });
  const where = recipe.names[recipe.nodes.worked_station];
  return [
    table(
      "heads-of-row",
      `The row of ${quoted(toks[row])} (row ${row + 1}) in each head of ${where}`,
      "One position asks one question per head: each head's row is a softmax of its own and sums to 1, so different "
        + "heads can rest on different words at once.",
      [col("head"), ...toks.map((tok, j) => col(`key ${j + 1}: ${tok}`, "fixed3", true)), col("rests most on")],
      rows,
    ),
  ];
}

function causalMask(c) {
  const { trace, t, recipe, topic } = c,
    weightsId = recipe.nodes.first_decoder_weights;
  const mask = t.tensor(topic.nodes.dec_mask),
    w = t.tensor(weightsId),
    toks = trace.target_tokens;
  const rows = toks.map((tok, i) => {
    const open = range(toks.length).filter((j) => mask.at(i, j));
    return [
      `row ${i + 1}: ${tok}`,
      ...range(toks.length).map((j) => (mask.at(i, j) ? w.at(i, j) : "masked")),
      sum(open.map((j) => w.at(i, j))),
    ];
  });
  return [
    table(
      "decoder-mask",
      `Your decoder rows under the mask: ${recipe.names[weightsId]}`,
      "Row i may read positions 1 to i only. Every cell above the diagonal is masked (its score set to −∞ before "
        + "the softmax) and gets weight exactly 0, so the weights on the earlier positions and the row's own sum "
        + "to 1.",
      [col("row reads"), ...toks.map((tok, j) => col(`${j + 1}: ${tok}`, "fixed3", true)), col("sum", "fixed3")],
      rows,
    ),
  ];
}

function temperatures(c) {
  const { trace, t, recipe, topic } = c,
    { temperatures: temps, top_logits: top } = topic.constants;
  const row = argmin(t.tensor(recipe.nodes.probs).rows().map(max)); // the least certain choice: the most interesting
  const z = t.tensor(recipe.nodes.logits).row(row);
  const order = range(z.length)
    .sort((a, b) => z[b] - z[a] || a - b)
    .slice(0, top); // numpy's stable argsort
  const byT = temps.map((temp) => softmax(z.map((x) => x / temp)));
  const rows = order.map((k) => [recipe.constants.vocabulary[k], z[k], ...byT.map((p) => p[k])]);
  return [
    table(
      "temperatures",
      `Decoder row ${row + 1} (reads ${quoted(trace.target_tokens[row])}, the least certain `
        + `choice of your input): its ${top} largest logits and their probabilities`,
      "Dividing the logits by a temperature T before the softmax keeps their order but changes the spread: below 1 "
        + "the top piece takes more, above 1 the rest take more. At T = 1 these are the model's own probabilities.",
      [col("piece"), col("logit", "fixed3"), ...temps.map((temp) => col(`p at T = ${temp}`, "fixed3", true))],
      rows,
    ),
  ];
}

const tidy = (x) => (Math.abs(x) < 5e-7 ? 0 : x); // a mean that is zero up to rounding, printed as 0, not −0.000

function layerNorm(c) {
  const { trace, t, recipe, topic } = c,
    { first_sum: sumId, first_ln: lnId } = recipe.nodes;
  if (!t.has(sumId) || !t.has(lnId)) return [];
  const s = t.tensor(sumId),
    out = t.tensor(lnId),
    eps = topic.constants.norm_epsilon;
  const rows = trace.source_tokens.map((tok, i) => {
    const x = s.row(i),
      mu = mean(x),
      variance = mean(x.map((v) => (v - mu) ** 2));
    const normed = x.map((v) => (v - mu) / Math.sqrt(variance + eps)),
      y = out.row(i);
    return [tok, mu, std(x), tidy(mean(normed)), std(normed), mean(y), std(y)];
  });
  return [
    table(
      "layernorm-rows",
      "Your rows through encoder 1's first LayerNorm: x + Attention(x), normalised, then γ and β",
      "Each row of the sum is shifted and scaled on its own: after the normalisation every row has mean 0 and "
        + "standard deviation 1 (ε = 10⁻⁵ keeps it a hair below 1, too little to show here), whatever it had "
        + "before; the learned γ and β then give the rows the output's mean and spread.",
      [
        col("row"),
        col("sum: mean", "fixed3"),
        col("sum: std", "fixed3"),
        col("normalised: mean", "fixed3"),
        col("normalised: std", "fixed3"),
        col("output: mean", "fixed3"),
        col("output: std", "fixed3"),
      ],
      rows,
    ),
  ];
}

function losses(c) {
  const { trace, t, recipe } = c,
    f = lossFigures(trace, t, recipe, sentences(recipe.sentences));
  const rows = f.loss_rows.map((x) => [
    `row ${x.row + 1}`,
    x.reads,
    x.reference ?? "–",
    x.p_reference ?? null,
    x.plain_loss ?? null,
    x.loss ?? null,
  ]);
  rows.push(["floor H(q)", "", "", null, null, f.loss_floor]);
  return [
    table(
      "position-losses",
      "Your loss, position by position",
      "A row's loss −ln p(reference) is how surprised the model is by the right piece: near 0 where p is near 1. "
        + "The label-smoothed target spreads ε over every piece, so the smoothed loss cannot fall below the floor "
        + "H(q), even for a perfect prediction. A row that reads a piece the reference does not have is no training "
        + "row, and has no loss (–).",
      [
        col("decoder row"),
        col("reads"),
        col("reference"),
        col("p(reference)", "fixed3", true),
        col("−ln p", "fixed3"),
        col("smoothed loss", "fixed3"),
      ],
      rows,
    ),
  ];
}

function pathLengths(c) {
  const { trace, t, recipe, topic } = c,
    heads = recipe.nodes.last_cross_weights.map((id) => t.tensor(id).row(0));
  const toks = trace.source_tokens,
    n = toks.length,
    layers = topic.constants.n_layers;
  const cross = toks.map((_, j) => heads.reduce((acc, w) => acc + w[j], 0) / heads.length); // the heads' mean
  const paths = table(
    "path-lengths",
    "How far each of your words travels to the decoder's first row (its weights: "
      + `${recipe.names[topic.nodes.last_cross]}, the mean of the heads)`,
    "A recurrent encoder hands a word on from position to position until its last state reaches the decoder, so "
      + "the first word travels furthest; the Transformer's cross-attention reads every word's memory row in one "
      + "step, and the weights show the first decoder row doing so.",
    [
      col("source word"),
      col("recurrent: hand-offs", "int"),
      col("Transformer: hand-offs", "int"),
      col("decoder row 0's weight on it", "fixed3", true),
    ],
    toks.map((tok, i) => [`${i + 1}: ${tok}`, n - i, 1, cross[i]]),
  );
  const m = trace.target_tokens.length;
  const steps = table(
    "sequential-steps",
    "Steps that must run one after another for your input",
    "A recurrent encoder needs one step per token; the Transformer's encoder needs one per layer, each over all "
      + "positions at once. Both decoders still write one piece at a time.",
    [col("steps for"), col("recurrent", "int"), col("Transformer", "int")],
    [
      ["encoding", n, layers],
      ["decoding", m, m],
    ],
  );
  return [paths, steps];
}

/** The per-input tables of each topic page, by its slug (content/topics/SLUG.md). */
export const TOPICS = Object.freeze({
  tokenisation: tokens,
  "embeddings-and-tying": embeddings,
  "positional-encoding": positions,
  attention: attentionRow,
  "multi-head-attention": headsOfRow,
  "causal-masking": causalMask,
  "softmax-and-logits": temperatures,
  "layernorm-and-residuals": layerNorm,
  "cross-entropy": losses,
  rnns: pathLengths,
});

/** The topic's tables for the trace's input ([] for a topic with none). */
export function topicTables(slug, trace, recipe) {
  const make = Object.hasOwn(TOPICS, slug) ? TOPICS[slug] : null;
  return make ? make({ trace, t: nodesOf(trace), recipe, topic: recipe.topics }) : [];
}

/** Every topic's tables for the trace's input, by slug (the topics with none left out). */
export const allTopicTables = (trace, recipe) =>
  Object.fromEntries(Object.keys(TOPICS).map((slug) => [slug, topicTables(slug, trace, recipe)]));
