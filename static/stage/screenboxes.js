// Where things stand on the stage's screen, in CSS pixels relative to the stage's top-left corner: a
// world point projected, a block's rectangle, each label's quad as labels.js's shader grows it, and the
// overlays and switches the page has put over the stage. readouts.js keeps its names and numbers clear
// of all of them; the tests read the same boxes.
import * as THREE from 'three';

/** (x, y, z) in world units → [x, y] CSS px on the stage, and whether it is in front of the camera. */
export function projector(stage) {
  const W = stage.el.clientWidth, H = stage.el.clientHeight, v = new THREE.Vector3();
  return (x, y, z = 0) => { v.set(x, y, z).project(stage.camera); return [(v.x + 1) / 2 * W, (1 - v.y) / 2 * H, v.z < 1]; };
}

/** A rectangle {x0, y0, x1, y1} around points. */
export function around(points) {
  const xs = points.map(p => p[0]), ys = points.map(p => p[1]);
  return { x0: Math.min(...xs), y0: Math.min(...ys), x1: Math.max(...xs), y1: Math.max(...ys) };
}

export const overlaps = (a, b, pad = 0) => a.x0 < b.x1 + pad && b.x0 < a.x1 + pad && a.y0 < b.y1 + pad && b.y0 < a.y1 + pad;

/** A block's cells on screen (their footprint on the z = 0 plane). */
export function blockRect(px, b) {
  return around([px(b.x, b.y), px(b.x + b.w, b.y), px(b.x, b.y - b.rows), px(b.x + b.w, b.y - b.rows)]);
}

/** Every label quad on screen as labels.js's vertex shader grows it (visible ones only; none while the
 *  labels are hidden): the same rule on the CPU, from the mesh's own attributes. */
export function labelRects(stage) {
  const mesh = stage.labels;
  if (!mesh || !stage.decor?.visible) return [];
  const g = mesh.geometry, pos = g.getAttribute('position').array, off = g.getAttribute('aOffset').array, sz = g.getAttribute('aSize').array;
  const cam = stage.camera, px = projector(stage), W = stage.el.clientWidth, H = stage.el.clientHeight;
  const perUnit = H / (2 * Math.tan(THREE.MathUtils.degToRad(cam.fov) / 2)), v = new THREE.Vector3(), out = [];
  for (let i = 0; i < pos.length / 12; i++) {
    const [x, y, z] = [pos[i * 12], pos[i * 12 + 1], pos[i * 12 + 2]], [size, minPx, grow, maxPx] = sz.subarray(i * 16, i * 16 + 4);
    const depth = -v.set(x, y, z).applyMatrix4(cam.matrixWorldInverse).z, [ax, ay] = px(x, y, z);
    if (depth <= cam.near || ax < -W || ax > 2 * W || ay < -H || ay > 2 * H) continue;  // far off the stage
    const onScreen = size * perUnit / depth;
    let scale = 1;
    if (minPx > 0) {
      scale = Math.min(Math.max(minPx / onScreen, 1), grow);
      if (onScreen * grow / minPx < 0.6) continue;  // faded out (the shader's smoothstep from 0.55)
    }
    if (maxPx > 0) scale = Math.min(scale, maxPx / onScreen);
    const o = off.subarray(i * 8, i * 8 + 8);
    out.push(around([0, 2, 4, 6].map(k => px(x + o[k] * scale, y + o[k + 1] * scale, z))));
  }
  return out;
}

/** The boxes of what lies over the stage and must stay uncovered: its lasting overlays (key hints, the
 *  exports, the map), the compare banner, the legend and every switch shown. */
export function overlayRects(stage, skip) {
  const box = stage.el.getBoundingClientRect(), out = [];
  const els = [...document.querySelectorAll('[data-covers-stage]'), stage.compare?.banner, stage.pointer?.legend,
    ...stage.el.querySelectorAll('.stage-switch')];
  for (const e of els) {
    if (!e || e.hidden || skip?.contains(e)) continue;
    const r = e.getBoundingClientRect();
    if (!r.width || !r.height || getComputedStyle(e).visibility === 'hidden') continue;
    out.push({ x0: r.left - box.left, y0: r.top - box.top, x1: r.right - box.left, y1: r.bottom - box.top });
  }
  return out;
}
