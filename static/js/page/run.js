// Running an input: its trace fetched in the compact form (with the parts switched off and the training
// snapshot now shown), the live values filled, the trace set in ../store.js shownTrace for the stage and the
// figures, the address kept; the form's submit, switching parts off (static/js/ablation.js) and the time
// machine of step 21 (../store.js askedSnapshot) all end here.
import { fetchWeightBytes, loadTrace } from "../api.js";
import { answerSwitches, showAblation } from "../ablation.js";
import { fillLive } from "./live.js";
import { MODEL, anatomy, clearError, currentInput, field, form, showError, updateUrl } from "./state.js";
import { bindPlace, keepPlace } from "./place.js";
import { showState } from "./status.js";
import { askedSnapshot, chosenWorked, modelDocument, shownTrace, snapshot } from "../store.js";

let requestSeq = 0;

// The header names the weights the trace read: fetching them starts at once (the stage reads the same
// cache once the trace is announced).
const warmWeights = (header) => {
  if (header.weights_url) fetchWeightBytes(header.weights_url).catch(() => {});
};

// Fetch and show one input's trace with the given parts switched off (by default the ones off now);
// true when it worked. A failure keeps the last good trace. What the reader does keeps their place
// (the new numbers, or the message, change heights above the step being read); the address's own
// first run (keep = false) does not, since the page is still finding the linked step.
export async function run(input, ablation = shownTrace.get()?.ablation ?? [], keep = true) {
  const seq = ++requestSeq;
  if (keep) keepPlace();
  form.setAttribute("aria-busy", "true");
  try {
    const trace = await loadTrace(
      input,
      { ablation, checkpoint: snapshot.get(), model: MODEL, worked: chosenWorked.get() },
      { onHeader: warmWeights },
    );
    if (seq !== requestSeq) return; // a newer input won
    showAblation(trace.ablation || []);
    clearError();
    // the live numbers are the model's on show; where the text is the 2017 model's, a step's note says so
    fillLive({ ...(modelDocument.get()?.figures || {}), ...trace.derived });
    shownTrace.set(trace); // after the live values: presenter mode copies its key sentence with them
    showState();
    updateUrl();
    return true;
  } catch (err) {
    if (seq === requestSeq) showError(err.message); // the last good trace stays
    return false;
  } finally {
    if (seq === requestSeq) form.removeAttribute("aria-busy");
  }
}

// Shows the current input on the snapshot after `step` training steps (null: the trained model); true
// when it worked. A refused checkpoint keeps the last good one, and the message says what is accepted.
export async function setCheckpoint(step) {
  const previous = snapshot.get();
  snapshot.set(step === null || step === undefined || String(step).trim() === "" ? null : String(step).trim());
  const ok = await run(currentInput());
  // overtaken by a newer input or snapshot (undefined): that run says the state, and putting back this
  // one's previous snapshot would leave the page naming a snapshot other than the one on show
  if (ok === undefined) return ok;
  if (!ok) snapshot.set(previous);
  showState();
  updateUrl();
  return ok;
}

// Switching parts off: the stage's switches and step 29's table; the same input, another ablation.
export const ablate = (ablation) => run(currentInput(), ablation);

// Stepping through numbers (↑ and ↓ in the input, held to repeat): one input computed at a time, and when it is
// on show the latest one asked for meanwhile, the ones between skipped (never a queue; on the served page the
// server is asked no faster than it answers).
let wanted = null,
  stepping = false;
async function stepTo(n) {
  wanted = n;
  if (stepping) return;
  stepping = true;
  try {
    while (wanted !== null) {
      const next = wanted;
      wanted = null;
      await run(String(next));
    }
  } finally {
    stepping = false;
  }
}

/** ↑ and ↓ on a number written in digits step it by one; on words (or nothing) they move the caret as ever. */
function onStepKey(event) {
  if ((event.key !== "ArrowUp" && event.key !== "ArrowDown") || event.altKey || event.ctrlKey || event.metaKey) return;
  const text = field.value.trim();
  if (!/^\d{1,7}$/.test(text)) return;
  const n = Number(text) + (event.key === "ArrowUp" ? 1 : -1);
  if (n < 0) return;
  event.preventDefault();
  field.value = String(n); // past the largest number the refusal says what is accepted, as for a typed one
  stepTo(n);
}

export function bindRun() {
  anatomy.setCheckpoint = setCheckpoint;
  anatomy.ablate = ablate;
  askedSnapshot.subscribe(setCheckpoint);
  chosenWorked.subscribe(() => run(currentInput())); // the same input, the row the reader chose
  answerSwitches(ablate, () => shownTrace.get()?.ablation ?? []);
  bindPlace(field);
  field.addEventListener("keydown", onStepKey);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    run(field.value);
  });
}
