// Where things stand on the stage's screen, in CSS pixels relative to the stage's top-left corner: a
// world point projected, a block's rectangle (a window's columns only), a text's width, each label's quad as
// labels.js's shader grows it, and the overlays and switches the page has put over the stage. readouts.js
// keeps its names and numbers clear of all of them; the tests read the same boxes.
import * as THREE from "three";
import { colX } from "./cells.js";
import { labelRects as drawnLabels } from "./labelroom.js";
import { overlayRects as overlaysOn } from "./overlay.js";

/** (x, y, z) in world units → [x, y] CSS px on the stage, and whether it is in front of the camera.
 *  @returns {(x: number, y: number, z?: number) => [number, number, boolean]} */
export function projector(stage) {
  const W = stage.el.clientWidth,
    H = stage.el.clientHeight,
    v = new THREE.Vector3();
  return (x, y, z = 0) => {
    v.set(x, y, z).project(stage.camera);
    return [((v.x + 1) / 2) * W, ((1 - v.y) / 2) * H, v.z < 1];
  };
}

/** A rectangle {x0, y0, x1, y1} around points. */
export function around(points) {
  const xs = points.map((p) => p[0]),
    ys = points.map((p) => p[1]);
  return { x0: Math.min(...xs), y0: Math.min(...ys), x1: Math.max(...xs), y1: Math.max(...ys) };
}

export const overlaps = (a, b, pad = 0) =>
  a.x0 < b.x1 + pad && b.x0 < a.x1 + pad && a.y0 < b.y1 + pad && b.y0 < a.y1 + pad;

/** A block's cells on screen (their footprint on the z = 0 plane), only the window's columns where it is
 *  windowed (cols: [c0, c1]). */
export function shownRect(px, b, cols, headGap) {
  const x0 = cols ? b.x + colX(b, cols[0], headGap) : b.x,
    x1 = cols ? b.x + colX(b, cols[1], headGap) + 1 : b.x + b.w;
  return around([px(x0, b.y), px(x1, b.y), px(x0, b.y - b.rows), px(x1, b.y - b.rows)]);
}

/** The style that sets a text element over the stage into its rectangle r (stage-relative CSS px), one line
 *  of `font` (with {px} for the size) at `size`.
 *  @param {{x0: number, y0: number, x1: number, y1: number}} r  @param {string} font  @param {number} size */
export const boxStyle = (r, font, size) => ({
  font: font.replace("{px}", String(size)),
  lineHeight: `${r.y1 - r.y0}px`,
  width: `${r.x1 - r.x0}px`,
  height: `${r.y1 - r.y0}px`,
  transform: `translate(${r.x0}px, ${r.y0}px)`,
});

let ctx = null;
/** A text's width in CSS pixels at `size` in `font` (a CSS font with {px} for the size). */
export function textWidth(text, size, font) {
  ctx ||= document.createElement("canvas").getContext("2d");
  ctx.font = font.replace("{px}", size);
  return ctx.measureText(text).width;
}

// Labels and overlays on screen: one rule each (labelroom.js repeats the label shader, overlay.js finds the
// overlays), here in stage-relative CSS pixels.
const stageRect = (box, r) => ({
  x0: r.left - box.left,
  y0: r.top - box.top,
  x1: r.right - box.left,
  y1: r.bottom - box.top,
});

/** Every label quad drawn now (none while the labels are hidden; not those cut at the stage's edge). */
export function labelRects(stage) {
  if (!stage.labels || !stage.decor?.visible) return [];
  const box = stage.el.getBoundingClientRect();
  return drawnLabels(stage.labels, stage.camera, stage.renderer.domElement)
    .filter((r) => !r.cut)
    .map((r) => stageRect(box, r));
}

// What must stay uncovered besides the labels: the lasting overlays, the compare banner, the legend and
// every switch shown (not the hover inspector: names must not move when it comes and goes)
const KEEP_CLEAR = "[data-covers-stage], .stage-banner, .stage-legend, .stage-switch";

/** The boxes of what lies over the stage and must stay uncovered (skip: the readouts' own layer). */
export function overlayRects(stage, skip) {
  const box = stage.el.getBoundingClientRect();
  return overlaysOn(stage.el, KEEP_CLEAR, skip).map((r) => stageRect(box, r));
}

/** Every block's cells on screen now that lie wholly in front of the camera and at least partly on the stage:
 *  [{id, x0, y0, x1, y1}] (their footprint; of a window of wide blocks, only the columns it shows). What the
 *  names, tags and labels over the stage keep off, besides their own block's cells. */
export function cellRects(stage) {
  const s = stage;
  if (!s.scene) return [];
  const px = projector(s),
    W = s.el.clientWidth,
    H = s.el.clientHeight,
    win = s.tour?.framedWindow?.cols ?? null,
    gap = s.scene.cell.head_gap;
  const windowed = new Set(s.windowed || []),
    out = [];
  for (const b of s.scene.blocks) {
    const corners = [px(b.x, b.y), px(b.x + b.w, b.y), px(b.x, b.y - b.rows), px(b.x + b.w, b.y - b.rows)];
    if (!corners.every((p) => p[2])) continue;
    // a window's blocks show only its columns; every other block is the box of the corners just projected
    const r = win && windowed.has(b.id) ? shownRect(px, b, win, gap) : around(corners);
    if (r.x1 > 0 && r.x0 < W && r.y1 > 0 && r.y0 < H) out.push({ id: b.id, ...r });
  }
  return out;
}
