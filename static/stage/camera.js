// The camera as a keyframe — a look-at point plus azimuth, elevation and distance (STYLE: llm-viz) —
// with drag to orbit, right-drag to pan, wheel to zoom and touch equivalents. Moves are eased tweens
// in step with the article (snap per step), never tied continuously to scrolling.
import * as THREE from "three";

const ZOOM_IN = 0.45,
  ZOOM_OUT = 4;

export const ease = (t) => (t < 0.5 ? 4 * t * t * t : 1 - Math.pow(-2 * t + 2, 3) / 2);

export class CameraRig {
  constructor(camera, dom, onChange) {
    this.camera = camera;
    this.dom = dom;
    this.onChange = onChange;
    this.key = { target: new THREE.Vector3(), azimuth: 0, elevation: 0.15, distance: 600 };
    this.tween = null;
    this.fitExtra = 0; // the fit rule's extra distance: scene.camera.fit_extra, set with each scene
    this.bounds = { min: 5, max: 5000 }; // how near and far the wheel may go: bound() with each view
    this.bind();
  }

  apply() {
    const { target, azimuth, elevation, distance } = this.key;
    const c = this.camera;
    c.position.set(
      target.x + distance * Math.cos(elevation) * Math.sin(azimuth),
      target.y + distance * Math.sin(elevation),
      target.z + distance * Math.cos(elevation) * Math.cos(azimuth),
    );
    c.near = Math.max(0.5, distance / 200);
    c.far = distance * 8 + 2000;
    c.lookAt(target);
    c.updateProjectionMatrix();
    c.updateMatrixWorld();
  }

  /** Eases to a keyframe in `ms` (0 = a cut). Returns the tween, stepped by the stage's frame loop. */
  moveTo(key, ms) {
    const from = {
      target: this.key.target.clone(),
      azimuth: this.key.azimuth,
      elevation: this.key.elevation,
      distance: this.key.distance,
    };
    const to = { target: key.target.clone(), azimuth: key.azimuth, elevation: key.elevation, distance: key.distance };
    if (!ms) {
      this.tween = null;
      Object.assign(this.key, to);
      this.apply();
      this.onChange();
      return;
    }
    const t0 = performance.now();
    this.tween = (now) => {
      const k = Math.min(1, (now - t0) / ms),
        e = ease(k);
      this.key.target.lerpVectors(from.target, to.target, e);
      this.key.azimuth = from.azimuth + (to.azimuth - from.azimuth) * e;
      this.key.elevation = from.elevation + (to.elevation - from.elevation) * e;
      this.key.distance = from.distance * Math.pow(to.distance / from.distance, e); // zoom evenly
      this.apply();
      if (k >= 1) this.tween = null;
      return k < 1;
    };
    this.onChange();
  }

  /** The keyframe of a scene view: its box of the z = 0 plane filling the screen, seen from its angles
   *  (the rule of scene/layout.py fit_distance). `cover` = {top, bottom} is the share of the screen's
   *  height that overlays cover at its top and bottom: the box fills the band between them instead, and
   *  the camera looks that far above the box's centre so that the box sits in the middle of the band. */
  frame(view, aspect, cover = { top: 0, bottom: 0 }) {
    const [minX, maxX, minY, maxY] = view.box,
      m = view.margin;
    const t = Math.tan(THREE.MathUtils.degToRad(this.camera.fov) / 2);
    const free = 1 - cover.top - cover.bottom;
    const dist = Math.max(((maxY - minY) * m) / 2 / (t * free), ((maxX - minX) * m) / 2 / (t * aspect)) + this.fitExtra;
    const target = new THREE.Vector3(...view.target);
    target.y += (cover.top - cover.bottom) * dist * t; // half the screen's height is dist·t in the z = 0 plane
    return { target, azimuth: view.azimuth, elevation: view.elevation, distance: dist };
  }

  orbit(dx, dy) {
    this.key.azimuth -= dx * 0.005;
    this.key.elevation = THREE.MathUtils.clamp(this.key.elevation + dy * 0.005, -1.4, 1.4);
  }

  pan(dx, dy) {
    const scale =
      (2 * this.key.distance * Math.tan(THREE.MathUtils.degToRad(this.camera.fov) / 2)) / this.dom.clientHeight;
    const right = new THREE.Vector3().setFromMatrixColumn(this.camera.matrixWorld, 0);
    const up = new THREE.Vector3().setFromMatrixColumn(this.camera.matrixWorld, 1);
    this.key.target.addScaledVector(right, -dx * scale).addScaledVector(up, dy * scale);
  }

  /** The wheel's and pinch's range about a view's distance: in to ZOOM_IN of it (the view's subject
   *  still fills the stage, magnified; further in, the camera passes between the blocks and the stage
   *  goes empty), out to ZOOM_OUT of it. */
  bound(distance) {
    this.bounds = { min: distance * ZOOM_IN, max: distance * ZOOM_OUT };
  }

  zoom(factor) {
    this.key.distance = THREE.MathUtils.clamp(this.key.distance * factor, this.bounds.min, this.bounds.max);
  }

  bind() {
    const changed = () => {
      this.tween = null;
      this.apply();
      this.onChange(true);
    };
    this.dom.addEventListener("contextmenu", (e) => e.preventDefault());
    this.bindPointers(changed);
    this.dom.addEventListener(
      "wheel",
      (e) => {
        e.preventDefault();
        this.zoom(Math.exp(e.deltaY * (e.deltaMode ? 0.05 : 0.0015)));
        changed();
      },
      { passive: false },
    );
  }

  /** Dragging orbits (panning with the right button or Shift); two fingers pinch to zoom and pan. */
  bindPointers(changed) {
    const dom = this.dom,
      pointers = new Map();
    let mode = null,
      last = null,
      pinch = null;
    dom.addEventListener("pointerdown", (e) => {
      dom.setPointerCapture?.(e.pointerId);
      pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
      mode = e.button === 2 || e.shiftKey ? "pan" : "orbit";
      last = { x: e.clientX, y: e.clientY };
      if (pointers.size === 2) {
        mode = "pinch";
        pinch = null;
      }
    });
    dom.addEventListener("pointermove", (e) => {
      if (!pointers.has(e.pointerId)) return;
      pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
      if (mode === "pinch" && pointers.size === 2) {
        const [a, b] = [...pointers.values()];
        const cur = { d: Math.hypot(a.x - b.x, a.y - b.y), x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 };
        if (pinch) {
          this.zoom(pinch.d / Math.max(cur.d, 1));
          this.pan(cur.x - pinch.x, cur.y - pinch.y);
          changed();
        }
        pinch = cur;
        return;
      }
      const dx = e.clientX - last.x,
        dy = e.clientY - last.y;
      last = { x: e.clientX, y: e.clientY };
      if (!dx && !dy) return;
      if (mode === "pan") this.pan(dx, dy);
      else if (mode === "orbit") this.orbit(dx, dy);
      changed();
    });
    const up = (e) => {
      pointers.delete(e.pointerId);
      if (pointers.size === 0) mode = null;
      else if (pointers.size === 1) {
        mode = "orbit";
        const p = [...pointers.values()][0];
        last = { ...p };
      }
    };
    dom.addEventListener("pointerup", up);
    dom.addEventListener("pointercancel", up);
  }
}
