// The page's half of tests/page/test_browser_engine.py: for each case, the served page's trace (GET /api/trace in
// the compact form, decoded by the page's own client, static/js/api.js, with the page's parts added,
// static/compute/page_parts.js) and the static page's, which the page computes itself (static/compute/trace.js
// computeTrace over api.js keptDocuments, the page's fetcher: the live figures and the scene included),
// compared in the page by ./local_compare.mjs's rule. Loaded as a module into a page of the
// running server; `window.localParity(cases)` answers only the differences, and counts.
/* global window, performance, structuredClone */ // runs in a page of the server (browser globals)
import { fetchCompactTrace, keptDocuments, traceUrl } from "/static/js/api.js";
import { computeTrace, programUrl } from "/static/compute/trace.js";
import { browserScene } from "/static/compute/scene_source.js";
import { withPageParts } from "/static/compute/page_parts.js";
import { traceProblems } from "./local_compare.mjs";

/** computeTrace's scene, or what stopped it (a missing structure, a patch not offered): reported as the
 *  scene's difference, not as the whole case's. */
const sceneOrWhy = async (trace, context) => {
  try {
    return await browserScene(trace, context);
  } catch (err) {
    return { threw: String(err?.message || err) };
  }
};

/** The first number of a JSON value that `pick` accepts, as [holder, key] (null: none). */
function firstNumber(x, pick) {
  if (!x || typeof x !== "object") return null;
  for (const [k, v] of Object.entries(x)) {
    if (typeof v === "number" && pick(v)) return [x, k];
    const deeper = firstNumber(v, pick);
    if (deeper) return deeper;
  }
  return null;
}

// errors planted in our computed trace, each just past its part's rule, so that its comparison must fail
const PLANTS = {
  value: (t) => {
    const [x, k] = firstNumber(t.nodes.find((n) => n.dtype === "float32" && n.data.length > 1).data, Number.isFinite);
    x[k] += 1e-4;
  },
  figure: (t) => {
    const [x, k] = firstNumber(t.derived, (v) => !Number.isInteger(v));
    x[k] += 1e-3 * (1 + Math.abs(x[k]));
  },
  scene: (t) => {
    // (a scene that could not be computed has no number to alter: it fails as it is)
    t.scene = structuredClone(t.scene); // its structure is shared with the served page's scene: plant in a copy
    const [x, k] = firstNumber(t.scene, (v) => !Number.isInteger(v)) ?? [{}, "none"];
    x[k] += 1e-9 * Math.max(1, Math.abs(x[k]));
  },
};

async function one(c, asked) {
  const theirs = await asked;
  if (theirs.refused) return { problems: { server: [`refused: ${theirs.refused}`] }, nodes: 0 };
  try {
    // the served page's parts: the same code over the server's tensors
    await withPageParts(theirs, c.options.model, keptDocuments);
  } catch (err) {
    return { problems: { server: [`no page parts for the served trace: ${err?.message || err}`] }, nodes: 0 };
  }
  const t0 = performance.now();
  const ours = await computeTrace(c.input, { ...c.options, scene: sceneOrWhy }, keptDocuments);
  const computeMs = performance.now() - t0;
  if (c.plant) PLANTS[c.plant](ours);
  const { pieces } = (await keptDocuments.json(programUrl(c.options.model))).vocabulary;
  const problems = traceProblems(ours, theirs, pieces);
  if (ours.scene?.threw) problems.scene = [`no scene computed: ${ours.scene.threw}`];
  return {
    problems,
    computeMs,
    compareMs: performance.now() - t0 - computeMs,
    nodes: ours.nodes.length,
    scene: ours.scene && !ours.scene.threw,
  };
}

/** Every case compared, the next `ahead` cases' server traces asked while this one is computed (the server's
 *  workers busy meanwhile); a case's differences by part (trace, derived, scene), only where there are some. */
window.localParity = async (cases, ahead = 3) => {
  const out = { failures: [], nodes: 0, scenes: 0, computeMs: 0, compareMs: 0 };
  const ask = (c) =>
    fetchCompactTrace(traceUrl(c.input, c.options)).catch((err) => ({ refused: String(err?.message || err) }));
  const asked = cases.slice(0, ahead).map(ask);
  for (let k = 0; k < cases.length; k++) {
    if (k + ahead < cases.length) asked.push(ask(cases[k + ahead]));
    let r;
    try {
      r = await one(cases[k], asked[k]);
    } catch (err) {
      r = { problems: { threw: [String(err?.stack || err)] }, nodes: 0 };
    }
    asked[k] = null;
    out.nodes += r.nodes;
    out.scenes += r.scene ? 1 : 0;
    out.computeMs += r.computeMs ?? 0;
    out.compareMs += r.compareMs ?? 0;
    const bad = Object.entries(r.problems).filter(([, p]) => p.length);
    if (bad.length) out.failures.push({ k, parts: Object.fromEntries(bad.map(([part, p]) => [part, p.slice(0, 3)])) });
  }
  return out;
};
