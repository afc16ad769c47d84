// The embed view (/embed, app/routes/embed.py): only the stage, drawing the state its address names, read as the
// article reads its own (page/address.js): the input with its parts switched off and its training snapshot,
// the step, the pinned input to compare with and the explained cell. It keeps window.anatomy as the article
// does (page/state.js: trace, step, stepDetail, compareTrace, cell, cellDetail, ablation, checkpoint,
// ready; source: where the traces come from, api.js), so the stage (static/stage/main.js) follows it the same
// way. The stage's switches rerun the input.
import { loadTrace, traceSource } from "./api.js";
import { answerSwitches } from "./ablation.js";
import { readAddress } from "./page/address.js";
import { addressedModel, isStaticSite, siteUrl } from "./site.js";
import { shownTrace, withShownTrace } from "./store.js";

const DEFAULT_INPUT = "42";
const main = /** @type {HTMLElement | null} */ (document.querySelector("main.embed"));
const errorBox = document.getElementById("embed-error");
const MODEL = main?.dataset.model || addressedModel(); // the static folder: the address names it
const address = readAddress(new URL(window.location.href));
// the server's (a bad step= is step 1, with its message); the static folder's one embed page was rendered for
// step 1, so there the address's step= is read as app/routes/embed.py reads it, checked against the scene's steps
// once the first trace is in
const STATIC = isStaticSite();
const askedStep = new URLSearchParams(window.location.search).get("step") ?? "";
const step = (STATIC ? /^\d+$/.test(askedStep) && Number(askedStep) : Number(main?.dataset.step)) || 1;

/** @type {import("../types.js").PageState} */
const anatomy = (window.anatomy = withShownTrace({
  // its `trace` a view of shownTrace, which the stage follows
  step,
  stepDetail: { step },
  compareTrace: null,
  cell: null,
  cellDetail: address.cell,
  model: null,
  checkpoint: address.checkpoint,
  ablation: address.ablation,
  ready: false,
  source: traceSource(),
}));
document.addEventListener("anatomy:source", (e) => {
  anatomy.source = e.detail.source;
}); // api.js: where traces come from
const announce = (name, detail) => document.dispatchEvent(new CustomEvent(name, { detail }));
const say = (text) => {
  if (text && !errorBox.textContent.includes(text))
    errorBox.textContent = [errorBox.textContent, text].filter(Boolean).join("; ");
};

async function draw(input, ablation) {
  try {
    const trace = await loadTrace(input, { ablation, checkpoint: anatomy.checkpoint, model: MODEL });
    shownTrace.set(trace);
    anatomy.ablation = trace.ablation || [];
    anatomy.ready = true;
    announce("anatomy:trace", trace);
    return true;
  } catch (err) {
    say(err.message);
    return false;
  }
}

// The static folder's caption, title and article link for the address's step (the server renders them
// elsewhere: app/routes/embed.py, whose message for a step it has not this repeats).
function captionStep(steps) {
  const numbers = steps.map((s) => s.step),
    first = numbers[0],
    last = numbers.at(-1);
  if (askedStep !== "" && !(/^\d+$/.test(askedStep) && numbers.includes(Number(askedStep)))) {
    say(`no step '${askedStep.slice(0, 20)}' (the steps are ${first}–${last}); the stage shows step ${first}`);
    anatomy.step = first;
    anatomy.stepDetail = { step: first };
    announce("anatomy:step", anatomy.stepDetail);
  }
  const { title } = steps.find((s) => s.step === anatomy.step);
  const query = new URLSearchParams(window.location.search);
  for (const k of ["step", "present"]) query.delete(k);
  document.querySelector(".embed-step").textContent = `Step ${anatomy.step}`;
  document.querySelector(".embed-caption a").lastChild.textContent = ` ${title}`;
  /** @type {HTMLAnchorElement} */ (document.querySelector(".embed-caption a")).href =
    `${siteUrl("/")}${query.size ? `?${query}` : ""}#step-${anatomy.step}`;
  document.title = `Step ${anatomy.step}: ${title} · Anatomy of the Transformer`;
}

async function start() {
  const input = address.input || DEFAULT_INPUT;
  let ok = await draw(input, address.ablation);
  if (!ok && anatomy.checkpoint !== null) {
    anatomy.checkpoint = null;
    ok = await draw(input, address.ablation);
  }
  if (!ok && !anatomy.trace) ok = await draw(DEFAULT_INPUT, []);
  if (STATIC && anatomy.trace) captionStep(anatomy.trace.scene.steps);
  if (ok && address.compare) {
    try {
      anatomy.compareTrace = await loadTrace(address.compare, { model: MODEL });
      announce("anatomy:compare", anatomy.compareTrace);
    } catch (err) {
      say(`Cannot compare with “${address.compare}”: ${err.message}`);
    }
  }
}

document.addEventListener("anatomy:explain", (event) => {
  anatomy.cell = event.detail;
});
answerSwitches(
  (parts) => draw(anatomy.trace ? String(anatomy.trace.input.number) : DEFAULT_INPUT, parts),
  () => anatomy.ablation,
);
start();
