// Switches on the stage: one button per part the scene lists as switchable (scene.switches: a head
// beside its label, a sub-layer beside its station's title), placed at the scene's (x, y) as projected
// now. A press asks for the parts to switch off (../js/store.js askedParts); the page fetches that trace and
// the stage draws it like any other. Nothing here knows which parts exist.
import { overlayRects } from "./overlay.js";
import { labelRects, switchLabel } from "./labelroom.js";
import { projector } from "./screenboxes.js";
import { askedParts } from "../js/store.js";

const MIN_STATION_PX = 110; // a sub-layer's station narrower than this on screen shows no switch
const LABEL_GAP = 4; // CSS px between a head's label and its switch

export class Switches {
  constructor(stage) {
    this.stage = stage;
    this.el = document.createElement("div");
    this.el.className = "stage-switches";
    this.el.setAttribute("role", "group");
    this.el.setAttribute("aria-label", "Switch parts of the model off");
    this.buttons = [];
    stage.el.append(this.el);
  }

  /** The scene's switches as buttons (a new trace may have switched parts off or on).
   *  @param {import("../types.js").Scene | null} scene */
  build(scene) {
    const list = scene?.switches || [];
    this.off = new Set(list.filter((s) => s.off).map((s) => s.id));
    this.buttons = list.map((s) => {
      const b = document.createElement("button");
      b.type = "button";
      b.className = `stage-switch stage-switch-${s.kind}`;
      b.dataset.part = s.id;
      b.dataset.anchor = s.anchor;
      b.setAttribute("aria-pressed", String(s.off));
      b.textContent = s.off ? "off · turn on" : "turn off";
      const name = s.name || s.label; // the part in full ("decoder 2 · cross-attention · head 4"); the id beside it
      b.title = s.off
        ? `${name} is switched off (${s.id}): press to switch it on again`
        : `Switch ${name} off (${s.id}): the translation and every tensor are recomputed without it`;
      b.setAttribute("aria-label", `${b.textContent}: ${b.title}`); // the name starts with the visible words
      b.addEventListener("click", (e) => {
        e.stopPropagation();
        this.toggle(s.id);
      });
      b.addEventListener("pointerdown", (e) => e.stopPropagation());
      return { s, b, label: switchLabel(scene.labels, s, s.block ? this.stage.blockById.get(s.block) : null) };
    });
    this.el.replaceChildren(...this.buttons.map((x) => x.b));
    // measured and placed by the next frame (place() follows every picture): measuring here laid the
    // whole page out once more for every new input
  }

  /** The parts switched off after toggling one, in the scene's order. */
  toggle(id) {
    const off = new Set(this.off);
    if (off.has(id)) off.delete(id);
    else off.add(id);
    const ablation = this.buttons.map((x) => x.s.id).filter((p) => off.has(p));
    askedParts.set(ablation);
  }

  /** Each button at its projected point; hidden while its head or station is too small to aim at. */
  place() {
    const st = this.stage,
      W = st.el.clientWidth,
      H = st.el.clientHeight;
    if (!this.buttons.length || !W) return;
    const px = projector(st);
    const stations = new Map((st.scene?.stations || []).map((s) => [s.id, s]));
    const free = freeArea(st, H);
    const lines = labelLines(st, this.buttons);
    // every button measured before any is moved: a size read after a write lays the page out again, once
    // per button (80 ms a new input)
    for (const one of this.buttons) {
      one.width = one.b.offsetWidth || one.width; // its text may have changed (off · turn on)
      one.height = one.b.offsetHeight; // none while hidden: 16 below, as before
    }
    for (const one of this.buttons) placeButton(one, { W, H, px, stations, ...free, ...lines });
  }
}

/** Where no switch may go: under an overlay, or in the bands the overlays cover at the top and bottom. */
function freeArea(st, H) {
  // no switch under an overlay (the key hints, the exports, the map, the compare banner, the legend)
  const box = st.el.getBoundingClientRect(),
    over = overlayRects(st.el).map((o) => [o.left - box.left, o.top - box.top, o.right - box.left, o.bottom - box.top]);
  const covered = (x0, y0, x1, y1) => over.some(([a, b, c, d]) => x0 < c && a < x1 && y0 < d && b < y1);
  // nor in the bands those overlays cover, where the labels beside the switches are not drawn (labels.js)
  const band = st.tour.covered(true),
    top = band.top * H,
    bottom = H - band.bottom * H;
  return { covered, top, bottom };
}

/** The switches' labels as drawn now, by label index, and the canvas's box (`c`) they are measured in. */
function labelLines(st, buttons) {
  // each switch on its label's line as the label is drawn now (it grows on screen; the scene's point
  // is at its world size), and hidden with it
  const canvas = st.renderer.domElement,
    c = canvas.getBoundingClientRect();
  const drawn = new Map(
    labelRects(
      st.labels,
      st.camera,
      canvas,
      buttons.map((x) => x.label).filter((i) => i !== null),
    ).map((r) => [r.i, r]),
  );
  return { drawn, c };
}

/** One button at its point, or hidden: behind the camera, outside the stage, too small to aim at, its label
 *  cut or not drawn, or under an overlay. */
function placeButton(one, { W, H, px, stations, covered, top, bottom, drawn, c }) {
  const { s, b, label } = one;
  const room = one.width || 60; // the whole button inside the stage
  const r = label === null ? null : drawn.get(label);
  let [x, y, inFront] = px(s.x, s.y);
  if (r) {
    y = (r.top + r.bottom) / 2 - c.top;
    // a sub-layer's switch stands past its title's far end: left of an encoder's (anchored at its right),
    // right of a decoder's (anchored at its left), never on it
    if (!s.block) x = s.anchor === "right" ? Math.min(x, r.left - c.left - 6) : Math.max(x, r.right - c.left + 6);
  }
  const inside = s.anchor === "right" ? x - room > 0 && x < W : x > 0 && x + room < W;
  const h = one.height || 16,
    x0 = s.anchor === "right" ? x - room : x;
  let width = 0;
  if (s.block) {
    // the head's label sits at the left of the same block: the switch shows only where both fit
    // side by side, as drawn now (at the phone's width they would overlap: the table's buttons serve there)
    width = r ? Number(r.right - c.left + LABEL_GAP <= x0) : 0;
  } else {
    const k = stations.get(s.station);
    if (k) width = Math.abs(px(k.x + k.w, k.y)[0] - px(k.x, k.y)[0]) / MIN_STATION_PX;
  }
  const show =
    width >= 1
    && inFront
    && inside
    && (label === null || (r && !r.cut))
    && y - h / 2 > Math.max(8, top)
    && y + h / 2 < Math.min(H - 8, bottom)
    && !covered(x0, y - h / 2, x0 + room, y + h / 2);
  b.hidden = !show;
  if (!show) return;
  const left = s.anchor === "right" ? `calc(${x}px - 100%)` : `${x}px`;
  b.style.transform = `translate(${left}, calc(${y}px - 50%))`;
}
