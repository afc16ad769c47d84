// The live values: every [data-live] element of the article shows that figure of the input on show
// (the trace's figures, computed by ../../compute/page_parts.js, over the model's own), formatted as its
// data-format says.
import { formatNumber } from "../format.js";

/** @param {import("../../types.js").LiveFigures} values */
export function fillLive(values) {
  for (const el of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll("[data-live]"))) {
    const key = el.dataset.live;
    if (key in values) el.textContent = formatNumber(values[key], el.dataset.format || "text");
  }
  document.body.classList.remove("live-pending"); // the numbers are now the input's on show
}
