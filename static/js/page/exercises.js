// Predict, then reveal (the reader commits to a guess before seeing the answer): each teaching step's
// question about the input on show, as the trace's derived.exercises asks it. article/exercises.py writes the
// questions and their answers from the trace; this module knows nothing of the model: it shows them, compares
// an answer with the shipped one (a cell's "row:col" or a choice's key in `right`, a number within
// `tolerance` of `answer`), says right or not and why (in a role=status line, which screen readers announce),
// and has the stage explain the evidence cell (../store.js askedCell). A cell is answered by choosing it from the
// list beside the question, or on the stage: press "Answer on the stage", then click it (or reach it with the
// stage's keyboard cursor and press Enter); unarmed, a click on the stage only explains the cell, as
// everywhere. Progress stays in this browser (localStorage): which exercises were answered right, for which
// inputs. anatomy.exercises() lists the boxes shown, for tests and the console.
import { MODEL, anatomy } from "./state.js";
import { explainedCell, shownTrace, stepInView, veiledCells } from "../store.js";
import { selectCell } from "./compare.js";
import { siteUrl } from "../site.js";

const STORE = "anatomy-exercises";
const boxes = new Map(); // exercise id → {ex, el, verdict, answered, input}
let revealing = false; // the stage explaining our own evidence is not an answer

function progress() {
  try {
    return JSON.parse(localStorage.getItem(STORE) || "{}") || {};
  } catch {
    return {};
  }
}

function remember(id, input) {
  const p = progress(),
    done = new Set(p[id] || []);
  done.add(input);
  p[id] = [...done];
  try {
    localStorage.setItem(STORE, JSON.stringify(p));
  } catch {
    /* private mode: no progress kept */
  }
}

const make = (tag, props = {}, ...children) => {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...children);
  return e;
};

/** A typed number: "−0.24", "-0,24", "4 288" and "4,288" read as a reader means them; NaN otherwise. */
export function parseNumber(text) {
  let s = String(text)
    .trim()
    .replace(/[\s\u2009\u202f\u00a0]/g, "")
    .replace(/\u2212/g, "-");
  if (/^-?\d{1,3}(,\d{3})+$/.test(s)) s = s.replace(/,/g, "");
  else s = s.replace(",", ".");
  return /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(s) ? Number(s) : NaN;
}

/** true or false for an answer; null for no cell chosen, or a typed text that is not a number. */
export function judge(ex, value) {
  if (ex.kind !== "number") return value === "" ? null : ex.right.includes(String(value));
  const x = parseNumber(value);
  return Number.isFinite(x) ? Math.abs(x - ex.answer) <= ex.tolerance + 1e-9 : null;
}

function showProgress(box) {
  const inputs = progress()[box.ex.id] || [];
  box.progress.textContent = inputs.length
    ? `Answered right in this browser for: ${inputs.join(", ")}.`
    : "Not yet answered right in this browser.";
}

/** The cells the open questions of the step in view ask about (a cell question's choices, a number question's
 *  evidence cell), which the stage veils until each is answered: predict first, then see. */
function veilOpen() {
  const step = stepInView.get()?.step,
    rects = [];
  for (const { ex, answered } of boxes.values()) {
    if (answered || ex.step !== step || ex.concept) continue;
    if (ex.kind === "cell") {
      const cells = ex.choices.map((c) => c.value.split(":").map(Number));
      const span = (i) => [Math.min(...cells.map((x) => x[i])), Math.max(...cells.map((x) => x[i]))];
      rects.push({ id: ex.block, rows: span(0), cols: span(1) });
    } else if (ex.kind === "number") {
      const e = ex.evidence;
      rects.push({ id: e.id, rows: [e.row, e.row], cols: [e.col, e.col] });
    }
  }
  if (JSON.stringify(rects) !== JSON.stringify(veiledCells.get())) veiledCells.set(rects);
}

function answer(box, value) {
  const ok = judge(box.ex, value);
  const unread =
    box.ex.kind === "number" ? "That is not a number: type one such as 0.25 or −1.5." : "Choose a cell first.";
  box.verdict.textContent =
    ok === null
      ? unread
      : ok
        ? `Right. ${box.ex.why}`
        : `Not this time: the answer is ${box.ex.answer_text}. ${box.ex.why}`;
  box.el.dataset.verdict = ok === null ? "unread" : ok ? "right" : "wrong";
  if (ok === null) return;
  arm(box, false);
  box.answered = true;
  veilOpen();
  box.again.hidden = box.explain.hidden = false;
  if (ok) remember(box.ex.id, box.input);
  showProgress(box);
  reveal(box, false);
}

/** The stage explains the evidence cell: lit, with the panel closed (it would cover the verdict on a wide
 *  screen) unless the reader asks for it. */
function reveal(box, panel) {
  revealing = true;
  try {
    selectCell({ ...box.ex.evidence, panel });
  } finally {
    revealing = false;
  }
}

function again(box) {
  box.answered = false;
  veilOpen();
  box.again.hidden = box.explain.hidden = true;
  box.verdict.textContent = "";
  delete box.el.dataset.verdict;
}

