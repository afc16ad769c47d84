// The printable handout (static/css/print.css): "Print a handout" draws every figure not drawn yet, puts
// into each step's section, under its heading, a picture of the stage at that step for the input on show
// (window.anatomyStage.pictures: the step's view settled, names and numbers painted, with copies of the
// cards the stage shows over it), then opens the browser's print. Every step has a picture: each shows the
// stage, step 1 the whole machine. The pictures are for printing only, and a new input, pinned input or
// training snapshot discards them (they would show another). The browser's own Print (Ctrl+P) prints the
// article as it is, with the pictures if they were made for what is on show; without them a line at the
// top of the print says how to get them (a print cannot wait while 29 views are drawn). Either way the
// "more" sections of the research desk print open. window.anatomy.handout = {prepare, print, ready} for
// tests and the console.
import { formatNumber } from "./format.js";
import { anatomy } from "./page/state.js";
import { pinnedTrace, shownTrace, snapshot } from "./store.js";

const button = document.getElementById("print-handout");
const status = document.getElementById("handout-status");
const root = document.documentElement;
let made = null; // {trace, compare, figures: [<figure>]}: the pictures in the page, and what they show
let busy = null;

const say = (text) => {
  if (status) status.textContent = text;
};
const fresh = () => !!made && made.trace === anatomy.trace && made.compare === anatomy.compareTrace;

/** What the pictures show, in words: the input, and what else changes the stage's colours.
 *  @param {import("../types.js").Trace} trace  @param {import("../types.js").Trace | null} compare */
function described(trace, compare) {
  let text = `for the input ${formatNumber(trace.input.number, "int")} (${trace.input.english.join(" ")})`;
  if (compare) text += `, coloured by its difference from ${formatNumber(compare.input.number, "int")}`;
  if (trace.ablation?.length) {
    const parts = `${formatNumber(trace.ablation.length, "int")} part${trace.ablation.length > 1 ? "s" : ""}`;
    text += `, with ${parts} switched off`;
  }
  if (trace.checkpoint !== null && trace.checkpoint !== undefined)
    text += `, after ${formatNumber(Number(trace.checkpoint), "int")} training steps`;
  return text;
}

function discard() {
  for (const fig of made?.figures || []) {
    URL.revokeObjectURL(fig.querySelector("img").src);
    fig.remove();
  }
  made = null;
  root.classList.remove("handout-ready");
}

/** One step's picture and its cards, for its section. */
function pictureFigure(p, section, words) {
  const title = section.querySelector("h2")?.textContent.trim() || "";
  const img = Object.assign(document.createElement("img"), {
    src: URL.createObjectURL(p.png),
    width: p.width,
    height: p.height,
    alt: `The stage at step ${p.step}, ${title}, ${words}`,
  });
  const caption = Object.assign(document.createElement("figcaption"), {
    textContent: `The stage at step ${p.step}, ${words}.`,
  });
  const fig = Object.assign(document.createElement("figure"), { className: "handout-picture" });
  fig.dataset.step = String(p.step);
  fig.append(img);
  if (p.cards.length) fig.append(Object.assign(document.createElement("div"), { className: "handout-cards" }));
  fig.querySelector(".handout-cards")?.append(...p.cards);
  fig.append(caption);
  return fig;
}

async function make() {
  const stage = window.anatomyStage,
    trace = anatomy.trace,
    compare = anatomy.compareTrace;
  if (!stage?.ready || !trace || stage.stage?.trace !== trace) {
    say("The stage is still drawing the input; try again in a moment.");
    return false;
  }
  say("Drawing the figures…");
  await Promise.all([...document.querySelectorAll("figure[data-figure]")].map((f) => window.anatomyFigures?.draw(f)));
  const steps = stage.steps().map((s) => s.step);
  const pictures = await stage.pictures(steps, (n, done) =>
    say(`Drawing the stage at step ${n} (${done} of ${steps.length})…`),
  );
  if (!pictures || anatomy.trace !== trace || anatomy.compareTrace !== compare) {
    say("The input changed while the stage was drawn; try again.");
    return false;
  }
  discard();
  const words = described(trace, compare),
    figures = [];
  for (const p of pictures) {
    const section = document.getElementById(`step-${p.step}`),
      heading = section?.querySelector("h2");
    if (!heading) continue;
    const fig = pictureFigure(p, section, words);
    heading.after(fig);
    figures.push(fig);
  }
  await Promise.all(
    figures.map((f) =>
      f
        .querySelector("img")
        .decode()
        .catch(() => {}),
    ),
  ); // whole before the print starts
  made = { trace, compare, figures };
  root.classList.add("handout-ready");
  say(`The handout is ready: ${formatNumber(figures.length, "int")} pictures of the stage, ${words}.`);
  return true;
}

/** Makes the pictures unless those in the page show what is on show now; true when they do. */
function prepare() {
  if (fresh()) return Promise.resolve(true);
  if (!busy) {
    button?.setAttribute("aria-busy", "true");
    busy = make().finally(() => {
      busy = null;
      button?.removeAttribute("aria-busy");
    });
  }
  return busy;
}

async function print() {
  if (busy) return; // a second press while the pictures are drawn: one print
  if (await prepare()) window.print();
}

// the browser's own Print: the research desk's "more" opens for the print, and closes again after it
let opened = [];
window.addEventListener("beforeprint", () => {
  opened = [...document.querySelectorAll("details.desk-more:not([open])")];
  for (const d of opened) d.open = true;
  if (!fresh()) discard();
});
window.addEventListener("afterprint", () => {
  for (const d of opened) d.open = false;
  opened = [];
});

for (const held of [shownTrace, pinnedTrace, snapshot])
  held.subscribe(() => {
    if (made && !fresh()) discard();
  });

anatomy.handout = { prepare, print, ready: fresh };
if (button) {
  button.addEventListener("click", print);
  button.closest("[hidden]")?.removeAttribute("hidden");
}
