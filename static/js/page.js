// The article's behaviour: the input bar, the live values, the URL, and which step is in view.
//
// Events for the stage (static/stage/main.js), the beam figure and the progress bar:
//   anatomy:trace  detail = the whole trace JSON (as /api/trace returns it), after each new input
//   anatomy:step   detail = {step}, when the step in view changes
// window.anatomy = {trace, step, stepDetail, model, ready} for tests and the console.
import { formatNumber } from "./format.js";
import { readTraceStream } from "./trace-stream.js";

const DEFAULT_INPUT = "42";
const form = document.getElementById("input-form");
const field = document.getElementById("number-input");
const errorBox = document.getElementById("input-error");
const sections = [...document.querySelectorAll("section.step")];

const anatomy = (window.anatomy = { trace: null, step: null, stepDetail: null, model: null, ready: false });
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
  url.hash = anatomy.step ? `step-${anatomy.step}` : url.hash;
  history.replaceState(null, "", url);
}

// Fetch and show one input's trace; true when it worked. A failure keeps the last good trace.
async function run(input) {
  const seq = ++requestSeq;
  form.setAttribute("aria-busy", "true");
  try {
    const trace = await readTraceStream(`/api/trace/stream?input=${encodeURIComponent(input)}`);
    if (seq !== requestSeq) return; // a newer input won
    anatomy.trace = trace;
    clearError();
    fillLive({ ...(anatomy.model?.figures || {}), ...trace.derived });
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

form.addEventListener("submit", (event) => {
  event.preventDefault();
  run(field.value);
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

function start() {
  const params = new URLSearchParams(window.location.search);
  const input = params.get("input") || DEFAULT_INPUT;
  if (!field.value) field.value = input;
  const m = /^#step-(\d+)$/.exec(window.location.hash);
  const first = (m && sections.find((s) => s.dataset.step === m[1])) || null;
  if (first) {
    first.scrollIntoView({ block: "start" });
    setStep(first);
    pin(first);
  } else if (sections.length) {
    setStep(sections[0]);  // the top of the page is step 1, even before its section reaches the 40% line
  }
  fetchJson("/api/model").then((model) => {
    anatomy.model = model;
    if (anatomy.trace) fillLive({ ...model.figures, ...anatomy.trace.derived });
  }).catch(() => {});
  run(input).then(async (ok) => {
    if (ok || anatomy.trace || input === DEFAULT_INPUT) return;
    const message = errorBox.textContent; // a bad link: show the default input, keep the message
    if (await run(DEFAULT_INPUT)) showError(message);
  });
}

start();
