// Entry point: finds #stage, draws each trace the page shows (../js/store.js shownTrace, with the weights the
// trace names in `weights_url`, fetched before it is drawn) and follows the article's steps. The public object
// is window.anatomyStage (see README.md).
import { Stage } from "./stage.js";
import { fetchWeights, parseWeights } from "./data.js";
import { loadTrace } from "../js/api.js";
import { pageTrace } from "../js/compact.js";
import { answerSwitches } from "../js/ablation.js";
import { askedCell, pinnedTrace, shownTrace, stageTextFloor, stepInView, veiledCells } from "../js/store.js";
import { overlayRects } from "./overlay.js";
import { cellRects } from "./screenboxes.js";
import { stepPictures } from "./pictures.js";
import { FONT_SHARE } from "./labels.js";

const container = document.getElementById("stage");
/** @type {import("../types.js").StageApi} */
const api = (window.anatomyStage = {
  ready: false,
  error: null,
  stats: null,
  stage: null,
  traceCount: 0,
});

/** Adds stage.css; resolves once it applies (the views keep clear of overlays that it places). */
function injectStyles() {
  if (document.querySelector("link[data-stage-css]")) return Promise.resolve();
  const l = document.createElement("link");
  l.rel = "stylesheet";
  l.href = new URL("./stage.css", import.meta.url).href;
  l.dataset.stageCss = "";
  const loaded = new Promise((resolve) => {
    l.onload = l.onerror = resolve;
  });
  document.head.appendChild(l);
  return loaded;
}

/** Draws a trace (a bad one keeps the stage as it is); true when drawn.
 *  @param {Stage} stage  @param {import("../types.js").Trace} trace */
function apply(stage, trace) {
  if (!trace || !Array.isArray(trace.nodes) || !trace.nodes.length) return false; // bad input: keep the stage
  try {
    stage.setTrace(trace);
  } catch (e) {
    console.warn("stage: trace not drawn:", e.message);
    return false;
  }
  api.traceCount++;
  api.input = trace.input;
  api.ready = true;
  container.dataset.ready = "true";
  return true;
}

/** show(trace) → whether it was drawn: a trace names the URL of the weights it read (a training
 *  snapshot's, another model's differ from the shipped model's); those are fetched, and set, first. */
function traceShower(stage, styled) {
  let weightsUrl = null,
    latest = null;
  return async (trace) => {
    latest = trace;
    await styled;
    const url = trace?.weights_url;
    if (url && url !== weightsUrl) {
      let w;
      try {
        w = await fetchWeights(url);
      } catch (e) {
        api.error = String(e.message || e);
        container.dataset.error = api.error;
        console.warn("stage:", api.error);
        return false;
      }
      if (latest !== trace) return false; // a newer trace came meanwhile
      weightsUrl = url;
      stage.setWeights(w);
    }
    return apply(stage, trace);
  };
}

