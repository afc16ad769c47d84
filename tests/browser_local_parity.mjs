// The page's half of tests/test_browser_engine.py: for each case, the server's trace (GET /api/trace in the
// compact form, decoded by the page's own client, static/js/api.js) and the one the page computes itself
// (static/local/trace.js computeTrace over api.js keptDocuments, the page's fetcher: the live figures and the
// scene included), compared in the page by ./local_compare.mjs's rule. Loaded as a module into a page of the
// running server; `window.localParity(cases)` answers only the differences, and counts.
/* global window, performance */  // runs in a page of the server (browser globals)
import { fetchCompactTrace, keptDocuments, traceUrl } from '/static/js/api.js';
import { computeTrace, programUrl } from '/static/local/trace.js';
import { browserScene } from '/static/local/scene_source.js';
import { traceProblems } from './local_compare.mjs';

/** computeTrace's scene, or what stopped it (a missing structure, a patch not offered): reported as the
 *  scene's difference, not as the whole case's. */
const sceneOrWhy = async (trace, context) => {
  try { return await browserScene(trace, context); } catch (err) { return { threw: String(err?.message || err) }; }
};

async function one(c, asked) {
  const theirs = await asked;
  if (theirs.refused) return { problems: { server: [`refused: ${theirs.refused}`] }, nodes: 0 };
  const t0 = performance.now();
  const ours = await computeTrace(c.input, { ...c.options, scene: sceneOrWhy }, keptDocuments);
  const computeMs = performance.now() - t0;
  const { pieces } = (await keptDocuments.json(programUrl(c.options.model))).vocabulary;
  const problems = traceProblems(ours, theirs, pieces);
  return { problems, computeMs, compareMs: performance.now() - t0 - computeMs, nodes: ours.nodes.length,
    scene: ours.scene && !ours.scene.threw };
}

/** Every case compared, the next case's server trace asked while this one is computed; a case's differences
 *  by part (trace, derived, scene), only where there are some. */
window.localParity = async (cases) => {
  const out = { failures: [], nodes: 0, scenes: 0, computeMs: 0, compareMs: 0 };
  const ask = c => fetchCompactTrace(traceUrl(c.input, c.options)).catch(err => ({ refused: String(err?.message || err) }));
  let next = ask(cases[0]);
  for (let k = 0; k < cases.length; k++) {
    const asked = next;
    if (k + 1 < cases.length) next = ask(cases[k + 1]);
    let r;
    try { r = await one(cases[k], asked); } catch (err) { r = { problems: { threw: [String(err?.stack || err)] }, nodes: 0 }; }
    out.nodes += r.nodes;
    out.scenes += r.scene ? 1 : 0;
    out.computeMs += r.computeMs ?? 0;
    out.compareMs += r.compareMs ?? 0;
    const bad = Object.entries(r.problems).filter(([, p]) => p.length);
    if (bad.length) out.failures.push({ k, parts: Object.fromEntries(bad.map(([part, p]) => [part, p.slice(0, 3)])) });
  }
  return out;
};
