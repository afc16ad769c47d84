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
// "Print the lecture's handout" prints the lecture path's stops only (page/lecture.js): each with its step's
// title, a picture of the stage there (drawn light: on paper the dark stage is inverted, its hues kept), the
// stop's key line, its question and the inputs to try; two stops a page, on white (print.css). Its pictures live
// in a section of their own (#lecture-handout, shown only in that print), made again for each print.
import { formatNumber } from "./format.js";
import { anatomy } from "./page/state.js";
import { lecture } from "./page/lecture.js";
import { pinnedTrace, shownTrace, snapshot } from "./store.js";

const button = document.getElementById("print-handout");
const lectureButton = document.getElementById("print-lecture-handout");
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

// ---- the lecture's handout ----

/** A picture of the dark stage made light for paper: inverted, with its hues turned back (a weight's colour
 *  keeps its hue; what was bright on black is dark on white). */
async function lightPicture(png, width, height) {
  const bitmap = await createImageBitmap(png);
  const canvas = Object.assign(document.createElement("canvas"), { width, height }),
    g = canvas.getContext("2d");
  g.filter = "invert(1) hue-rotate(180deg)";
  g.drawImage(bitmap, 0, 0, width, height);
  bitmap.close();
  return new Promise((ok) => canvas.toBlob(ok, "image/png"));
}

const el = (tag, props = {}, ...kids) => {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...kids);
  return e;
};

/** One stop of the path on paper: its step's title, the picture, the key line, the question and the inputs. */
function stopBlock(stop, index, picture, words) {
  const section = document.getElementById(`step-${stop.step}`),
    title = section?.querySelector("h2")?.textContent.trim() || "";
  const img = el("img", {
    src: URL.createObjectURL(picture),
    alt: `The stage at step ${stop.step}, ${title}, ${words}`,
  });
  const tries = stop.tries.map((n) => formatNumber(n, "int")).join(", ");
  return el(
    "article",
    { className: "lh-stop" },
    el(
      "h2",
      {},
      el("span", { className: "lh-n" }, `${index + 1}`),
      ` Step ${stop.step}: ${title} `,
      el("span", { className: "lh-min" }, `(${stop.minutes} min)`),
    ),
    el("figure", {}, img),
    el("p", { className: "lh-key" }, stop.key),
    el("p", { className: "lh-ask" }, el("b", {}, "Think: "), stop.ask),
    tries ? el("p", { className: "lh-try" }, el("b", {}, "Try: "), `the inputs ${tries}, at step ${stop.step}.`) : "",
  );
}

let lectureBusy = null;

/** The lecture's handout in the page (#lecture-handout), for the input on show; true when made. */
async function makeLecture() {
  const path = lecture(),
    stage = window.anatomyStage,
    trace = anatomy.trace,
    compare = anatomy.compareTrace;
  if (!path) return false;
  if (!stage?.ready || !trace || stage.stage?.trace !== trace) {
    say("The stage is still drawing the input; try again in a moment.");
    return false;
  }
  const steps = path.stops.map((s) => s.step);
  const pictures = await stage.pictures(steps, (n, done) =>
    say(`Drawing the stage at step ${n} (${done} of ${steps.length})…`),
  );
  if (!pictures || anatomy.trace !== trace || anatomy.compareTrace !== compare) {
    say("The input changed while the stage was drawn; try again.");
    return false;
  }
  const words = described(trace, compare);
  const light = await Promise.all(pictures.map((p) => lightPicture(p.png, p.width, p.height)));
  const blocks = path.stops.map((stop, i) => stopBlock(stop, i, light[i], words));
  const old = document.getElementById("lecture-handout");
  for (const img of old?.querySelectorAll("img") || []) URL.revokeObjectURL(img.src);
  const section = el(
    "section",
    { id: "lecture-handout", className: "lecture-handout" },
    el(
      "header",
      {},
      el("h1", {}, path.title),
      el(
        "p",
        {},
        `A handout: ${formatNumber(path.stops.length, "int")} steps of “Anatomy of the Transformer”, `
          + `the stage drawn ${words}. The whole article, with a worked example for your own number at every `
          + `step: ${new URL("./", window.location.href).href.replace(/[?#].*$/, "")}`,
      ),
    ),
    ...blocks,
  );
  if (old) old.replaceWith(section);
  else document.querySelector(".article")?.prepend(section);
  await Promise.all([...section.querySelectorAll("img")].map((i) => i.decode().catch(() => {})));
  say(`The lecture's handout is ready: ${formatNumber(blocks.length, "int")} steps, ${words}.`);
  return true;
}

/** Makes the lecture's handout and prints it (html.handout-lecture: print.css prints that section only). */
async function printLecture() {
  if (lectureBusy) return;
  lectureButton?.setAttribute("aria-busy", "true");
  lectureBusy = makeLecture().finally(() => {
    lectureBusy = null;
    lectureButton?.removeAttribute("aria-busy");
  });
  if (!(await lectureBusy)) return;
  root.classList.add("handout-lecture");
  window.print();
}
window.addEventListener("afterprint", () => root.classList.remove("handout-lecture"));

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

anatomy.handout = { prepare, print, ready: fresh, lecture: { make: makeLecture, print: printLecture } };
if (lectureButton) {
  if (lecture()) lectureButton.addEventListener("click", printLecture);
  else lectureButton.remove();
}
if (button) {
  button.addEventListener("click", print);
  button.closest("[hidden]")?.removeAttribute("hidden");
}
