// The article's behaviour: the input bar, the live values, the URL, and which step is in view.
//
// Events for the stage (static/stage/main.js), the beam figure and the progress bar:
//   anatomy:trace    detail = the whole trace JSON (as /api/trace returns it), after each new input
//   anatomy:step     detail = {step}, when the step in view changes
//   anatomy:compare  detail = the pinned input's trace (compare mode), or null
//   anatomy:select   detail = {id, row, col}: a linked cell to explain
//   anatomy:checkpoint detail = {checkpoint}: the training snapshot now shown (null: the trained model)
// and listens for the stage's anatomy:explain (detail = the explained cell or null) to keep it in the URL,
// and for anatomy:ablate (detail = {ablation: parts to switch off}, from the stage's switches) to fetch
// that trace; buttons with data-ablate-part (step 29's table) toggle one part the same way.
// The address keeps the input, the parts switched off (ablate=), the step (#step-N), the pinned input
// (compare=), the explained cell (cell=id:row:col) and the training snapshot (checkpoint=N, the time
// machine of step 21), so a link reproduces the picture; a same-page link with those is applied in place.
// window.anatomy = {trace, step, stepDetail, compareTrace, cellDetail, model, checkpoint, ablation, ready} for
// tests and the console; anatomy.setCheckpoint(n) runs the input on the snapshot after n training steps
// (null: trained).
import { formatNumber } from "./format.js";
import { readTraceStream } from "./trace-stream.js";

const DEFAULT_INPUT = "42";
// ?model=: the server names the miniature the stage draws (data-model, absent for the default)
const MODEL = document.getElementById("input-form")?.dataset.model || "";
const MODEL_QUERY = MODEL ? `&model=${encodeURIComponent(MODEL)}` : "";
const form = document.getElementById("input-form");
const field = document.getElementById("number-input");
const errorBox = document.getElementById("input-error");
const sections = [...document.querySelectorAll("section.step")];

const anatomy = (window.anatomy = { trace: null, step: null, stepDetail: null, compareTrace: null, cell: null, cellDetail: null,
  model: null, checkpoint: null, ready: false, ablation: [] });
const pinButton = document.getElementById("pin-input");
let requestSeq = 0;

// ---- live values ---------------------------------------------------------------------------

function fillLive(values) {
  for (const el of document.querySelectorAll("[data-live]")) {
    const key = el.dataset.live;
    if (key in values) el.textContent = formatNumber(values[key], el.dataset.format || "text");
  }
}

// ---- fetching a trace ---------------------------------------------------------------------

async function fetchJson(url) {
  const response = await fetch(url, { headers: { Accept: "application/json" } });
  const body = await response.json().catch(() => null);
  if (!response.ok) {
    const message = body?.detail?.message || `the server answered ${response.status}`;
    throw Object.assign(new Error(message), { status: response.status });
  }
  return body;
}

function showError(message) {
  errorBox.textContent = message;
  field.setAttribute("aria-invalid", "true");
}

function clearError() {
  errorBox.textContent = "";
  field.removeAttribute("aria-invalid");
}

function updateUrl() {
  const url = new URL(window.location.href);
  if (anatomy.trace) url.searchParams.set("input", String(anatomy.trace.input.number));
  if (anatomy.ablation.length) url.searchParams.set("ablate", anatomy.ablation.join(","));
  else url.searchParams.delete("ablate");
  if (anatomy.compareTrace) url.searchParams.set("compare", String(anatomy.compareTrace.input.number));
  else url.searchParams.delete("compare");
  if (anatomy.cell) url.searchParams.set("cell", `${anatomy.cell.id}:${anatomy.cell.row}:${anatomy.cell.col}`);
  else url.searchParams.delete("cell");
  if (anatomy.checkpoint !== null) url.searchParams.set("checkpoint", String(anatomy.checkpoint));
  else url.searchParams.delete("checkpoint");
  url.hash = anatomy.step ? `step-${anatomy.step}` : url.hash;
  history.replaceState(null, "", url);
}

