// Presenter mode (?present=1), for teaching from the page: the stage full screen for a projector, above it
// the step's title and its key sentence in large type: the article's own sentence, the span.key-sentence that
// article/keysentence.py marks in each step (with the formula it introduces, when it ends in a colon), never
// a second copy. Next and previous by the buttons, Space, the left and right arrows and PageUp/PageDown (a
// clicker's keys); the explained cell's panel and the worked row's card are shown large (classroom.css). Esc
// (once the panel is closed) or the button goes back to the article at the same step. The flag stays in the
// address, so a link (or a reload) opens the same view; state.js keeps the rest of the state there.
// The lecture path (lecture.js; the button, the key L, or present=lecture in the address): next and previous
// go from stop to stop, and the bar shows the stop's own key line, its minutes and the question for the room.
// On a projector the stage's names are drawn at least 18 px at 1080 lines (FLOOR, in proportion on others).
import { formatNumber } from "../format.js";
import { fitFormulas } from "../math.js";
import { readAddress } from "./address.js";
import { anatomy, sections } from "./state.js";
import { explainedCell, shownTrace, stageTextFloor, stepInView } from "../store.js";
import { pin, setStep, unpinStep } from "./steps.js";
import { lecture, stepAlong, stopAt } from "./lecture.js";

const NEXT = new Set([" ", "PageDown", "ArrowRight"]),
  PREVIOUS = new Set(["PageUp", "ArrowLeft"]);
let bar = null;
let onPath = false; // walking the lecture path
// the stage's names' least type size, as a share of the projector's height: 18 CSS px at 1080 lines
const FLOOR = 18 / 1080;
const textFloor = () => stageTextFloor.set(bar ? Math.round(FLOOR * window.innerHeight) : 0);
// The bar's height (for the panel's room beneath it, classroom.css) changes with each step's words and as
// fonts arrive; the stage beneath changes with it, and the step's view is framed again for its new size.
let barHeight = 0;
const measure = new ResizeObserver(() => {
  if (!bar || bar.offsetHeight === barHeight) return;
  barHeight = bar.offsetHeight;
  document.body.style.setProperty("--present-h", `${barHeight}px`);
  reframe();
});

const el = (tag, props = {}, ...kids) => {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...kids);
  return e;
};
const button = (cls, text, label, act) => {
  const b = el("button", { type: "button", className: cls, textContent: text, title: label });
  if (label !== text) b.setAttribute("aria-label", label);
  b.addEventListener("click", act);
  return b;
};
const current = () => sections.find((s) => Number(s.dataset.step) === stepInView.get()?.step) || sections[0];

/** The step's key sentence as the article shows it now (live values filled, formulas typeset), without
 *  the citation marks and ledger hooks a slide has no use for; the display formula it introduces, if any. */
function keyOf(section) {
  const key = section.querySelector(".key-sentence");
  if (!key) return [];
  const copy = key.cloneNode(true);
  for (const c of copy.querySelectorAll("a.cite")) c.remove();
  for (const f of copy.querySelectorAll("[data-fact]")) {
    f.removeAttribute("tabindex");
    f.removeAttribute("data-fact");
  }
  const p = key.closest("p"),
    rest = document.createRange();
  if (p) {
    rest.setStartAfter(key);
    rest.setEnd(p, p.childNodes.length);
  }
  const formula =
    p
    && key.textContent.trim().endsWith(":")
    && !rest.toString().trim()
    && p.nextElementSibling?.matches("div.arithmatex")
      ? p.nextElementSibling.cloneNode(true)
      : null;
  return [copy, formula].filter(Boolean);
}

function render() {
  if (!bar) return;
  const section = current(),
    n = Number(section.dataset.step),
    i = sections.indexOf(section);
  const title = section.querySelector("h2")?.textContent.trim() || "";
  const at = onPath ? stopAt(n) : null,
    path = lecture(),
    int = (k) => formatNumber(k, "int");
  const part = section
    .querySelector(".step-section")
    ?.textContent.replace(/^\s*\d+\s*/, "")
    .trim();
  const { minutes, start } = at?.stop ?? { minutes: 0, start: 0 };
  bar.querySelector(".present-count").textContent = at
    ? `Lecture ${int(at.index + 1)} of ${int(path.stops.length)} · ${int(minutes)} min `
      + `(${int(start)}–${int(start + minutes)} of ${int(path.minutes)}) · step ${int(n)}`
    : `Step ${int(n)} of ${int(sections.length)} · ${part || ""}`;
  bar.querySelector(".present-title").textContent = title;
  // on the path, the stop's own key line (the step's point, written for the lecture); else the article's
  const [sentence, formula] = at ? [document.createTextNode(at.stop.key), null] : keyOf(section);
  const key = bar.querySelector(".present-key");
  if (at) key.replaceChildren(sentence);
  else key.replaceChildren(...(sentence ? [...sentence.childNodes] : []));
  const ask = bar.querySelector(".present-ask");
  ask.textContent = at ? `Ask the room: ${at.stop.ask}` : "";
  ask.hidden = !at;
  const toggle = bar.querySelector(".present-path");
  toggle.setAttribute("aria-pressed", String(onPath));
  toggle.hidden = !path;
  bar.dataset.stop = at ? String(at.index + 1) : "";
  const box = bar.querySelector(".present-formula");
  box.replaceChildren(...(formula ? [formula] : []));
  box.hidden = !formula;
  if (formula) fitFormulas(box);
  bar.querySelector(".present-previous").disabled = onPath ? stepAlong(n, -1) === null : i <= 0;
  bar.querySelector(".present-next").disabled = onPath ? stepAlong(n, 1) === null : i >= sections.length - 1;
  bar.dataset.step = String(n);
}

