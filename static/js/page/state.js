// What the page holds and the address keeps. window.anatomy = {trace, step, stepDetail, compareTrace,
// cell, cellDetail, model, checkpoint, ablation, ready} for the other modules, tests and the console.
// The address keeps the input, the parts switched off (ablate=), the step (#step-N), the pinned input
// (compare=), the explained cell (cell=id:row:col) and the training snapshot (checkpoint=N), so a link
// reproduces the picture.

import { addressedModel } from "../site.js";
import { withShownTrace } from "../store.js";

export const DEFAULT_INPUT = "42";
// ?model=: the server names the miniature the stage draws (data-model, absent for the default); a page of
// the static folder reads it from the address (site.js addressedModel)
export const form = /** @type {HTMLFormElement | null} */ (document.getElementById("input-form"));
export const MODEL = form?.dataset.model || addressedModel();
export const field = /** @type {HTMLInputElement} */ (document.getElementById("number-input"));
export const errorBox = document.getElementById("input-error");
export const sections = [.../** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll("section.step"))];

// its `trace` a read-only view of the store the stage follows (../store.js shownTrace)
/** @type {import("../../types.js").PageState} */
export const anatomy = (window.anatomy = withShownTrace({
  step: null,
  stepDetail: null,
  compareTrace: null,
  cell: null,
  cellDetail: null,
  model: null,
  checkpoint: null,
  ready: false,
  ablation: [],
}));

/** Announces a page event to the stage, the figures and the progress bar. */
export const announce = (name, detail) => document.dispatchEvent(new CustomEvent(name, { detail }));

export function showError(message) {
  errorBox.textContent = message;
  field.setAttribute("aria-invalid", "true");
}

export function clearError() {
  errorBox.textContent = "";
  field.removeAttribute("aria-invalid");
}

/** The input on show now (or the one typed, or the default). */
export const currentInput = () => (anatomy.trace ? String(anatomy.trace.input.number) : field.value || DEFAULT_INPUT);

export function updateUrl() {
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
  if (anatomy.trace) deeperLinks(String(anatomy.trace.input.number));
}

/** The "Go deeper" links carry the input on show, so that a topic page computes its figures for it. */
function deeperLinks(input) {
  for (const a of /** @type {NodeListOf<HTMLAnchorElement>} */ (document.querySelectorAll(".go-deeper a"))) {
    const link = new URL(a.href);
    link.searchParams.set("input", input);
    a.href = link.pathname + link.search;
  }
}
