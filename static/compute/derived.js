// The article's live figures for a trace, computed in the browser: the server's `derived` block
// (article/derived.py derived_figures) from the trace's own nodes and the model's recipe (GET /api/live:
// which nodes to read, the constants, the sentence table). Nothing here knows an id or a sentence.
//
//   derivedFigures(trace, recipe) → the trace's `derived` (trace: {input, source_tokens, target_tokens,
//                                   output_tokens, lens, nodes}, as /api/trace sends it; of `input` the
//                                   number, english and reference_pieces; of `lens` each layer's probs id)
//   liveFigures(trace, { fetcher, model }) → Promise<the same>: static/compute/trace.js computeTrace's
//                                   `derived` option, the recipe asked once per fetcher at liveUrl(model)
import { exercises } from "./exercises.js";
import { teachingFigures } from "./lessons.js";
import { lossFigures } from "./loss.js";
import { argmax, argmin, mean, std } from "./reductions.js";
import { sentences } from "./sentences.js";
import { crossMean, nodesOf } from "./tensors.js";

function outputFigures(trace, t, recipe, say) {
  const n = recipe.nodes,
    probs = t.tensor(n.probs),
    chosen = t.tensor(n.tokens).data;
  const pChosen = chosen.map((token, r) => probs.at(r, token));
  const worst = argmin(pChosen),
    losses = pChosen.map((p) => -Math.log(p));
  const cross = crossMean(t, n.last_cross_weights);
  const { source_tokens: src, target_tokens: rows, output_tokens: out } = trace;
  return {
    least_certain_prob: pChosen[worst],
    least_certain_token: out[worst],
    least_certain_position: worst + 1, // as a reader counts rows: from 1
    cross_alignment: say.listed(
      "cross_alignment",
      out.map((writes, r) => ({
        reads: rows[r],
        writes,
        source: src[argmax(cross[r])],
      })),
    ),
    position_losses: say.listed(
      "position_losses",
      out.map((token, r) => ({ token, loss: losses[r] })),
    ),
    mean_position_loss: mean(losses),
    least_certain_reads: rows[worst],
  };
}

// per decoder layer, each position's most probable piece under the lens (its node, as the header's `top` has it)
const lensFigure = (trace, t, recipe, say) =>
  say.listed(
    "lens_layers",
    trace.lens.map((layer) => ({
      layer: layer.layer + 1,
      pieces: say.listed(
        "lens_pieces",
        t
          .tensor(layer.probs)
          .rows()
          .map((p) => {
            const top = argmax(p);
            return { piece: recipe.constants.vocabulary[top], p: p[top] };
          }),
      ),
    })),
  );

/** Every live figure of the trace, keyed as the server's `derived` block.
 *  @param {import("../types.js").Trace} trace  @param {import("../types.js").Recipe} recipe
 *  @returns {import("../types.js").LiveFigures} */
export function derivedFigures(trace, recipe) {
  const t = nodesOf(trace),
    say = sentences(recipe.sentences),
    n = recipe.nodes;
  const words = (list) =>
    say.listed(
      "words",
      list.map((word) => ({ word })),
    );
  const firstSum = t.tensor(n.first_sum).row(0),
    hidden = t.tensor(n.ffn_hidden).data;
  const pieces = trace.output_tokens.filter((token) => token !== recipe.constants.eos);
  return {
    number: trace.input.number,
    english: words(trace.input.english),
    german: pieces.join(""),
    german_pieces: words(pieces),
    reference_german: trace.input.reference_pieces.join(""),
    source_tokens: trace.source_tokens,
    target_tokens: trace.target_tokens,
    output_tokens: trace.output_tokens,
    n_source: trace.source_tokens.length,
    n_target: trace.target_tokens.length,
    first_token: trace.source_tokens[0],
    first_token_mean: mean(firstSum),
    first_token_std: std(firstSum),
    ffn_zero_fraction: hidden.filter((x) => x === 0).length / hidden.length,
    ...outputFigures(trace, t, recipe, say),
    ...teachingFigures(trace, t, recipe, say),
    ...lossFigures(trace, t, recipe, say),
    exercises: exercises(trace, t, recipe, say),
    logit_lens: lensFigure(trace, t, recipe, say),
  };
}

/** Where the API sends a model's recipe ("" or absent: the default model, asked without ?model=). */
export const liveUrl = (model = "") => (model ? `/api/live?${new URLSearchParams({ model })}` : "/api/live");

const recipes = new WeakMap(); // fetcher → Map(url → Promise of the recipe); a failure is asked again

function recipeOf(fetcher, url) {
  if (!recipes.has(fetcher)) recipes.set(fetcher, new Map());
  const kept = recipes.get(fetcher);
  if (!kept.has(url))
    kept.set(
      url,
      Promise.resolve()
        .then(() => fetcher.json(url))
        .catch((e) => {
          kept.delete(url);
          throw e;
        }),
    );
  return kept.get(url);
}

/** The trace's live figures over its model's recipe, fetched through computeTrace's fetcher.
 *  @type {(trace: import("../types.js").Trace, context: {fetcher: import("../types.js").Fetcher, model?: string})
 *    => Promise<import("../types.js").LiveFigures>} */
export const liveFigures = async (trace, { fetcher, model = "" }) =>
  derivedFigures(trace, await recipeOf(fetcher, liveUrl(model)));
