// The progress bar of the 29 steps: marks the step in view (./store.js stepInView) and
// the steps already passed; each mark is a deep link (#step-N).

import { formatNumber } from "./format.js";
import { stepInView } from "./store.js";

const nav = document.querySelector("nav.progress");
const links = nav ? [.../** @type {NodeListOf<HTMLAnchorElement>} */ (nav.querySelectorAll("a[data-step]"))] : [];
const label = document.getElementById("progress-step");
const title = document.getElementById("progress-title");
const part = document.getElementById("progress-part"); // the path through the model, or the research desk

function mark(step) {
  for (const a of links) {
    const n = Number(a.dataset.step);
    a.classList.toggle("done", n < step);
    if (n === step) a.setAttribute("aria-current", "step");
    else a.removeAttribute("aria-current");
  }
  const current = links.find((a) => Number(a.dataset.step) === step);
  if (label) label.textContent = formatNumber(step, "int");
  if (title && current) title.textContent = current.title.replace(/^\d+\.\s*/, "");
  if (part && current) part.textContent = current.dataset.part;
}

stepInView.follow((detail) => mark(detail.step));
