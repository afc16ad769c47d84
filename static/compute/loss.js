// Step 20's figures (article/loss.py loss_figures): each decoder row's smoothed target beside the model's p,
// the row's loss while it reads the reference, and the sums over those rows.
import { max, sum } from "./reductions.js";

/** q over the vocabulary for one position: ε/V everywhere, plus 1 − ε on the reference piece. */
function smoothedTarget(reference, size, eps) {
  const q = new Array(size).fill(eps / size);
  q[reference] += 1 - eps;
  return q;
}

const entropy = (q) => -sum(q.map((x) => x * Math.log(x)));

function lossRow(trace, probs, reference, r, recipe) {
  const out = trace.output_tokens,
    eps = recipe.constants.label_smoothing;
  const readsReference = r < reference.length && out.slice(0, r).every((piece, i) => piece === reference[i]);
  const p = probs.row(r);
  const row = {
    row: r,
    reads: trace.target_tokens[r],
    writes: out[r],
    forced: readsReference,
    reference: readsReference ? reference[r] : null,
    p_written: max(p),
  };
  if (!readsReference) return row;
  const y = recipe.constants.vocabulary.indexOf(reference[r]),
    q = smoothedTarget(y, p.length, eps);
  return {
    ...row,
    reference_id: y,
    p_reference: p[y],
    loss: -sum(q.map((x, v) => x * Math.log(p[v]))),
    plain_loss: -Math.log(p[y]),
  };
}

function departure(say, rows, referenceLength) {
  const first = rows.find((x) => !x.forced);
  if (first === undefined && rows.length === referenceLength) return say.say("departs_never", { rows: rows.length });
  if (first === undefined) {
    return say.say("departs_stopped", { rows: rows.length, reference: referenceLength, last: rows.length });
  }
  return say.say("departs_at", { row: first.row + 1 });
}

/** Every step-20 figure of the trace, keyed as the server's. */
export function lossFigures(trace, t, recipe, say) {
  const probs = t.tensor(recipe.nodes.probs),
    [rowCount, vocab] = probs.shape;
  const eps = recipe.constants.label_smoothing;
  const reference = [...trace.input.reference_pieces, recipe.constants.eos];
  const rows = Array.from({ length: rowCount }, (_, r) => lossRow(trace, probs, reference, r, recipe));
  const done = rows.filter((x) => x.forced),
    forced = done.length;
  const total = done.reduce((a, x) => a + x.loss, 0),
    plain = done.reduce((a, x) => a + x.plain_loss, 0);
  return {
    loss_rows: rows,
    loss_q_reference: 1 - eps + eps / vocab,
    loss_q_other: eps / vocab,
    loss_floor: entropy(smoothedTarget(0, vocab, eps)),
    loss_reference_length: reference.length,
    loss_forced_rows: forced,
    loss_sum: total,
    loss_mean: total / Math.max(forced, 1),
    plain_loss_sum: plain,
    plain_loss_mean: plain / Math.max(forced, 1),
    loss_departs: departure(say, rows, reference.length),
  };
}
