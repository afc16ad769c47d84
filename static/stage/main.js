// Entry point: finds #stage, loads the weights once, draws each trace the page announces, and
// follows the article's steps. The public object is window.anatomyStage (see README.md).
import { Stage } from './stage.js';
import { fetchWeights, fetchTrace, parseWeights } from './data.js';

const container = document.getElementById('stage');
const api = window.anatomyStage = {
  ready: false, error: null, stats: null, stage: null, traceCount: 0,
};

function injectStyles() {
  if (document.querySelector('link[data-stage-css]')) return;
  const l = document.createElement('link');
  l.rel = 'stylesheet'; l.href = new URL('./stage.css', import.meta.url).href; l.dataset.stageCss = '';
  document.head.appendChild(l);
}

async function start() {
  if (!container) return;
  injectStyles();
  const stage = new Stage(container);
  api.stage = stage; api.stats = stage.stats;
  // page.js may have announced the trace, a deep-linked step, a pinned input and a cell to explain
  // before this module loaded
  let pending = window.anatomy?.trace || null, weights = null, lastStep = window.anatomy?.stepDetail || null;
  let pendingCompare = window.anatomy?.compareTrace ?? undefined, pendingSelect = window.anatomy?.cellDetail || null;
  const flush = () => {  // what waited for the first drawn trace: the comparison, then the cell
    if (!api.ready) return;
    if (pendingCompare !== undefined) { stage.setCompare(pendingCompare); pendingCompare = undefined; }
    if (pendingSelect) { const c = pendingSelect; pendingSelect = null; stage.select(c.id, c.row, c.col, { how: 'link' }); }
  };
  const apply = (trace) => {
    if (!trace || !Array.isArray(trace.nodes) || !trace.nodes.length) return false;  // bad input: keep the stage
    try { stage.setTrace(trace); } catch (e) { console.warn('stage: trace not drawn:', e.message); return false; }
    api.traceCount++; api.input = trace.input; api.ready = true;
    container.dataset.ready = 'true';
    return true;
  };
  // A trace names the URL of the weights it read (`weights_url`; a training snapshot's differ from the
  // shipped model's): those are fetched, and set, before the trace is drawn.
  let weightsUrl = null, latest = null;
  const show = async (trace, { then = flush } = {}) => {  // then: what runs once it is drawn
    latest = trace;
    const url = trace?.weights_url || '/api/weights';
    if (url !== weightsUrl) {
      let w;
      try { w = await fetchWeights(url); } catch (e) { console.warn('stage:', e.message); return; }
      if (latest !== trace) return;  // a newer trace came meanwhile
      weights = w; weightsUrl = url; stage.setWeights(w);
    }
    apply(trace); then();
  };
  document.addEventListener('anatomy:trace', e => { if (weights) show(e.detail); else pending = e.detail; });
  document.addEventListener('anatomy:step', e => { lastStep = e.detail; if (api.ready) stage.applyStep(e.detail); else stage.applyStep(e.detail, { animate: false }); });
  document.addEventListener('anatomy:compare', e => { pendingCompare = e.detail || null; flush(); });
  document.addEventListener('anatomy:select', e => { pendingSelect = e.detail; flush(); });
  if (!window.anatomy) {  // no page.js: the stage answers its own switches
    document.addEventListener('anatomy:ablate', async e => {
      try { const t = await fetchTrace(api.input?.number ?? '42', e.detail?.ablation || []); apply(t); }
      catch (err) { stage.message?.(String(err.message || err)); }
    });
  }
  if (lastStep) stage.applyStep(lastStep, { animate: false });
  try {
    const model = document.getElementById('input-form')?.dataset.model;  // ?model=, named by the server
    weights = await fetchWeights(model ? `/api/weights?model=${encodeURIComponent(model)}` : undefined);
  } catch (e) {
    api.error = String(e.message || e); container.dataset.error = api.error; console.warn('stage:', api.error); return;
  }
  stage.setWeights(weights); weightsUrl = '/api/weights';
  if (!pending && window.anatomy?.trace) pending = window.anatomy.trace;
  if (!pending && !window.anatomy) {
    // No page.js (the stage on its own): fetch the URL's input.
    const input = new URLSearchParams(location.search).get('input') || '42';
    try { pending = await fetchTrace(input); } catch (e) { api.error = String(e.message || e); }
  }
  // the first trace, then the linked step, and only then the comparison and the cell (a step change
  // would close a cell's panel opened before it)
  if (pending) await show(pending, { then: () => {} });
  if (lastStep) stage.applyStep(lastStep, { cut: true });
  flush();
}

