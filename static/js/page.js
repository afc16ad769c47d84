// The article's behaviour, by job (static/js/page/): the input and its trace (run.js: the form,
// switching parts off, the time machine of step 21), the live values (live.js), the address and what
// the page holds (state.js), the pinned input and the linked cell (compare.js), which step is in view
// (steps.js), the fact popover (facts.js), each step's exercise (exercises.js). This entry applies the
// address at the start and same-page links in place.
//
// What the page holds is ./store.js's stores, which the stage (static/stage/main.js), the figures and the
// progress bar follow: the trace on show, the step in view, the pinned trace, the training snapshot, the cell
// the stage explains and where the numbers come from; the stage's switches and the time machine ask through
// them too (askedParts, askedSnapshot). window.anatomy (store.js pageView) shows their values to the tests and
// the console, with the page's functions: anatomy.setCheckpoint(n) runs the input on the snapshot after n
// training steps (null: trained); anatomy.keepForOffline(input) keeps what computing another input in the
// browser needs (anatomy.offlineReady: this input's is kept).
import { fetchJson, keepForOffline } from "./api.js";
import { parseAblation } from "./ablation.js";
import { fillLive } from "./page/live.js";
import { DEFAULT_INPUT, MODEL, anatomy, currentInput, errorBox, field, sections, showError } from "./page/state.js";
import { chosenWorked, modelDocument, offlineReady, pinnedTrace, shownTrace, snapshot, stepInView } from "./store.js";
import { bindRun, run, setCheckpoint } from "./page/run.js";
import { bindCompare, compareWith, parseCell, selectCell } from "./page/compare.js";
import { bindSteps, goTo, pin, setStep } from "./page/steps.js";
import { bindFacts } from "./page/facts.js";
import { keepScrollOnFocus } from "./page/place.js";
import { readAddress } from "./page/address.js";
import { bindExercises } from "./page/exercises.js";
import { bindSource } from "./page/status.js";
import { bindPresent } from "./page/present.js";
import { bindClassroom } from "./page/classroom.js";

const LINK_KEYS = ["input", "compare", "cell", "checkpoint", "ablate"];

// A link to this page with an input, a comparison or a cell (the article has such links) is applied in
// place: no reload, and the reader's place in the article stays unless the link names another step.
async function applyLink(url) {
  const p = url.searchParams;
  const input = p.get("input");
  if (p.has("checkpoint") && p.get("checkpoint") !== snapshot.get()) await setCheckpoint(p.get("checkpoint"));
  const ablation = parseAblation(p.get("ablate")),
    shown = shownTrace.get();
  if (
    (input !== null && String(shown?.input.number) !== input.trim())
    || ablation.join(",") !== (shown?.ablation ?? []).join(",")
  ) {
    if (input !== null) field.value = input;
    if (!(await run(input ?? field.value, ablation))) return;
  }
  if (p.has("compare") || pinnedTrace.get()) await compareWith(p.get("compare"));
  goToHash(url.hash);
  if (p.has("cell")) selectCell(parseCell(p.get("cell")));
}

// The step a hash names (#step-16), unless it is the one in view already: a link's, or the address bar's
// own when only the hash changes (typed, or back and forward), which reloads nothing.
function goToHash(hash) {
  const m = /^#step-(\d+)$/.exec(hash);
  const section = m && sections.find((s) => s.dataset.step === m[1]);
  if (section && Number(m[1]) !== stepInView.get()?.step) goTo(section);
}

function onLink(event) {
  const a = event.target instanceof Element ? event.target.closest("a[href]") : null;
  if (!a || event.defaultPrevented || event.button || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey)
    return;
  const url = new URL(a.href, window.location.href);
  if (url.origin !== window.location.origin || url.pathname !== window.location.pathname) return;
  if (!LINK_KEYS.some((k) => url.searchParams.has(k))) return;
  event.preventDefault();
  applyLink(url);
}

// The address's input (with its ablation and snapshot); a bad link falls back, keeping its message.
async function runAddress(address, input) {
  const served = errorBox.textContent.trim(); // what the server said of the address (a bad model=, say)
  const { ablation } = address;
  let ok = await run(input, ablation, false);
  if (!ok && snapshot.get() !== null) {
    // a bad checkpoint in the link: the trained model, with the message
    const message = errorBox.textContent;
    snapshot.set(null);
    ok = await run(input, ablation, false);
    if (ok) showError(message);
  }
  if (!ok && !shownTrace.get() && (input !== DEFAULT_INPUT || ablation.length)) {
    const message = errorBox.textContent; // a bad link: show the default input, keep the message
    if (await run(DEFAULT_INPUT, [], false)) showError(message);
  }
  if (served && !errorBox.textContent) showError(served); // a trace that loaded does not unsay it
  // then what else the link keeps: the pinned input, the explained cell
  if (address.compare) await compareWith(address.compare);
  if (address.cell) selectCell(address.cell);
}

// What computing in the browser needs, fetched and kept once the stage is live and the browser is idle
// (not before: the first picture does not wait for it), so that the page goes on when the server goes away.
function keepWhenIdle(started = performance.now()) {
  const waited = performance.now() - started > 60_000; // a stage that never draws (no WebGL) holds nothing up
  if (!waited && !(window.anatomyStage?.ready && shownTrace.get())) {
    setTimeout(() => keepWhenIdle(started), 500);
    return;
  }
  const keepNow = () =>
    keepForOffline(currentInput(), { checkpoint: snapshot.get(), model: MODEL }).then(offlineReady.set, () => {});
  if (window.requestIdleCallback) requestIdleCallback(keepNow, { timeout: 10_000 });
  else setTimeout(keepNow, 1000);
}

function start(address) {
  const input = address.input || DEFAULT_INPUT;
  // the address's input, as it runs: a static page was rendered with the default in the field
  if (address.input || !field.value) field.value = input;
  snapshot.set(address.checkpoint);
  const first = (address.step !== null && sections.find((s) => s.dataset.step === String(address.step))) || null;
  if (first) {
    first.scrollIntoView({ block: "start" });
    setStep(first);
    pin(first);
  } else if (sections.length) {
    setStep(sections[0]); // the top of the page is step 1, even before its section reaches the 40% line
  }
  // each step's note on where its text is not the modern model's (the server shows them itself; the static
  // folder knows the model only from the address)
  if (MODEL === "modern")
    for (const note of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll(".model-step-note")))
      note.hidden = false;
  fetchJson(`/api/model${MODEL ? `?model=${encodeURIComponent(MODEL)}` : ""}`)
    .then((model) => {
      modelDocument.set(model);
      const trace = shownTrace.get();
      if (trace) fillLive({ ...model.figures, ...trace.derived });
    })
    .catch(() => {});
  runAddress(address, input);
  keepWhenIdle();
}

anatomy.keepForOffline = (input) => keepForOffline(input, { checkpoint: snapshot.get(), model: MODEL });
const address = readAddress(new URL(window.location.href)); // the one reading of the address (address.js)
chosenWorked.set(address.worked); // before the page follows the store: the first run reads it
bindSource();
bindCompare();
bindRun();
bindSteps();
bindFacts();
// the focus on a control of the stage or the progress bar, which stay on screen, leaves the page where it is
for (const box of [document.getElementById("stage"), document.querySelector("nav.progress")]) keepScrollOnFocus(box);
bindExercises();
document.addEventListener("click", onLink);
window.addEventListener("hashchange", () => goToHash(window.location.hash));
start(address);
bindClassroom();
bindPresent(); // after start(): presenter mode opens at the address's step