async function start() {
  if (!container) return;
  const styled = injectStyles();
  const stage = new Stage(container),
    show = traceShower(stage, styled),
    paged = !!window.anatomy; // an article or an embed view holds the input (else the stage holds its own)
  api.stage = stage;
  api.stats = stage.stats;
  // the page may have set the trace, a deep-linked step, a pinned input and a cell to explain before this
  // module loaded; the comparison and the cell wait for the first drawn trace
  let lastStep = stepInView.get(),
    pendingCompare = pinnedTrace.get() ?? undefined,
    pendingSelect = askedCell.get();
  const flush = () => {
    if (!api.ready) return;
    if (pendingCompare !== undefined) {
      stage.setCompare(pendingCompare);
      pendingCompare = undefined;
    }
    if (pendingSelect) {
      const c = pendingSelect;
      pendingSelect = null;
      stage.select(c.id, c.row, c.col, { how: "link", panel: c.panel !== false });
    }
  };
  // the first trace drawn, then the linked step, and only then the comparison and the cell (a step
  // change would close a cell's panel opened before it); later traces need only the waiting ones
  let booted = false;
  const drawn = () => {
    if (!booted && lastStep) stage.applyStep(lastStep, { cut: true });
    booted = true;
    flush();
  };
  shownTrace.subscribe(async (trace) => {
    if (await show(trace)) drawn();
  });
  stepInView.subscribe((detail) => {
    lastStep = detail;
    stage.applyStep(detail, api.ready ? {} : { animate: false });
  });
  pinnedTrace.subscribe((trace) => {
    pendingCompare = trace || null;
    flush();
  });
  veiledCells.follow((rects) => stage.setVeils(rects));
  stageTextFloor.follow((px) => stage.setTextFloor(px)); // presenter mode's, for a projector
  askedCell.subscribe((cell) => {
    pendingSelect = cell;
    flush();
  });
  if (lastStep) stage.applyStep(lastStep, { animate: false });
  const first = paged ? shownTrace.get() : await ownTrace(stage, show); // a trace set before this loaded
  if (first && (await show(first))) drawn();
}

/** No page.js (the stage on its own): the URL's input, and the stage answers its own switches. */
async function ownTrace(stage, show) {
  answerSwitches(
    async (parts) => {
      try {
        await show(await loadTrace(api.input?.number ?? "42", { ablation: parts }));
      } catch (err) {
        stage.message(String(err.message || err));
      }
    },
    () => api.stage?.trace?.ablation || [],
  );
  const input = new URLSearchParams(location.search).get("input") || "42";
  try {
    return await loadTrace(input);
  } catch (e) {
    api.error = String(e.message || e);
    return null;
  }
}

