// Decoding over a program (program.js), with the rules of model/decode.py: greedy decoding writes at most
// the source's length + `decoding.extra_length` pieces and stops at </s>; the trace's decoder then runs
// once over <s> and the output (without its last piece when it stopped at the length limit); beam search
// keeps alive and finished hypotheses apart, scores a finished one log p / lp(Y) with the GNMT length
// penalty lp(Y) = ((5 + |Y|)/6)^α, and stops when no alive one can beat the best finished.
// The encoder runs once: a decoding step recomputes only the nodes that read the decoder's rows.
import { Run, readers } from "./program.js";

const prepared = new WeakMap();

/** The nodes that read the decoder's rows (recomputed at every step); everything else is computed once. */
function rowReaders(program) {
  if (!prepared.has(program))
    prepared.set(
      program,
      readers(
        program,
        program.inputs.filter((i) => i.shape.includes("m") || i.id === "m").map((i) => i.id),
      ),
    );
  return prepared.get(program);
}

/** A decoder over one source: `last(rows)` → the logits after the last row, and the Run that gave them. */
export function decoder(program, weights, sourceIds, off = new Set()) {
  const moving = rowReaders(program),
    logits = program.decoding.logits;
  let known = null;
  return (rows) => {
    const run = new Run(program, weights, { sourceIds, targetIds: rows, off, known });
    const L = run.value(logits),
      width = L.shape[L.shape.length - 1];
    if (!known) known = new Map([...run.values].filter(([id]) => !moving.has(id)));
    return { run, last: L.data.subarray(L.data.length - width) };
  };
}

function argmax(v) {
  let best = 0;
  for (let i = 1; i < v.length; i++) if (v[i] > v[best]) best = i;
  return best;
}

/** Each row's most probable piece (the first on a tie, as argmax). */
function rowArgmax(logits) {
  const width = logits.shape[logits.shape.length - 1],
    out = [];
  for (let at = 0; at < logits.data.length; at += width) out.push(argmax(logits.data.subarray(at, at + width)));
  return out;
}

/** Greedy decoding: the output ids (without </s>), the decoder's rows and the Run over those rows.
 *  `draft` (ids, without </s>): a guess at the output, checked in one pass as model/decode.py
 *  greedy_checking checks it: greedy writes the draft's pieces as long as the model would choose them, then
 *  goes on from its own choice. The output is greedy's whatever the draft (each row's logits are the same
 *  arithmetic over more rows: masked columns add exact zeros); a right guess costs one pass. */
export function greedy(program, weights, sourceIds, off = new Set(), draft = []) {
  const { bos, eos } = program.vocabulary,
    maxLen = sourceIds.length + program.decoding.extra_length;
  const step = decoder(program, weights, sourceIds, off),
    guess = draft.slice(0, maxLen);
  let { run } = step([bos, ...guess]);
  const choices = rowArgmax(run.value(program.decoding.logits)),
    wrong = guess.findIndex((d, i) => choices[i] !== d);
  const written = wrong < 0 ? [...guess] : guess.slice(0, wrong);
  let next = written.length === maxLen ? null : choices[written.length];
  while (next !== null && next !== eos) {
    written.push(next);
    if (written.length === maxLen) break;
    const stepped = step([bos, ...written]);
    run = stepped.run;
    next = argmax(stepped.last);
  }
  // the trace's rows: <s> and the output, its last piece left out at the length limit
  const rows = [bos, ...(written.length === maxLen ? written.slice(0, -1) : written)];
  if (run.dims.m !== rows.length) ({ run } = step(rows)); // the draft's pass read more rows than the output has
  return { output: written, rows, run };
}

/** The whole trace of one source, computed here: the header's token lists and every node, in the trace
 *  document's form (data as float64 arrays, −∞ as -Infinity). `draft`: greedy's guess (the correct German). */
export function browserTrace(program, weights, sourceIds, off = new Set(), draft = []) {
  const { rows, run } = greedy(program, weights, sourceIds, off, draft),
    pieces = program.vocabulary.pieces;
  const nodes = run.trace(),
    tokens = run.value(program.decoding.tokens);
  return {
    source_tokens: sourceIds.map((i) => pieces[i]),
    target_tokens: rows.map((i) => pieces[i]),
    output_tokens: Array.from(tokens.data, (i) => pieces[i]),
    memory: program.memory,
    ablation: program.parts.filter((p) => off.has(p)),
    lens: program.lens,
    nodes,
  };
}

export const lengthPenalty = (length, alpha) => ((5 + length) / 6) ** alpha;

function logSoftmax(v) {
  let m = -Infinity,
    s = 0;
  for (const x of v) m = Math.max(m, x);
  for (const x of v) s += Math.exp(x - m);
  const z = m + Math.log(s);
  return Array.from(v, (x) => x - z);
}

/** The 2·beam best (value, parent, token) of every alive hypothesis extended by every piece. */
function best(alive, step, bos, k) {
  const all = [];
  alive.forEach((h, parent) => {
    const logp = logSoftmax(step([bos, ...h.tokens]).last);
    logp.forEach((p, token) => all.push({ value: h.logProb + p, parent, token }));
  });
  return all.sort((a, b) => b.value - a.value || a.parent - b.parent || a.token - b.token).slice(0, k);
}

/** Beam search (model/decode.py beam_search): every step's alive and finished hypotheses, the finished
 *  list and the best, tokens as pieces, as /api/beam writes them. */
export function beamSearch(
  program,
  weights,
  sourceIds,
  { beam = program.decoding.beam_size, alpha = program.decoding.alpha, off = new Set() } = {},
) {
  const { bos, eos, pieces } = program.vocabulary,
    maxLen = sourceIds.length + program.decoding.extra_length;
  const step = decoder(program, weights, sourceIds, off),
    steps = [];
  const said = (h, done) => ({
    tokens: h.tokens.map((i) => pieces[i]),
    log_prob: h.logProb,
    length_penalty: done ? h.lp : null,
    score: done ? h.score : null,
  });
  let alive = [{ tokens: [], logProb: 0 }],
    finished = [];
  for (let t = 1; t <= maxLen; t++) {
    const next = [];
    for (const c of best(alive, step, bos, 2 * beam)) {
      const h = { tokens: [...alive[c.parent].tokens, c.token], logProb: c.value };
      if (c.token === eos) {
        h.lp = lengthPenalty(t, alpha);
        h.score = c.value / h.lp;
        finished.push(h);
      } else if (next.length < beam) next.push(h);
    }
    finished = finished.sort((a, b) => b.score - a.score).slice(0, beam);
    alive = next;
    steps.push({ step: t, alive: alive.map((h) => said(h, false)), finished: finished.map((h) => said(h, true)) });
    const bound = alive.length ? alive[0].logProb / lengthPenalty(maxLen, alpha) : -Infinity;
    if (!alive.length || (finished.length && finished[0].score >= bound)) break;
  }
  if (!finished.length) {
    // ran out of length: the alive ones scored as they stand
    finished = alive.map((h) => {
      const lp = lengthPenalty(h.tokens.length, alpha);
      return { ...h, lp, score: h.logProb / lp };
    });
  }
  return { steps, finished: finished.map((h) => said(h, true)), best: said(finished[0], true) };
}
