// The paper's Figure 1, redrawn (templates/figure1.html): the overview in step 1 and the map beside the
// stage. Each box is a link to its first step and lists all its steps in data-steps (derived on the
// server from the tour). Here: the boxes of the step in view are marked (aria-current), a box's one line
// shows on hover or focus, and a click goes to the step through the page's own step navigation
// (window.anatomy.goTo, which moves the stage's camera) instead of a plain jump. Without scripts the
// boxes are ordinary links to #step-N.
import { stepInView } from "./store.js";

const figures = [.../** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll("[data-fig1]"))];
const boxes = figures.flatMap((f) => [.../** @type {NodeListOf<SVGAElement>} */ (f.querySelectorAll("a.fig1-box"))]);

function mark(step) {
  for (const a of boxes) {
    const on = a.dataset.steps.split(" ").map(Number).includes(step);
    a.classList.toggle("is-current", on);
    if (on) a.setAttribute("aria-current", "step");
    else a.removeAttribute("aria-current");
  }
  // the folded map still says where the reader is: the part (or how many parts) of this step
  const now = document.querySelector("[data-fig1-now]");
  if (now) {
    const parts = [
      ...new Set(
        [...document.querySelectorAll(".fig1-map a.fig1-box.is-current")].map(
          (a) => /** @type {HTMLElement} */ (/** @type {unknown} */ (a)).dataset.where,
        ),
      ),
    ];
    // the map's title lies over a corner of the stage: one part by its whole name, more only if they are short
    const named = parts.join(", ");
    now.textContent =
      parts.length === 0 ? "" : parts.length === 1 || named.length <= 40 ? ` · ${named}` : ` · ${parts.length} parts`;
  }
}

function say(figure, a) {
  const line = figure.querySelector("[data-fig1-says]");
  if (!line) return;
  const label = [...a.querySelectorAll("text")].map((t) => t.textContent).join(" ");
  line.textContent = `${label}: ${a.dataset.says} Step ${a.dataset.gotoStep}.`;
}

for (const figure of figures) {
  for (const a of /** @type {NodeListOf<SVGAElement>} */ (figure.querySelectorAll("a.fig1-box"))) {
    a.addEventListener("pointerenter", () => say(figure, a));
    a.addEventListener("focus", () => say(figure, a));
    a.addEventListener("click", (event) => {
      if (event.button || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
      const step = Number(a.dataset.gotoStep);
      if (!window.anatomy?.goTo) return; // the plain link still works
      event.preventDefault();
      window.anatomy.goTo(step);
    });
  }
}

// The map starts folded (open, it covers a corner of the stage, where the step's subject may be) and
// stays as the reader leaves it, open or folded, from one visit to the next.
const map = /** @type {HTMLDetailsElement | null} */ (document.querySelector("details.fig1-map"));
const KEY = "anatomy.map-open";
if (map) {
  try {
    map.open = localStorage.getItem(KEY) === "true";
  } catch {
    /* storage refused: stay folded */
  }
  map.addEventListener("toggle", () => {
    try {
      localStorage.setItem(KEY, String(map.open));
    } catch {
      /* ignore */
    }
  });
}

stepInView.follow((detail) => mark(detail.step));
