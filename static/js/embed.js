// The embed view (/embed, app/embed.py): only the stage, drawing the state its address names, read as the
// article reads its own (page/address.js): the input with its parts switched off and its training snapshot,
// the step, the pinned input to compare with and the explained cell. It keeps window.anatomy as the article
// does (page/state.js: trace, step, stepDetail, compareTrace, cell, cellDetail, ablation, checkpoint,
// ready; source: where the traces come from, api.js), so the stage (static/stage/main.js) follows it the same way. The stage's switches rerun the input.
import { loadTrace, traceSource } from "./api.js";
import { answerSwitches } from "./ablation.js";
import { readAddress } from "./page/address.js";
import { addressedModel } from "./site.js";

const DEFAULT_INPUT = "42";
const main = document.querySelector("main.embed");
const errorBox = document.getElementById("embed-error");
const MODEL = main?.dataset.model || addressedModel();  // the static folder: the address names it
const address = readAddress(new URL(window.location.href));
const step = Number(main?.dataset.step) || 1;  // the server's: a bad step= is step 1, with its message

const anatomy = (window.anatomy = {
  trace: null, step, stepDetail: { step }, compareTrace: null, cell: null, cellDetail: address.cell,
  model: null, checkpoint: address.checkpoint, ablation: address.ablation, ready: false, source: traceSource(),
});
document.addEventListener("anatomy:source", (e) => { anatomy.source = e.detail.source; });  // api.js: where traces come from
const announce = (name, detail) => document.dispatchEvent(new CustomEvent(name, { detail }));
const say = (text) => { if (text && !errorBox.textContent.includes(text)) errorBox.textContent = [errorBox.textContent, text].filter(Boolean).join("; "); };

async function draw(input, ablation) {
  try {
    const trace = await loadTrace(input, { ablation, checkpoint: anatomy.checkpoint, model: MODEL });
    anatomy.trace = trace;
    anatomy.ablation = trace.ablation || [];
    anatomy.ready = true;
    announce("anatomy:trace", trace);
    return true;
  } catch (err) {
    say(err.message);
    return false;
  }
}

async function start() {
  const input = address.input || DEFAULT_INPUT;
  let ok = await draw(input, address.ablation);
  if (!ok && anatomy.checkpoint !== null) { anatomy.checkpoint = null; ok = await draw(input, address.ablation); }
  if (!ok && !anatomy.trace) ok = await draw(DEFAULT_INPUT, []);
  if (ok && address.compare) {
    try {
      anatomy.compareTrace = await loadTrace(address.compare, { model: MODEL });
      announce("anatomy:compare", anatomy.compareTrace);
    } catch (err) { say(`Cannot compare with “${address.compare}”: ${err.message}`); }
  }
}

document.addEventListener("anatomy:explain", (event) => { anatomy.cell = event.detail; });
answerSwitches((parts) => draw(anatomy.trace ? String(anatomy.trace.input.number) : DEFAULT_INPUT, parts), () => anatomy.ablation);
start();