function cellControls(box) {
  const { ex } = box,
    id = `${ex.id}-cell`;
  const select = make(
    "select",
    { id },
    make("option", { value: "", textContent: "choose…" }),
    ...ex.choices.map((c) => make("option", { value: c.value, textContent: c.label })),
  );
  const form = make(
    "form",
    { className: "exercise-form" },
    make("label", { htmlFor: id, textContent: "Or choose the cell: " }),
    select,
    make("button", { type: "submit", textContent: "Check" }),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    answer(box, select.value);
  });
  box.select = select;
  box.arm = make("button", { type: "button", className: "exercise-arm", textContent: "Answer on the stage" });
  box.arm.setAttribute("aria-pressed", "false");
  box.arm.addEventListener("click", () => arm(box, box.arm.getAttribute("aria-pressed") !== "true"));
  const how = make(
    "p",
    { className: "exercise-how" },
    box.arm,
    " then click the cell (or reach it with the stage's cursor: Tab, the arrows, Enter).",
  );
  return [how, form];
}

/** While armed, the next cell explained on the stage in the question's block is the answer (one box at a time). */
function arm(box, on) {
  for (const b of boxes.values()) b.arm?.setAttribute("aria-pressed", String(on && b === box));
}

function choiceControls(box) {
  const group = make("div", { className: "exercise-choices", role: "group" });
  group.setAttribute("aria-labelledby", `${box.ex.id}-question`);
  for (const c of box.ex.choices) {
    const b = make("button", { type: "button", textContent: c.label });
    b.dataset.value = c.value;
    b.addEventListener("click", () => answer(box, c.value));
    group.append(b);
  }
  return [group];
}

function numberControls(box) {
  const id = `${box.ex.id}-number`;
  const field = make("input", {
    id,
    type: "text",
    inputMode: "decimal",
    autocomplete: "off",
    spellcheck: false,
    size: 10,
  });
  const form = make(
    "form",
    { className: "exercise-form" },
    make("label", { htmlFor: id, textContent: "Your answer: " }),
    field,
    make("button", { type: "submit", textContent: "Check" }),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    answer(box, field.value);
  });
  return [form];
}

const CONTROLS = { cell: cellControls, choice: choiceControls, number: numberControls };

function render(ex, input) {
  const el = make("aside", { className: "exercise", id: `exercise-${ex.id}` });
  el.dataset.exercise = ex.id;
  el.dataset.kind = ex.kind;
  el.dataset.input = input;
  el.setAttribute("aria-label", `Step ${ex.step}'s exercise: predict, then reveal`);
  const box = { ex, el, input, answered: false };
  box.verdict = make("p", { className: "exercise-verdict", role: "status" });
  box.progress = make("p", { className: "exercise-progress" });
  box.again = make("button", { type: "button", className: "exercise-again", textContent: "Try again", hidden: true });
  box.again.addEventListener("click", () => again(box));
  box.explain = make("button", {
    type: "button",
    className: "exercise-explain",
    textContent: "Where the answer comes from",
    hidden: true,
  });
  box.explain.addEventListener("click", () => reveal(box, true));
  el.append(
    make("h3", { className: "exercise-title", textContent: "Predict, then reveal" }),
    make("p", { id: `${ex.id}-question`, className: "exercise-question", textContent: ex.question }),
    ...CONTROLS[ex.kind](box),
    box.verdict,
    make("p", { className: "exercise-after" }, box.again, " ", box.explain),
    box.progress,
  );
  showProgress(box);
  return box;
}

/** The boxes for a trace: each in its step's text, after the prose; none for another model's stage.
 *  @param {import("../../types.js").Trace | null} trace */
function show(trace) {
  for (const box of boxes.values()) box.el.remove();
  boxes.clear();
  if (MODEL || !trace?.derived) return;
  const input = String(trace.input.number);
  for (const ex of trace.derived.exercises || []) {
    const body = document.querySelector(`section.step[data-step="${ex.step}"] .step-body`);
    if (!body) continue;
    const box = render(ex, input);
    body.append(box.el);
    boxes.set(ex.id, box);
  }
  veilOpen();
}

/** A cell explained on the stage answers the armed cell question, if it lies in the question's block. */
function onExplain(cell) {
  if (revealing || !cell) return;
  for (const box of boxes.values()) {
    if (box.arm?.getAttribute("aria-pressed") !== "true" || cell.id !== box.ex.block) continue;
    const value = `${cell.row}:${cell.col}`;
    if (box.ex.choices.some((c) => c.value === value)) box.select.value = value;
    answer(box, value);
  }
}

function injectStyles() {
  if (document.querySelector("link[data-exercises-css]")) return;
  const l = make("link", { rel: "stylesheet", href: siteUrl("/static/css/exercises.css") });
  l.dataset.exercisesCss = "";
  document.head.append(l);
}

export function bindExercises() {
  injectStyles();
  shownTrace.follow(show);
  stepInView.subscribe(veilOpen);
  explainedCell.subscribe(onExplain);
  anatomy.exercises = () =>
    [...boxes.values()].map((b) => ({
      id: b.ex.id,
      step: b.ex.step,
      kind: b.ex.kind,
      input: b.input,
      answered: b.answered,
      verdict: b.el.dataset.verdict || null,
    }));
}