// ---- compare two inputs, explain a cell -------------------------------------------------------

function showPin() {
  if (!pinButton) return;
  const n = anatomy.compareTrace?.input.number;
  pinButton.setAttribute("aria-pressed", n === undefined ? "false" : "true");
  // the words in .pin-more give way on narrower screens (site.css): "Pin", "731 015 ✕"
  const more = (text) => Object.assign(document.createElement("span"), { className: "pin-more", textContent: text });
  if (n === undefined) pinButton.replaceChildren("Pin", more(" to compare"));
  else pinButton.replaceChildren(more("Pinned "), `${formatNumber(n, "text")} ✕`);
  pinButton.title = n === undefined ? "Pin this input, then run another: the stage colours every activation by the difference"
    : `Comparing with ${n}: run another input to see the difference; press to unpin`;
}

function announceCompare() {
  showPin();
  updateUrl();
  document.dispatchEvent(new CustomEvent("anatomy:compare", { detail: anatomy.compareTrace }));
}

// Pins an input to compare with (its trace is fetched), or unpins (null); false for a refused input.
async function compareWith(input) {
  if (input === null || input === undefined || String(input).trim() === "") {
    anatomy.compareTrace = null;
    announceCompare();
    return true;
  }
  try {
    anatomy.compareTrace = await readTraceStream(`/api/trace/stream?input=${encodeURIComponent(input)}${MODEL_QUERY}`);
  } catch (err) {
    errorBox.textContent = `Cannot compare with “${input}”: ${err.message}`;  // the field itself is fine
    updateUrl();
    return false;
  }
  announceCompare();
  return true;
}
anatomy.compareWith = compareWith;

pinButton?.addEventListener("click", () => {
  if (anatomy.compareTrace) compareWith(null);
  else if (anatomy.trace) { anatomy.compareTrace = anatomy.trace; announceCompare(); }
});

// "id:row:col" (the id may hold colons) → {id, row, col}; rows and columns that are not numbers stay NaN,
// for the stage to refuse with its message
function parseCell(text) {
  const parts = String(text).split(":");
  if (parts.length < 3) return { id: String(text), row: NaN, col: NaN };
  const num = (s) => (/^\d+$/.test(s) ? Number(s) : NaN);
  return { id: parts.slice(0, -2).join(":"), row: num(parts.at(-2)), col: num(parts.at(-1)) };
}

function selectCell(detail) {
  anatomy.cellDetail = detail;
  document.dispatchEvent(new CustomEvent("anatomy:select", { detail }));
}

document.addEventListener("anatomy:explain", (event) => {
  anatomy.cell = event.detail;
  updateUrl();
});

// The parts named in an ablate= value (the server checks them).
function parseAblation(text) {
  return String(text || "").split(",").map((s) => s.trim()).filter(Boolean);
}

function showAblation() {
  const off = new Set(anatomy.ablation);
  for (const b of document.querySelectorAll("[data-ablate-part]")) b.setAttribute("aria-pressed", String(off.has(b.dataset.ablatePart)));
}

// Fetch and show one input's trace with the given parts switched off (by default the ones off now);
// true when it worked. A failure keeps the last good trace.
async function run(input, ablation = anatomy.ablation) {
  const seq = ++requestSeq;
  form.setAttribute("aria-busy", "true");
  const off = ablation.length ? `&ablate=${encodeURIComponent(ablation.join(","))}` : "";
  try {
    const at = anatomy.checkpoint === null ? "" : `&checkpoint=${encodeURIComponent(anatomy.checkpoint)}`;
    const trace = await readTraceStream(`/api/trace/stream?input=${encodeURIComponent(input)}${off}${at}${MODEL_QUERY}`);
    if (seq !== requestSeq) return; // a newer input won
    anatomy.trace = trace;
    anatomy.ablation = trace.ablation || [];
    showAblation();
    clearError();
    if (!MODEL) fillLive({ ...(anatomy.model?.figures || {}), ...trace.derived });  // the article is the 2017 model's
    updateUrl();
    anatomy.ready = true;
    document.dispatchEvent(new CustomEvent("anatomy:trace", { detail: trace }));
    return true;
  } catch (err) {
    if (seq === requestSeq) showError(err.message); // the last good trace stays
    return false;
  } finally {
    if (seq === requestSeq) form.removeAttribute("aria-busy");
  }
}

