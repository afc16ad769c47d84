// A box that scrolls sideways (a wide formula, a wide table, a code block) must be reachable from the
// keyboard, or a reader without a mouse cannot see its hidden part (WCAG 2.1.1; axe-core's
// "scrollable-region-focusable"). Such a box becomes a focusable, named region while it overflows,
// and an ordinary one again when the window is wide enough. Checked at load, after the formulas are
// typeset, on resize and when a <details> opens.

const SELECTOR = ".arithmatex, .table-scroll, .step-body > table, pre";
const NAMES = { arithmatex: "formula", "table-scroll": "table" };

function check() {
  for (const box of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll(SELECTOR))) {
    const overflows = box.scrollWidth > box.clientWidth + 1;
    if (overflows && !box.hasAttribute("tabindex")) {
      const kind = Object.keys(NAMES).find((k) => box.classList.contains(k));
      box.setAttribute("tabindex", "0");
      box.dataset.scrollRegion = "";
      if (!box.hasAttribute("role")) box.setAttribute("role", "region");
      const what = kind ? NAMES[kind] : box.tagName === "TABLE" ? "table" : "code";
      const where = box.closest("section[id]")?.id.replace("-", " ") ?? "";
      if (!box.hasAttribute("aria-label"))
        box.setAttribute("aria-label", `${what} ${++named}${where ? ` (${where})` : ""}, scrolls sideways`);
    } else if (!overflows && "scrollRegion" in box.dataset) {
      box.removeAttribute("tabindex");
      box.removeAttribute("role");
      box.removeAttribute("aria-label");
      delete box.dataset.scrollRegion;
    }
  }
}

let pending = 0,
  named = 0;
function soon() {
  cancelAnimationFrame(pending);
  pending = requestAnimationFrame(check);
}

check();
window.addEventListener("resize", soon);
window.addEventListener("load", soon);
document.fonts?.ready.then(soon);
document.addEventListener("toggle", soon, true);
setTimeout(soon, 1000); // after KaTeX has typeset the formulas (math.js) and the figures' first draws
window.anatomyScrollRegions = { check };