Object.assign(api, {
  /** Tensor coordinates → what the inspector now shows ({id, row, col, value, …, text}). */
  inspect: (id, row, col) => api.stage?.inspect(id, row, col) ?? null,
  /** Tensor coordinates → the cell centre's client (page) pixel position {x, y, visible}. */
  project: (id, row, col) => api.stage?.project(id, row, col) ?? null,
  /** Fetches the trace of a new input and animates to it; resolves to false on a bad input. */
  load: async (input) => {
    try {
      const t = await loadTrace(input);
      return !!(t.nodes && api.stage && (api.stage.setTrace(t), api.traceCount++, (api.input = t.input), true));
    } catch {
      return false;
    }
  },
  /** Draws another model (a research variant, say): its trace (with its scene) and its weights document, as
   *  JSON documents (the trace brought to the page's form: ../js/compact.js pageTrace). */
  drawModel: (trace, weights) => {
    const s = api.stage;
    if (!s) return false;
    s.setWeights(parseWeights(weights));
    s.setTrace(pageTrace(trace));
    api.traceCount++;
    api.input = trace.input;
    return true;
  },
  /** The scene's steps ({step, title, subject, lit, view, animation}) of the trace on the stage. */
  steps: () => api.stage?.scene?.steps ?? [],
  step: (detail) => api.stage?.applyStep(typeof detail === "number" ? { step: detail } : detail),
  overview: () => api.stage?.showOverview(),
  returnToStep: () => api.stage?.returnToStep(),
  replay: () => api.stage?.replay(),
  idle: () => api.stage?.idle() ?? Promise.resolve(),
  /** How a step's subject sits on screen now: its on-screen bounding box (clipped to the stage) as
   *  shares of the stage's area, width and height, and the median cell's size in CSS pixels. */
  framing: (ids) => api.stage?.framing(ids ?? api.stage.step?.subject ?? []) ?? null,
  /** Every label drawn now: {text, left, top, right, bottom, px (its line), font (its type size)} in client
   *  pixels (as the shader grows it). */
  labels: () =>
    (api.stage?.tour.labelRects() ?? []).map((r) => ({
      ...r,
      font: r.px * FONT_SHARE, // its type size
      text: (api.stage.drawnLabels ?? api.stage.scene.labels)[r.i].text, // as drawn (a token with its position)
    })),
  /** The overlays over the stage now ({name, left, top, right, bottom}) and the switches shown. */
  overlays: () => (api.stage ? overlayRects(api.stage.el) : []),
  /** Every block's cells on screen now (screenboxes.js cellRects): {id, x0, y0, x1, y1}, stage-relative px. */
  blockRects: () => (api.stage ? cellRects(api.stage) : []),
  /** The switches shown now: {part, label (the index of the label beside it), left, top, right, bottom}. */
  switches: () =>
    (api.stage?.switches.buttons ?? [])
      .filter((x) => !x.b.hidden)
      .map((x) => {
        const r = x.b.getBoundingClientRect();
        return { part: x.s.id, label: x.label, left: r.left, top: r.top, right: r.right, bottom: r.bottom };
      }),
  /** What the step's view frames now: {blocks, view} (a phone's stage frames a part of the subject). */
  framed: () => {
    const t = api.stage?.tour;
    return t?.framed ? { blocks: t.framed, view: t.framedView, window: t.framedWindow } : null;
  },
  camera: () => {
    const k = api.stage?.rig.key;
    return k && { target: k.target.toArray(), azimuth: k.azimuth, elevation: k.elevation, distance: k.distance };
  },
  /** The drawn value of a cell as the GPU sees it now (tests: did a new input change the drawing?). */
  drawnValue: (id, row, col) => {
    const s = api.stage,
      c = s?.resolve(id, row, col);
    return c ? s.cells.drawnValue(c.id, c.r, c.c) : null;
  },
  /** What is drawn at a cell: {value, absent, masked}; in compare mode value is the difference A − B. */
  drawnCell: (id, row, col) => api.stage?.drawnCell(id, row, col) ?? null,
  /** Where a cell's value comes from, without changing the page: {id, row, col, op, value, recomputed,
   *  inputs: [{id, row, col, value}], formula (LaTeX), …}, or {error} for an unknown id or a cell out of range. */
  explain: (id, row, col) => api.stage?.explain(id, row, col) ?? { error: "the stage is not ready" },
  /** Opens the panel on a cell (as a click does) and returns explain()'s answer. */
  select: (id, row, col) => api.stage?.select(id, row, col, { how: "click" }) ?? { error: "the stage is not ready" },
  /** Closes the panel. */
  close: () => api.stage?.closeExplanation(),
  /** The lit cells as the GPU's state says: {cells: [{id, row, col} | {id, all}], target}. */
  lit: () => api.stage?.lit() ?? null,
  /** The rings on cells now ({id, row, col, kind, …}) and the cells outlined as their row's largest. */
  marked: () => api.stage?.marks.marked() ?? null,
  outlined: (id) => api.stage?.cells.outlined(id) ?? null,
  /** Compare mode with a trace (a JSON document or the page's form; or an input to fetch); null turns it off.
   *  Resolves to false on a bad input. */
  compare: async (what) => {
    if (!api.stage) return false;
    if (what === null || what === undefined) {
      api.stage.setCompare(null);
      return true;
    }
    try {
      api.stage.setCompare(typeof what === "object" ? pageTrace(what) : await loadTrace(what));
      return true;
    } catch {
      return false;
    }
  },
  /** A block as CSV text (rows and columns labelled), the stage as a PNG data URL. */
  csv: (id) => api.stage?.csv(id) ?? null,
  png: () => api.stage?.png() ?? null,
  /** The stage settled at each step (default: all of the scene's), each as a PNG Blob with the cards shown
   *  over it (the handout, static/js/handout.js); null if the stage has no trace or it changed meanwhile. */
  pictures: (steps, onStep) =>
    api.stage?.scene ? stepPictures(api.stage, steps ?? api.steps().map((s) => s.step), onStep) : Promise.resolve(null),
});

start();
