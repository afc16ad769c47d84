// The page's half of tests/test_browser_engine.py (and bench/bench_browser_trace.py): for each case, the
// server's trace (GET /api/trace) and the browser's own (static/engine/ over GET /api/program and the
// weights the program names), compared in the page by tests/engine_compare.mjs's rule. Loaded as a module
// into a page of the running server; `window.parity(cases, compare)` answers a summary.
import { browserTrace } from '/static/engine/decode.js';
import { fetchWeights } from '/static/stage/data.js';

const programs = new Map();
const program = model => {
  if (!programs.has(model)) programs.set(model, fetch(`/api/program?model=${model}`).then(r => r.json()));
  return programs.get(model);
};

function traceUrl(c) {
  const q = new URLSearchParams({ input: String(c.number), model: c.model });
  if (c.ablation.length) q.set('ablate', c.ablation.join(','));
  if (c.checkpoint !== null) q.set('checkpoint', String(c.checkpoint));
  return `/api/trace?${q}`;
}

/** One case: the server's trace and its request time; the browser's from the source ids, and its time. */
async function one(c, compare) {
  const t0 = performance.now();
  const served = await (await fetch(traceUrl(c))).json();
  const serverMs = performance.now() - t0;
  const p = await program(c.model);
  const url = c.checkpoint === null ? p.weights.trained : p.weights.checkpoints[String(c.checkpoint)];
  const weights = await fetchWeights(url);
  const ids = served.source_tokens.map(t => p.vocabulary.pieces.indexOf(t));
  const t1 = performance.now();
  const ours = browserTrace(p, weights, ids, new Set(c.ablation));
  const browserMs = performance.now() - t1;
  const problems = compare ? compare(ours, served) : [];
  if (compare && url !== served.weights_url) problems.push(`weights ${url}, the trace names ${served.weights_url}`);
  return { problems, serverMs, browserMs, nodes: ours.nodes.length };
}

window.parity = async (cases, compare = null) => {
  const out = { failures: [], serverMs: [], browserMs: [], nodes: 0 };
  for (const c of cases) {
    const r = await one(c, compare);
    out.serverMs.push(r.serverMs);
    out.browserMs.push(r.browserMs);
    out.nodes += r.nodes;
    if (r.problems.length) out.failures.push({ case: c, problems: r.problems.slice(0, 3) });
  }
  return out;
};