// ---- the time machine: the same input on a training snapshot ----------------------------------------

// Shows the current input on the snapshot after `step` training steps (null: the trained model); true
// when it worked. A refused checkpoint keeps the last good one, and the message says what is accepted.
async function setCheckpoint(step) {
  const previous = anatomy.checkpoint;
  anatomy.checkpoint = step === null || step === undefined || String(step).trim() === "" ? null : String(step).trim();
  const input = anatomy.trace ? String(anatomy.trace.input.number) : field.value || DEFAULT_INPUT;
  const ok = await run(input);
  if (!ok) anatomy.checkpoint = previous;
  updateUrl();
  document.dispatchEvent(new CustomEvent("anatomy:checkpoint", { detail: { checkpoint: anatomy.checkpoint } }));
  return ok;
}
anatomy.setCheckpoint = setCheckpoint;

form.addEventListener("submit", (event) => {
  event.preventDefault();
  run(field.value);
});

// Switching parts off: the stage's switches and step 29's table; the same input, another ablation.
function ablate(ablation) {
  return run(anatomy.trace ? String(anatomy.trace.input.number) : field.value || DEFAULT_INPUT, ablation);
}
anatomy.ablate = ablate;
document.addEventListener("anatomy:ablate", (event) => ablate(event.detail?.ablation || []));
document.addEventListener("click", (event) => {
  const b = event.target instanceof Element ? event.target.closest("[data-ablate-part]") : null;
  if (!b) return;
  const part = b.dataset.ablatePart;
  const on = anatomy.ablation.includes(part);
  ablate(on ? anatomy.ablation.filter((p) => p !== part) : [...anatomy.ablation, part]);
});

// ---- which step is in view ------------------------------------------------------------------

// The step's number is all the page says: what the stage shows for it is the scene's (the tour).
function stepDetail(section) {
  return { step: Number(section.dataset.step) };
}

function setStep(section) {
  const detail = stepDetail(section);
  if (detail.step === anatomy.step) return;
  anatomy.step = detail.step;
  anatomy.stepDetail = detail;  // for a stage that loads after this event
  for (const s of sections) s.classList.toggle("current", s === section);
  updateUrl();
  document.dispatchEvent(new CustomEvent("anatomy:step", { detail }));
}

const reducedMotion = window.matchMedia("(prefers-reduced-motion: reduce)");

// A step chosen with the arrow keys stays the current one while the smooth scroll runs (a figure drawn
// on the way changes heights, and Chrome's smooth scroll may then stop short or overshoot); when the
// scroll ends, the step is put exactly at the top.
let heading = null, headingTimer = 0;

function goTo(section) {
  if (!section) return;
  setStep(section);
  heading = section;
  clearTimeout(headingTimer);
  headingTimer = setTimeout(arrive, 1500);
  section.scrollIntoView({ behavior: reducedMotion.matches ? "auto" : "smooth", block: "start" });
}

// The same navigation for other parts of the page (the Figure 1 boxes): to step n, moving the stage.
anatomy.goTo = (n) => goTo(sections.find((s) => Number(s.dataset.step) === n));

