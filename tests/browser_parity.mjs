// The page's half of tests/page/test_browser_engine.py (and bench/bench_browser_trace.py): for each case, the
// server's trace (GET /api/trace) and the browser's own (static/engine/ over GET /api/program and the
// weights the program names), compared in the page by tests/engine_compare.mjs's rule. Loaded as a module
// into a page of the running server; `window.parity(cases, compare)` answers a summary.
/* global window, fetch, performance, URLSearchParams */ // runs in a page of the server (browser globals)
import { browserTrace } from "/static/engine/decode.js";
import { fetchWeights } from "/static/stage/data.js";

const programs = new Map();
const program = (model) => {
  if (!programs.has(model))
    programs.set(
      model,
      fetch(`/api/program?model=${model}`).then((r) => r.json()),
    );
  return programs.get(model);
};

function traceUrl(c) {
  const q = new URLSearchParams({ input: String(c.number), model: c.model });
  if (c.ablation.length) q.set("ablate", c.ablation.join(","));
  if (c.checkpoint !== null) q.set("checkpoint", String(c.checkpoint));
  return `/api/trace?${q}`;
}

/** The server's trace of a case and its request time (from asking to the parsed document). */
async function serve(c) {
  const t0 = performance.now();
  const served = await (await fetch(traceUrl(c))).json();
  return { served, serverMs: performance.now() - t0 };
}

/** One case: the browser's trace from the source ids, and its time, beside the server's. */
async function one(c, asked, compare) {
  const { served, serverMs } = await asked;
  const p = await program(c.model);
  const url = c.checkpoint === null ? p.weights.trained : p.weights.checkpoints[String(c.checkpoint)];
  const weights = await fetchWeights(url);
  const ids = served.source_tokens.map((t) => p.vocabulary.pieces.indexOf(t));
  const t1 = performance.now();
  const ours = browserTrace(p, weights, ids, new Set(c.ablation));
  const browserMs = performance.now() - t1;
  const t2 = performance.now();
  const problems = compare ? compare(ours, served) : [];
  const compareMs = performance.now() - t2;
  if (compare && url !== served.weights_url) problems.push(`weights ${url}, the trace names ${served.weights_url}`);
  return { problems, serverMs, browserMs, compareMs, nodes: ours.nodes.length };
}

/** Every case compared (`compare` null: timed only). `ahead`: requests in flight at once (1: one at a time,
 *  so each request time is the served page's alone; more keep the server's workers busy meanwhile). */
window.parity = async (cases, compare = null, ahead = 1) => {
  const out = { failures: [], serverMs: [], browserMs: [], compareMs: [], nodes: 0 };
  const asked = cases.slice(0, ahead).map(serve);
  for (let k = 0; k < cases.length; k++) {
    if (k + ahead < cases.length) asked.push(serve(cases[k + ahead]));
    const c = cases[k],
      r = await one(c, asked[k], compare);
    asked[k] = null;
    out.serverMs.push(r.serverMs);
    out.browserMs.push(r.browserMs);
    out.compareMs.push(r.compareMs);
    out.nodes += r.nodes;
    if (r.problems.length) out.failures.push({ case: c, problems: r.problems.slice(0, 3) });
  }
  return out;
};
