// The reader keeps their place: what the reader does to the picture (a new or bad input, pinning, switching a
// part off, the time machine, a same-page link) changes heights above the step being read — live values,
// figures redrawn, the top bar's message, the pin's label — and without help the page slides to another step;
// and Chromium scrolls the page while one types into the top bar's field. keepPlace() holds the current
// step's section where it sits on screen while those changes land: every change of a section's or the top
// bar's size, and every scroll the reader did not make, puts the section back. It lets go when the reader
// scrolls (wheel, touch, a paging key, the scroll bar), follows a link to a place or goes to another step, or
// once nothing has moved for QUIET_MS.
import { sections } from "./state.js";
import { stepInView } from "../store.js";

const QUIET_MS = 2500,
  MAX_MS = 20000;
const PAGING = new Set(["PageUp", "PageDown", "Home", "End", "ArrowUp", "ArrowDown", " "]);
const article = document.getElementById("article");
const topbar = document.querySelector(".topbar");

/** The element that scrolls the article: the article itself on a phone, else the document. */
export function scroller() {
  return article && getComputedStyle(article).overflowY !== "visible"
    ? article
    : document.scrollingElement || document.documentElement;
}

const offset = (section, box) =>
  section.getBoundingClientRect().top - (box === article ? article.getBoundingClientRect().top : 0);

let held = null;

/** Stops holding the place (the reader moved on). */
export function releasePlace() {
  if (!held) return;
  const h = held;
  held = null;
  h.observer.disconnect();
  h.scroller.removeEventListener("scroll", h.restore);
  clearTimeout(h.quiet);
  clearTimeout(h.cap);
  window.removeEventListener("wheel", releasePlace, true);
  window.removeEventListener("touchmove", releasePlace, true);
  window.removeEventListener("keydown", onKey, true);
  window.removeEventListener("pointerdown", onPointer, true);
  window.removeEventListener("click", onPointer, true);
}

// a press on the scroll bar lands on the scroller itself; a link to a place in the page moves on (a
// click: the keyboard's Enter on a link too)
function onPointer(event) {
  const t = event.target;
  if (t === document.documentElement || t === article || (t instanceof Element && t.closest('a[href^="#"]')))
    releasePlace();
}

function onKey(event) {
  const t = event.target;
  const typing = t instanceof HTMLElement && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
  if (!typing && PAGING.has(event.key)) releasePlace();
}

/** True while a place is held (the step observer then leaves the step alone). */
export const holdingPlace = () => held !== null;

/** Holds the current step's section at its present height on screen until the page settles. */
export function keepPlace() {
  const section = sections.find((s) => Number(s.dataset.step) === stepInView.get()?.step);
  if (!section) return;
  const box = scroller();
  if (held && held.section === section) {
    settle();
    return;
  }
  releasePlace();
  const at = offset(section, box);
  const restore = () => {
    if (!held) return;
    const drift = offset(section, box) - at;
    if (Math.abs(drift) >= 1) box.scrollTop += drift;
    settle();
  };
  held = { section, restore, observer: new ResizeObserver(restore), quiet: 0, cap: setTimeout(releasePlace, MAX_MS) };
  for (const s of sections) held.observer.observe(s);
  if (topbar) held.observer.observe(topbar);
  if (box === article) held.observer.observe(article);
  window.addEventListener("wheel", releasePlace, { capture: true, passive: true });
  window.addEventListener("touchmove", releasePlace, { capture: true, passive: true });
  window.addEventListener("keydown", onKey, true);
  window.addEventListener("pointerdown", onPointer, true);
  window.addEventListener("click", onPointer, true);
  (box === article ? article : window).addEventListener("scroll", restore, { passive: true });
  held.scroller = box === article ? article : window;
  settle();
}

function settle() {
  if (!held) return;
  clearTimeout(held.quiet);
  held.quiet = setTimeout(releasePlace, QUIET_MS);
}

/** Typing into the input field holds the place too (from the field's focus on). */
export function bindPlace(field) {
  field?.addEventListener("focus", keepPlace);
  field?.addEventListener("input", keepPlace);
}

/** True where an element stays put on screen while the page scrolls (it or a box around it is sticky or fixed). */
function pinned(el) {
  for (let e = el; e instanceof Element; e = e.parentElement) {
    const p = getComputedStyle(e).position;
    if (p === "sticky" || p === "fixed") return true;
  }
  return false;
}

// Chromium scrolls the page when a control in a sticky or fixed box (the stage, the progress bar) takes the
// focus and the root's scroll-padding overlaps it, by Tab or by a script, though the control was in view and
// stays where it is: the page slid to another step. The page goes back to where it was before the focus.
export function keepScrollOnFocus(box) {
  if (!box) return;
  let last = scroller().scrollTop;
  (scroller() === article ? article : window).addEventListener(
    "scroll",
    () => {
      last = scroller().scrollTop;
    },
    { passive: true },
  );
  box.addEventListener("focusin", (event) => {
    if (!pinned(event.target)) return;
    const before = last;
    requestAnimationFrame(() => {
      if (scroller().scrollTop !== before) scroller().scrollTo({ top: before, behavior: "instant" });
    });
  });
}