function arrive() {
  if (!heading) return;
  const section = heading;
  heading = null;
  clearTimeout(headingTimer);
  const scroller = getComputedStyle(article).overflowY !== "visible" ? article : document.documentElement;
  const pad = parseFloat(getComputedStyle(scroller).scrollPaddingTop) || 0;
  const top = section.getBoundingClientRect().top - (scroller === article ? article.getBoundingClientRect().top : 0);
  if (Math.abs(top - pad) > 8) section.scrollIntoView({ block: "start" });
  setStep(section);
}
document.addEventListener("scrollend", arrive, true);

// A linked step stays at the top while the page settles: fonts, formulas, live values and the lazily
// drawn figures above it change the heights after the first scroll. Every change of a section's size
// re-anchors the step; the pin lets go when the reader scrolls, types or clicks, or once nothing has
// moved for three seconds (at most thirty after the load).
let pinned = null;

function pin(section) {
  pinned = section;
  let quiet = null;
  const release = () => {
    pinned = null;
    resize.disconnect();
    clearTimeout(quiet); clearTimeout(cap);
    for (const e of events) window.removeEventListener(e, release, true);
  };
  const settle = () => { clearTimeout(quiet); quiet = setTimeout(release, 3000); };
  const hold = () => {
    if (!pinned) return;
    pinned.scrollIntoView({ block: "start" });
    if (anatomy.step !== Number(pinned.dataset.step)) setStep(pinned);
    settle();
  };
  const resize = new ResizeObserver(hold);
  for (const s of sections) resize.observe(s);
  document.fonts?.ready.then(hold);
  const events = ["wheel", "touchstart", "keydown", "pointerdown"];
  for (const e of events) window.addEventListener(e, release, { capture: true, passive: true });
  const cap = setTimeout(release, 30000);
  settle();
}

// A step is current when it crosses a line 40% down the viewport, or down the article's own
// scroller on a phone (there the viewport's 40% line falls on the stage, above the article).
const article = document.getElementById("article");
let observer = null;

function observeSteps() {
  const ownScroller = article && getComputedStyle(article).overflowY !== "visible";
  observer?.disconnect();
  observer = new IntersectionObserver((entries) => {
    if (pinned || heading) return;
    const hit = entries.filter((e) => e.isIntersecting).sort((a, b) => a.boundingClientRect.top - b.boundingClientRect.top)[0];
    if (hit) setStep(hit.target);
  }, { root: ownScroller ? article : null, rootMargin: "-40% 0px -59% 0px" });
  for (const s of sections) observer.observe(s);
}
observeSteps();
window.matchMedia("(max-width: 760px)").addEventListener("change", observeSteps);

