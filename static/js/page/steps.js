// Which step is in view: a step is current when it crosses a line 40% down the viewport (or down the
// article's own scroller on a phone); the arrow keys go to the previous or next step; a linked step is
// held at the top while the page settles. Each change is set in ../store.js stepInView ({step}): what the
// stage shows for it is the scene's (the tour).
import { anatomy, sections, updateUrl } from "./state.js";
import { stepInView } from "../store.js";
import { holdingPlace, releasePlace } from "./place.js";

const article = document.getElementById("article");
const reducedMotion = window.matchMedia("(prefers-reduced-motion: reduce)");

export function setStep(section) {
  const detail = { step: Number(section.dataset.step) };
  if (detail.step === stepInView.get()?.step) return;
  for (const s of sections) s.classList.toggle("current", s === section);
  stepInView.set(detail);
  updateUrl();
}

// A step chosen with the arrow keys stays the current one while the smooth scroll runs (a figure drawn
// on the way changes heights, and Chrome's smooth scroll may then stop short or overshoot); when the
// scroll ends, the step is put exactly at the top.
let heading = null,
  headingTimer = 0;

export function goTo(section) {
  if (!section) return;
  releasePlace();
  unpin(); // another step chosen while a linked one is held: the hold would pull the page back to it
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
  // the steps passed over are laid out only now, near the screen (content-visibility: their height was a
  // guess): held like a linked step until they settle, or the page would slide off the step it went to
  pin(section);
}

// A linked step stays at the top while the page settles: fonts, formulas, live values and the lazily
// drawn figures above it change the heights after the first scroll. Every change of the size of a
// section above it re-anchors the step; the pin lets go when the reader scrolls (wheel, touch, a paging key,
// the scroll bar) or types, or once nothing has moved for three seconds (at most thirty after the load). A
// button pressed meanwhile (Copy embed code, Present) does not let go: on a slow machine the heights are still
// changing then, and the page would slide to another step under the reader.
const PAGING = new Set(["PageUp", "PageDown", "Home", "End", "ArrowUp", "ArrowDown", " "]);
const typing = (t) => t instanceof HTMLElement && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
let pinned = null,
  unpin = () => {};

export function pin(section) {
  unpin();
  pinned = section;
  let quiet = null;
  const release = () => {
    pinned = null;
    unpin = () => {};
    resize.disconnect();
    clearTimeout(quiet);
    clearTimeout(cap);
    for (const [e, f] of events) window.removeEventListener(e, f, true);
  };
  const settle = () => {
    clearTimeout(quiet);
    quiet = setTimeout(release, 3000);
  };
  const hold = () => {
    if (!pinned) return;
    pinned.scrollIntoView({ block: "start" });
    if (stepInView.get()?.step !== Number(pinned.dataset.step)) setStep(pinned);
    settle();
  };
  // only a step above the held one moves it: those below come and go from layout as the page scrolls (they
  // are laid out only near the screen), and a scroll to them must not be pulled back
  const above = (e) => e.target.compareDocumentPosition(pinned) & Node.DOCUMENT_POSITION_FOLLOWING;
  const resize = new ResizeObserver((entries) => {
    if (pinned && entries.some(above)) hold();
  });
  for (const s of sections) resize.observe(s);
  document.fonts?.ready.then(hold);
  const onKey = (e) => {
    if (typing(e.target) || PAGING.has(e.key)) release();
  };
  // a press on the scroll bar lands on the scroller itself
  const onPointer = (e) => {
    if (e.target === document.documentElement || e.target === article) release();
  };
  /** @type {[string, (e: Event) => void][]} */
  const events = [
    ["wheel", release],
    ["touchstart", release],
    ["keydown", onKey],
    ["pointerdown", onPointer],
  ];
  for (const [e, f] of events) window.addEventListener(e, f, { capture: true, passive: true });
  const cap = setTimeout(release, 30000);
  unpin = release;
  settle();
}

/** Lets go of a linked step held at the top (the reader chose another step). */
export const unpinStep = () => unpin();

let observer = null;

function observeSteps() {
  const ownScroller = article && getComputedStyle(article).overflowY !== "visible";
  observer?.disconnect();
  observer = new IntersectionObserver(
    (entries) => {
      if (pinned || heading || holdingPlace()) return;
      const hit = entries
        .filter((e) => e.isIntersecting)
        .sort((a, b) => a.boundingClientRect.top - b.boundingClientRect.top)[0];
      if (hit) setStep(hit.target);
    },
    { root: ownScroller ? article : null, rootMargin: "-40% 0px -59% 0px" },
  );
  for (const s of sections) observer.observe(s);
}

function onArrow(event) {
  // The stage, when focused, uses the arrows to move its cell cursor (and prevents the default).
  if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
  if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
  const t = event.target;
  if (t instanceof HTMLElement && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
  const i = sections.findIndex((s) => Number(s.dataset.step) === stepInView.get()?.step);
  const next =
    sections[Math.min(sections.length - 1, Math.max(0, (i < 0 ? 0 : i) + (event.key === "ArrowRight" ? 1 : -1)))];
  event.preventDefault();
  goTo(next);
}

export function bindSteps() {
  // The same navigation for other parts of the page (the Figure 1 boxes): to step n, moving the stage.
  anatomy.goTo = (n) => goTo(sections.find((s) => Number(s.dataset.step) === n));
  document.addEventListener("scrollend", arrive, true);
  observeSteps();
  window.matchMedia("(max-width: 760px)").addEventListener("change", observeSteps);
  document.addEventListener("keydown", onArrow);
}
