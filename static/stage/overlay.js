// What the stage says in words around the drawing: the key hints (a lasting overlay: views keep clear
// of it), the message line (what could not be done, for twelve seconds or until clicked), and the
// container's role and name for assistive technology.
const HELP =
  "drag: orbit · right-drag: pan · wheel: zoom · Tab and arrow keys: move a cell cursor · "
  + "Enter: explain the cell · Esc: hide it";
const MESSAGE_MS = 12000;

export function buildHelp() {
  const help = Object.assign(document.createElement("div"), { className: "stage-help", title: HELP });
  help.append(
    Object.assign(document.createElement("span"), {
      className: "stage-help-keys",
      textContent: "O whole machine · C step view · R replay · N numbers · ",
    }),
    "click a cell: where it comes from",
  );
  help.dataset.coversStage = "";
  return help;
}

/** The whole machine and back, on screen (O and C on a keyboard; a phone has none): one button that
 *  says where it goes. sync() after the view changes. */
export function buildViewButton(stage) {
  const b = /** @type {HTMLButtonElement & {sync: () => void}} */ (
    Object.assign(document.createElement("button"), { type: "button", className: "stage-overview" })
  );
  b.sync = () => {
    const whole = !!stage.inOverview;
    b.textContent = whole ? "Step view" : "Whole machine";
    b.title = whole ? "Back to the step's view (key C)" : "Show the whole machine (key O)";
    b.setAttribute("aria-pressed", String(whole));
  };
  b.addEventListener("click", () => {
    if (stage.inOverview) stage.returnToStep();
    else stage.showOverview();
  });
  b.sync();
  return b;
}

export class Messages {
  constructor() {
    this.el = Object.assign(document.createElement("div"), { className: "stage-message", hidden: true });
    this.el.setAttribute("role", "alert");
    this.el.addEventListener("click", () => {
      this.el.hidden = true;
    });
  }

  show(text) {
    const el = this.el;
    el.textContent = text;
    el.hidden = false;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      el.hidden = true;
    }, MESSAGE_MS);
  }
}

/** The stage's role, description, name and focusability, where the page has not set them. */
export function describeStage(el) {
  el.setAttribute("role", el.getAttribute("role") || "application");
  el.setAttribute("aria-roledescription", "model stage");
  if (!el.getAttribute("aria-label"))
    el.setAttribute(
      "aria-label",
      "The Transformer, every matrix drawn. Tab and arrow keys move a cell cursor; the inspector reads the cell.",
    );
  if (!el.hasAttribute("tabindex")) el.tabIndex = 0;
}

// What lies over the stage: the lasting overlays (data-covers-stage: the key hints, PNG/CSV/ONNX, the
// page's map) and what comes and goes (the compare banner, the legend, the message), visible now.
const OVERLAYS = "[data-covers-stage], .stage-banner, .stage-legend, .stage-message, .stage-inspector";

/** The overlays' boxes on screen now (client pixels) that overlap the stage: [{name, left, top, right, bottom}]
 *  (selector: which overlays; skip: an element whose own children are not overlays). */
export function overlayRects(stageEl, selector = OVERLAYS, skip = null) {
  const box = stageEl.getBoundingClientRect(),
    out = [];
  for (const e of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll(selector))) {
    if (skip?.contains(e)) continue;
    const r = e.getBoundingClientRect();
    if (e.hidden || !r.width || !r.height || getComputedStyle(e).visibility === "hidden") continue;
    if (r.bottom <= box.top || r.top >= box.bottom || r.right <= box.left || r.left >= box.right) continue;
    out.push({
      name: e.className || e.tagName.toLowerCase(),
      left: r.left,
      top: r.top,
      right: r.right,
      bottom: r.bottom,
    });
  }
  return out;
}