document.addEventListener("keydown", (event) => {
  // The stage, when focused, uses the arrows to move its cell cursor (and prevents the default).
  if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
  if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
  const t = event.target;
  if (t instanceof HTMLElement && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
  const i = sections.findIndex((s) => Number(s.dataset.step) === anatomy.step);
  const next = sections[Math.min(sections.length - 1, Math.max(0, (i < 0 ? 0 : i) + (event.key === "ArrowRight" ? 1 : -1)))];
  event.preventDefault();
  goTo(next);
});

// ---- the ledger on hover and focus ----------------------------------------------------------

const popover = document.getElementById("fact-popover");
let facts = null;

async function showFact(el) {
  if (!popover) return;
  facts ??= fetchJson("/api/facts").then((d) => new Map(d.facts.map((f) => [f.id, f]))).catch(() => new Map());
  const fact = (await facts).get(el.dataset.fact);
  if (!fact) return;
  popover.replaceChildren();
  const what = document.createElement("strong");
  what.textContent = `${fact.value}: ${fact.what}`;
  const source = document.createElement("span");
  source.textContent = fact.source;
  popover.append(what, document.createElement("br"), source);
  const box = el.getBoundingClientRect();
  popover.hidden = false;
  popover.style.left = `${Math.max(8, Math.min(box.left + window.scrollX, window.scrollX + document.documentElement.clientWidth - popover.offsetWidth - 8))}px`;
  popover.style.top = `${box.bottom + window.scrollY + 6}px`;
}

function hideFact() { if (popover) popover.hidden = true; }

for (const el of document.querySelectorAll("[data-fact]")) {
  el.addEventListener("mouseenter", () => showFact(el));
  el.addEventListener("focus", () => showFact(el));
  el.addEventListener("mouseleave", hideFact);
  el.addEventListener("blur", hideFact);
}

// ---- start -------------------------------------------------------------------------------------

// A link to this page with an input, a comparison or a cell (the article has such links) is applied in
// place: no reload, and the reader's place in the article stays unless the link names another step.
async function applyLink(url) {
  const p = url.searchParams;
  const input = p.get("input");
  if (p.has("checkpoint") && p.get("checkpoint") !== anatomy.checkpoint) await setCheckpoint(p.get("checkpoint"));
  const ablation = parseAblation(p.get("ablate"));
  if ((input !== null && String(anatomy.trace?.input.number) !== input.trim())
      || ablation.join(",") !== anatomy.ablation.join(",")) {
    if (input !== null) field.value = input;
    if (!(await run(input ?? field.value, ablation))) return;
  }
  if (p.has("compare") || anatomy.compareTrace) await compareWith(p.get("compare"));
  const m = /^#step-(\d+)$/.exec(url.hash);
  const section = m && sections.find((s) => s.dataset.step === m[1]);
  if (section && Number(m[1]) !== anatomy.step) goTo(section);
  if (p.has("cell")) selectCell(parseCell(p.get("cell")));
}

document.addEventListener("click", (event) => {
  const a = event.target instanceof Element ? event.target.closest("a[href]") : null;
  if (!a || event.defaultPrevented || event.button || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const url = new URL(a.href, window.location.href);
  if (url.origin !== window.location.origin || url.pathname !== window.location.pathname) return;
  if (!["input", "compare", "cell", "checkpoint", "ablate"].some((k) => url.searchParams.has(k))) return;
  event.preventDefault();
  applyLink(url);
});

function start() {
  const params = new URLSearchParams(window.location.search);
  const input = params.get("input") || DEFAULT_INPUT;
  if (!field.value) field.value = input;
  anatomy.checkpoint = params.get("checkpoint");
  const m = /^#step-(\d+)$/.exec(window.location.hash);
  const first = (m && sections.find((s) => s.dataset.step === m[1])) || null;
  if (first) {
    first.scrollIntoView({ block: "start" });
    setStep(first);
    pin(first);
  } else if (sections.length) {
    setStep(sections[0]);  // the top of the page is step 1, even before its section reaches the 40% line
  }
  fetchJson(`/api/model${MODEL ? `?model=${encodeURIComponent(MODEL)}` : ""}`).then((model) => {
    anatomy.model = model;
    if (anatomy.trace && !MODEL) fillLive({ ...model.figures, ...anatomy.trace.derived });
  }).catch(() => {});
  run(input, parseAblation(params.get("ablate"))).then(async (ok) => {
    if (!ok && anatomy.checkpoint !== null) {  // a bad checkpoint in the link: the trained model, with the message
      const message = errorBox.textContent;
      anatomy.checkpoint = null;
      ok = await run(input, parseAblation(params.get("ablate")));
      if (ok) showError(message);
    }
    if (anatomy.checkpoint !== null) {
      document.dispatchEvent(new CustomEvent("anatomy:checkpoint", { detail: { checkpoint: anatomy.checkpoint } }));
    }
    if (!ok && !anatomy.trace && (input !== DEFAULT_INPUT || params.get("ablate"))) {
      const message = errorBox.textContent; // a bad link: show the default input, keep the message
      if (await run(DEFAULT_INPUT, [])) showError(message);
    }
    // then what else the link keeps: the pinned input, the explained cell
    if (params.get("compare")) await compareWith(params.get("compare"));
    if (params.get("cell")) selectCell(parseCell(params.get("cell")));
  });
  showPin();
}

start();
