// The article's elements, its messages, and the address. What the page holds is ../store.js's stores
// (window.anatomy shows their values to the tests and the console). The address keeps the input, the parts
// switched off (ablate=), the step (#step-N), the pinned input (compare=), the explained cell
// (cell=id:row:col), the training snapshot (checkpoint=N) and the worked row chosen on the stage
// (worked=head:row, from 0), so a link reproduces the picture.

import { formatNumber } from "../format.js";
import { addressedModel } from "../site.js";
import { chosenWorked, explainedCell, pageView, pinnedTrace, shownTrace, snapshot, stepInView } from "../store.js";

export const DEFAULT_INPUT = "42";
// ?model=: the server names the miniature the stage draws (data-model, absent for the default); a page of
// the static folder reads it from the address (site.js addressedModel)
export const form = /** @type {HTMLFormElement | null} */ (document.getElementById("input-form"));
export const MODEL = form?.dataset.model || addressedModel();
export const field = /** @type {HTMLInputElement} */ (document.getElementById("number-input"));
export const errorBox = document.getElementById("input-error");
export const sections = [.../** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll("section.step"))];

/** The page's functions, for the tests and the console (the values are the stores'). */
export const anatomy = (window.anatomy = pageView());

/** The message for a refused input or link, with the input the stage and the article show meanwhile (the field
 *  keeps what was typed, to be mended, so without it a reader could take the numbers for the refused input's). */
export function showError(message) {
  const shown = shownTrace.get()?.input.number;
  errorBox.textContent =
    shown === undefined ? message : `${message} — the stage and the article show ${formatNumber(shown, "text")}`;
  field.setAttribute("aria-invalid", "true");
}

export function clearError() {
  errorBox.textContent = "";
  field.removeAttribute("aria-invalid");
}

/** The input on show now (or the one typed, or the default). */
export const currentInput = () => {
  const trace = shownTrace.get();
  return trace ? String(trace.input.number) : field.value || DEFAULT_INPUT;
};

export function updateUrl() {
  const url = new URL(window.location.href);
  const trace = shownTrace.get(),
    pinned = pinnedTrace.get(),
    cell = explainedCell.get(),
    checkpoint = snapshot.get(),
    ablation = trace?.ablation ?? [];
  if (trace) url.searchParams.set("input", String(trace.input.number));
  if (ablation.length) url.searchParams.set("ablate", ablation.join(","));
  else url.searchParams.delete("ablate");
  if (pinned) url.searchParams.set("compare", String(pinned.input.number));
  else url.searchParams.delete("compare");
  if (cell) url.searchParams.set("cell", `${cell.id}:${cell.row}:${cell.col}`);
  else url.searchParams.delete("cell");
  if (checkpoint !== null) url.searchParams.set("checkpoint", String(checkpoint));
  else url.searchParams.delete("checkpoint");
  const worked = chosenWorked.get();
  if (worked) url.searchParams.set("worked", `${worked.head}:${worked.row}`);
  else url.searchParams.delete("worked");
  const step = stepInView.get()?.step;
  url.hash = step ? `step-${step}` : url.hash;
  history.replaceState(null, "", url);
  if (trace) deeperLinks(String(trace.input.number));
}

/** The "Go deeper" links carry the input on show, so that a topic page computes its figures for it. */
function deeperLinks(input) {
  for (const a of /** @type {NodeListOf<HTMLAnchorElement>} */ (document.querySelectorAll(".go-deeper a"))) {
    const link = new URL(a.href);
    link.searchParams.set("input", input);
    a.href = link.pathname + link.search;
  }
}