/** To the step `by` places on (−1: back), as the article would go there, without scrolling it. */
export function move(by) {
  const here = current(),
    along = onPath ? stepAlong(Number(here.dataset.step), by) : null,
    next = onPath ? sections.find((s) => Number(s.dataset.step) === along) : sections[sections.indexOf(here) + by];
  if (!next) return;
  unpinStep(); // a step held since the load would pull the words back to it
  setStep(next);
}

/** The lecture path on or off; turned on off its steps, it goes to the path's next stop (or its first). */
export function setPath(on) {
  if (!bar) return;
  onPath = !!on && !!lecture();
  keepAddress(true);
  const n = Number(current().dataset.step);
  if (onPath && !stopAt(n)) {
    const to = stepAlong(n, 1) ?? lecture().stops[0].step,
      section = sections.find((s) => Number(s.dataset.step) === to);
    if (section) {
      unpinStep();
      setStep(section);
    }
  }
  render();
}

function build() {
  const fullscreen = button("present-fullscreen", "Full screen", "Full screen (the browser's; Esc leaves it)", () => {
    if (document.fullscreenElement) document.exitFullscreen();
    else document.documentElement.requestFullscreen?.().catch(() => {});
  });
  return el(
    "section",
    { className: "present-bar", ariaLabel: "Presenter mode" },
    el(
      "div",
      { className: "present-top" },
      el("p", { className: "present-count" }),
      el(
        "div",
        { className: "present-nav" },
        button("present-previous", "‹ Previous", "Previous step (left arrow, Page Up)", () => move(-1)),
        button("present-next", "Next ›", "Next step (Space, right arrow, Page Down)", () => move(1)),
        button("present-path", "Lecture path", "The lecture path: its steps only, with their key lines (L)", () =>
          setPath(!onPath),
        ),
        fullscreen,
        button("present-exit", "Back to the article", "Back to the article at this step (Esc)", () => leave()),
      ),
    ),
    el(
      "div",
      { className: "present-words", ariaLive: "polite", ariaAtomic: "true" },
      el("h1", { className: "present-title", tabIndex: -1 }),
      el("p", { className: "present-key" }),
      el("p", { className: "present-ask", hidden: true }),
    ),
    el("div", { className: "present-formula", hidden: true }),
  );
}

function keepAddress(on) {
  const url = new URL(window.location.href);
  if (on) url.searchParams.set("present", onPath ? "lecture" : "1");
  else url.searchParams.delete("present");
  history.replaceState(null, "", url);
}

/** The step's view framed again once the stage has its new size (the renderer follows a resize, the
 *  camera does not): after entering, leaving, and the panel's column opening or closing. */
function reframe() {
  requestAnimationFrame(() =>
    requestAnimationFrame(() => {
      if (window.anatomyStage?.ready) window.anatomyStage.returnToStep();
    }),
  );
}

/** The panel's column beside the stage while a cell is explained. */
function dockPanel(explained) {
  const on = !!bar && !!explained;
  if (document.body.classList.contains("present-explaining") === on) return;
  document.body.classList.toggle("present-explaining", on);
  reframe();
}

/** Opens presenter mode at the current step (path: on the lecture path, from its stop at or after it). */
export function enter(path = false) {
  if (bar) return;
  bar = build();
  document.querySelector(".layout")?.prepend(bar);
  document.body.classList.add("presenting");
  measure.observe(bar);
  textFloor();
  if (path) setPath(true);
  keepAddress(true);
  render();
  document.body.classList.toggle("present-explaining", !!window.anatomyStage?.stage?.explained);
  reframe();
  bar.querySelector(".present-title").focus({ preventScroll: true });
}

/** Back to the article, at the step shown (held at the top while the page settles, as a linked step is). */
export function leave() {
  if (!bar) return;
  if (document.fullscreenElement) document.exitFullscreen().catch(() => {});
  measure.disconnect();
  barHeight = 0;
  bar.remove();
  bar = null;
  onPath = false;
  textFloor();
  document.body.classList.remove("presenting", "present-explaining");
  keepAddress(false);
  reframe();
  const section = current();
  section.scrollIntoView({ block: "start" });
  pin(section);
  /** @type {HTMLElement | null} */ (section.querySelector(".step-anchor"))?.focus({ preventScroll: true });
}

const typing = (t) => t instanceof HTMLElement && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));

// Before the stage's and the article's own keys (capture): in presenter mode the arrows left and right
// turn the steps even with the stage focused (up and down still move its cell cursor); the explanation's
// panel and the worked card keep their own keys; Esc first closes the panel, then leaves.
function onKey(event) {
  if (!bar || event.altKey || event.ctrlKey || event.metaKey || typing(event.target)) return;
  const inside = event.target instanceof Element && event.target.closest(".explain-panel, .stage-worked");
  const stage = window.anatomyStage;
  let act = null;
  if ((event.key === "l" || event.key === "L") && !inside) act = () => setPath(!onPath);
  else if (event.key === "Escape") act = stage?.stage?.explained ? () => stage.close() : inside ? null : leave;
  else if (!inside && (NEXT.has(event.key) || PREVIOUS.has(event.key)))
    act = () => move(PREVIOUS.has(event.key) || (event.key === " " && event.shiftKey) ? -1 : 1);
  if (!act) return;
  event.preventDefault();
  event.stopPropagation();
  act();
}

export function bindPresent() {
  anatomy.present = { enter, leave, move, setPath, on: () => !!bar, onPath: () => !!bar && onPath };
  window.addEventListener("resize", () => bar && textFloor());
  window.addEventListener("keydown", onKey, true);
  stepInView.subscribe(render);
  shownTrace.subscribe(render); // its live values, refilled
  explainedCell.subscribe(dockPanel);
  const address = readAddress(new URL(window.location.href));
  if (address.present) enter(address.lecture);
}
