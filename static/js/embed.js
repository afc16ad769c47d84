// The embed view (/embed, app/routes/embed.py): only the stage, drawing the state its address names, read as the
// article reads its own (page/address.js): the input with its parts switched off and its training snapshot,
// the step, the pinned input to compare with and the explained cell. It sets the same stores as the article
// (./store.js), so the stage (static/stage/main.js) follows it the same way, and shows them as window.anatomy.
// The stage's switches rerun the input.
import { loadTrace } from "./api.js";
import { answerSwitches } from "./ablation.js";
import { readAddress } from "./page/address.js";
import { addressedModel, isStaticSite, siteUrl } from "./site.js";
import { askedCell, chosenWorked, pageView, pinnedTrace, shownTrace, snapshot, stepInView } from "./store.js";

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

window.anatomy = pageView();
stepInView.set({ step });
snapshot.set(address.checkpoint);
askedCell.set(address.cell); // for the stage, once its first trace is drawn
chosenWorked.set(address.worked);
const say = (text) => {
  if (text && !errorBox.textContent.includes(text))
    errorBox.textContent = [errorBox.textContent, text].filter(Boolean).join("; ");
};

async function draw(input, ablation) {
  try {
    const options = { ablation, checkpoint: snapshot.get(), model: MODEL, worked: chosenWorked.get() };
    shownTrace.set(await loadTrace(input, options));
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
    stepInView.set({ step: first });
  }
  const shown = stepInView.get().step;
  const { title } = steps.find((s) => s.step === shown);
  const query = new URLSearchParams(window.location.search);
  for (const k of ["step", "present"]) query.delete(k);
  document.querySelector(".embed-step").textContent = `Step ${shown}`;
  document.querySelector(".embed-caption a").lastChild.textContent = ` ${title}`;
  /** @type {HTMLAnchorElement} */ (document.querySelector(".embed-caption a")).href =
    `${siteUrl("/")}${query.size ? `?${query}` : ""}#step-${shown}`;
  document.title = `Step ${shown}: ${title} · Anatomy of the Transformer`;
}

async function start() {
  const input = address.input || DEFAULT_INPUT;
  let ok = await draw(input, address.ablation);
  if (!ok && snapshot.get() !== null) {
    snapshot.set(null);
    ok = await draw(input, address.ablation);
  }
  if (!ok && !shownTrace.get()) ok = await draw(DEFAULT_INPUT, []);
  if (STATIC && shownTrace.get()) captionStep(shownTrace.get().scene.steps);
  if (ok && address.compare) {
    try {
      pinnedTrace.set(await loadTrace(address.compare, { model: MODEL }));
    } catch (err) {
      say(`Cannot compare with “${address.compare}”: ${err.message}`);
    }
  }
}

chosenWorked.subscribe(() =>
  draw(String(shownTrace.get()?.input.number ?? DEFAULT_INPUT), shownTrace.get()?.ablation ?? []),
);
answerSwitches(
  (parts) => draw(String(shownTrace.get()?.input.number ?? DEFAULT_INPUT), parts),
  () => shownTrace.get()?.ablation ?? [],
);
start();
