// Where the labels are on screen, computed as labels.js's shader draws them (each quad grown about its
// anchor to at least its minPx, at most maxScale times its world size and maxPx, faded out where even
// that is too small): in the blocks' plane (for the views, which keep room for the labels they show)
// and on screen (labelRects(): for tests and for the overlays, which must not cover a label).
import * as THREE from "three";

const FADE_FROM = 0.55; // the shader's smoothstep: a label is drawn from this share of its minPx on

/** Pixels per world unit at distance 1 for this camera and canvas (the shader's uPxPerUnit). */
export function pxPerUnit(camera, heightPx) {
  return heightPx / (2 * Math.tan(THREE.MathUtils.degToRad(camera.fov) / 2));
}

/** The grown scale of label quad i when its anchor is `depth` from the camera, and whether it shows. */
function grown(sz, i, ppu, depth) {
  const size = sz[i * 16],
    minPx = sz[i * 16 + 1],
    grow = sz[i * 16 + 2],
    maxPx = sz[i * 16 + 3];
  const px = (size * ppu) / Math.max(depth, 1e-3);
  let scale = 1,
    shows = true;
  if (minPx > 0) {
    scale = Math.min(Math.max(minPx / px, 1), grow);
    shows = (px * grow) / minPx > FADE_FROM;
  }
  if (maxPx > 0) scale = Math.min(scale, maxPx / px);
  return { scale, shows };
}

/** Every label's rectangle in the z = 0 plane as drawn from `distance` (face-on): [{i, x0, x1, y0, y1, ax, ay}]. */
export function labelWorldRects(mesh, ppu, distance) {
  if (!mesh) return [];
  const g = mesh.geometry,
    pos = g.attributes.position.array,
    off = g.attributes.aOffset.array,
    sz = g.attributes.aSize.array;
  const out = [];
  for (let i = 0; i < pos.length / 12; i++) {
    const { scale, shows } = grown(sz, i, ppu, distance);
    if (!shows) continue;
    const ax = pos[i * 12],
      ay = pos[i * 12 + 1],
      o = off.subarray(i * 8, i * 8 + 8);
    out.push({ i, ax, ay, x0: ax + o[0] * scale, x1: ax + o[2] * scale, y0: ay + o[1] * scale, y1: ay + o[5] * scale });
  }
  return out;
}

/** Every label's box on screen now (client pixels), as the camera sees it: [{i, left, top, right, bottom,
 *  px, cut}], cut: not drawn, since it would cross the stage's edge or reach under an overlay (labels.js). */
export function labelRects(mesh, camera, canvas, only = null) {
  if (!mesh || !mesh.visible) return [];
  const rect = canvas.getBoundingClientRect(),
    ppu = pxPerUnit(camera, rect.height);
  const g = mesh.geometry,
    pos = g.attributes.position.array,
    off = g.attributes.aOffset.array,
    sz = g.attributes.aSize.array;
  const v = new THREE.Vector3(),
    view = new THREE.Vector3(),
    out = [],
    band = mesh.material.uniforms.uBand?.value || { x: 1, y: -1 };
  for (const i of only || Array.from({ length: pos.length / 12 }, (_, k) => k)) {
    view.set(pos[i * 12], pos[i * 12 + 1], pos[i * 12 + 2]).applyMatrix4(camera.matrixWorldInverse);
    if (view.z >= 0) continue; // behind the camera
    const { scale, shows } = grown(sz, i, ppu, -view.z);
    if (!shows) continue;
    let left = Infinity,
      right = -Infinity,
      top = Infinity,
      bottom = -Infinity,
      cut = false;
    for (let k = 0; k < 4; k++) {
      v.set(
        pos[i * 12] + off[i * 8 + k * 2] * scale,
        pos[i * 12 + 1] + off[i * 8 + k * 2 + 1] * scale,
        pos[i * 12 + 2],
      ).project(camera);
      cut ||= v.x < -1.001 || v.x > 1.001 || v.y > band.x + 0.001 || v.y < band.y - 0.001;
      const x = rect.left + ((v.x + 1) / 2) * rect.width,
        y = rect.top + ((1 - v.y) / 2) * rect.height;
      left = Math.min(left, x);
      right = Math.max(right, x);
      top = Math.min(top, y);
      bottom = Math.max(bottom, y);
    }
    out.push({ i, left, top, right, bottom, px: bottom - top, cut });
  }
  return out;
}

const NEAR = 3; // world units: a label anchored this close to a view's box (a row's token, left of it) is its

/** A view's box grown to hold the labels anchored in it (or NEAR it) as they are drawn from `distance`. */
export function boxWithLabels(mesh, ppu, distance, box) {
  const [minX, maxX, minY, maxY] = [box[0] - NEAR, box[1] + NEAR, box[2] - NEAR, box[3] + NEAR];
  let [x0, x1, y0, y1] = box;
  for (const r of labelWorldRects(mesh, ppu, distance)) {
    if (r.ax < minX || r.ax > maxX || r.ay < minY || r.ay > maxY) continue;
    x0 = Math.min(x0, r.x0);
    x1 = Math.max(x1, r.x1);
    y0 = Math.min(y0, r.y0);
    y1 = Math.max(y1, r.y1);
  }
  return [x0, x1, y0, y1];
}

/** The label a switch sits beside: for a head's, the block's label at its left; for a sub-layer's, its
 *  station's title (the scene's switch and label share the line); null if none. */
export function switchLabel(labels, s, block) {
  let best = null,
    bestD = 3;
  labels.forEach((l, i) => {
    if (block ? l.role === "station" || Math.abs(l.x - block.x) > 0.01 : l.role !== "station") return;
    const mid =
      l.baseline === "bottom" ? l.y + (l.size || 1.6) / 2 : l.baseline === "top" ? l.y - (l.size || 1.6) / 2 : l.y;
    const d = Math.abs(mid - s.y);
    if (d < bestD) {
      bestD = d;
      best = i;
    }
  });
  return best;
}