Object.assign(api, {
  /** Tensor coordinates → what the inspector now shows ({id, row, col, value, …, text}). */
  inspect: (id, row, col) => api.stage?.inspect(id, row, col) ?? null,
  /** Tensor coordinates → the cell centre's client (page) pixel position {x, y, visible}. */
  project: (id, row, col) => api.stage?.project(id, row, col) ?? null,
  /** Fetches the trace of a new input and animates to it; resolves to false on a bad input. */
  load: async (input) => {
    try { const t = await fetchTrace(input); return !!(t.nodes && api.stage && (api.stage.setTrace(t), api.traceCount++, api.input = t.input, true)); }
    catch { return false; }
  },
  /** Draws another model (a research variant, say): its trace (with its scene) and its weights document. */
  drawModel: (trace, weights) => {
    const s = api.stage;
    if (!s) return false;
    s.setWeights(parseWeights(weights)); s.setTrace(trace);
    api.traceCount++; api.input = trace.input;
    return true;
  },
  /** The scene's steps ({step, title, subject, lit, view, animation}) of the trace on the stage. */
  steps: () => api.stage?.scene?.steps ?? [],
  step: (detail) => api.stage?.applyStep(typeof detail === 'number' ? { step: detail } : detail),
  overview: () => api.stage?.showOverview(),
  returnToStep: () => api.stage?.returnToStep(),
  replay: () => api.stage?.replay(),
  idle: () => api.stage?.idle() ?? Promise.resolve(),
  /** How a step's subject sits on screen now: its on-screen bounding box (clipped to the stage) as
   *  shares of the stage's area, width and height, and the median cell's size in CSS pixels. */
  framing: (ids) => api.stage?.framing(ids ?? api.stage.step?.subject ?? []) ?? null,
  camera: () => { const k = api.stage?.rig.key; return k && { target: k.target.toArray(), azimuth: k.azimuth, elevation: k.elevation, distance: k.distance }; },
  /** The drawn value of a cell as the GPU sees it now (tests: did a new input change the drawing?). */
  drawnValue: (id, row, col) => { const s = api.stage, c = s?.resolve(id, row, col); return c ? s.cells.drawnValue(c.id, c.r, c.c) : null; },
  /** What is drawn at a cell: {value, absent, masked}; in compare mode value is the difference A − B. */
  drawnCell: (id, row, col) => api.stage?.drawnCell(id, row, col) ?? null,
  /** Where a cell's value comes from, without changing the page: {id, row, col, op, value, recomputed,
   *  inputs: [{id, row, col, value}], formula (LaTeX), …}, or {error} for an unknown id or a cell out of range. */
  explain: (id, row, col) => api.stage?.explain(id, row, col) ?? { error: 'the stage is not ready' },
  /** Opens the panel on a cell (as a click does) and returns explain()'s answer. */
  select: (id, row, col) => api.stage?.select(id, row, col, { how: 'click' }) ?? { error: 'the stage is not ready' },
  /** Closes the panel. */
  close: () => api.stage?.closeExplanation(),
  /** The lit cells as the GPU's state says: {cells: [{id, row, col} | {id, all}], target}. */
  lit: () => api.stage?.lit() ?? null,
  /** Compare mode with a trace (or an input to fetch); null turns it off. Resolves to false on a bad input. */
  compare: async (what) => {
    if (!api.stage) return false;
    if (what === null || what === undefined) { api.stage.setCompare(null); return true; }
    try { api.stage.setCompare(typeof what === 'object' ? what : await fetchTrace(what)); return true; } catch { return false; }
  },
  /** A block as CSV text (rows and columns labelled), the stage as a PNG data URL. */
  csv: (id) => api.stage?.csv(id) ?? null,
  png: () => api.stage?.png() ?? null,
});

start();
