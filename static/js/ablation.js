// Switching parts off, in one place: the stage's switches ask for parts to switch off (./store.js askedParts)
// and buttons with data-ablate-part (step 29's table) toggle one part; both end in the one `ablate(parts)` the
// caller gives (page.js: its input on that ablation; the stage on its own: that trace fetched and drawn). An
// ablate= value in the address names the parts.

import { askedParts } from "./store.js";

/** The parts named in an ablate= value (the server checks them). */
export function parseAblation(text) {
  return String(text || "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

/** The table's buttons pressed for the parts switched off. */
export function showAblation(parts) {
  const off = new Set(parts);
  for (const b of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll("[data-ablate-part]")))
    b.setAttribute("aria-pressed", String(off.has(b.dataset.ablatePart)));
}

/** Answers the switches: ablate(parts) for each press; current() → the parts switched off now. */
export function answerSwitches(ablate, current) {
  askedParts.subscribe(ablate);
  document.addEventListener("click", (event) => {
    const b =
      event.target instanceof Element
        ? /** @type {HTMLElement | null} */ (event.target.closest("[data-ablate-part]"))
        : null;
    if (!b) return;
    const part = b.dataset.ablatePart,
      now = current();
    ablate(now.includes(part) ? now.filter((p) => p !== part) : [...now, part]);
  });
}
