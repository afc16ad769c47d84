// The renderer and its frame loop: one WebGL canvas, the three.js world and camera, tweens stepped by
// an on-demand loop (a frame is drawn only when something changed), and the frame statistics the
// tests and the benchmark read. It draws what the other parts of the stage put in the world.
import * as THREE from "three";
import { ease } from "./camera.js";

export class View {
  /** container: the element the canvas fills; onFrame: called after each render (overlays follow). */
  constructor(container, onFrame) {
    this.el = container;
    this.onFrame = onFrame;
    const motion = matchMedia("(prefers-reduced-motion: reduce)");
    this.reduced = motion.matches;
    motion.addEventListener?.("change", (e) => {
      this.reduced = e.matches;
    });
    this.renderer = new THREE.WebGLRenderer({ antialias: true, powerPreference: "high-performance" });
    this.renderer.setPixelRatio(Math.min(devicePixelRatio || 1, 2));
    this.renderer.info.autoReset = true;
    const cv = this.renderer.domElement;
    Object.assign(cv.style, { display: "block", width: "100%", height: "100%", touchAction: "none", outline: "none" });
    cv.setAttribute("aria-hidden", "true");
    container.appendChild(cv);
    if (getComputedStyle(container).position === "static") container.style.position = "relative";
    this.world = new THREE.Scene();
    this.camera = new THREE.PerspectiveCamera(50, 1, 1, 10000); // its field of view comes with the scene
    this.tweens = new Set();
    this.rig = null; // the camera rig, whose tween the loop steps too
    this.stats = {
      drawCalls: 0,
      cellsDrawn: 0,
      blocks: 0,
      lastFrameMs: 0,
      lastInputToRedrawMs: 0,
      lastHitTestMs: 0,
      frames: 0,
      triangles: 0,
      cellLayouts: 0, // the cells' instance buffers made (a new shape); one of the same shape writes values in place
      labelAtlases: 0, // the labels' atlases drawn (their words changed)
    };
  }

  /** The scene's camera constants: its field of view.  @param {import("../types.js").Scene} scene */
  useScene(scene) {
    this.camera.fov = scene.camera.fov_deg;
    this.camera.updateProjectionMatrix();
    this.renderer.setClearColor(scene.palette.background);
  }

  invalidate() {
    if (!this.raf) this.raf = requestAnimationFrame((now) => this.frame(now));
  }
  markInput(t = performance.now()) {
    if (this.inputAt === undefined) this.inputAt = t;
    this.invalidate();
  }

  frame(now) {
    this.raf = 0;
    const t0 = performance.now();
    let more = false;
    if (this.rig?.tween) more = this.rig.tween(now) || more;
    for (const tw of [...this.tweens]) {
      const k = tw.ms ? Math.min(1, (now - tw.t0) / tw.ms) : 1;
      tw.fn(tw.ease === false ? k : ease(k), k);
      if (k >= 1) {
        this.tweens.delete(tw);
        tw.done?.();
      } else more = true;
    }
    this.renderer.render(this.world, this.camera);
    this.onFrame?.();
    const info = this.renderer.info.render,
      t1 = performance.now();
    Object.assign(this.stats, {
      drawCalls: info.calls,
      triangles: info.triangles,
      lastFrameMs: t1 - t0,
      frames: this.stats.frames + 1,
    });
    if (this.inputAt !== undefined) {
      this.stats.lastInputToRedrawMs = t1 - this.inputAt;
      this.inputAt = undefined;
    }
    if (more) {
      this.invalidate();
      return;
    }
    const settled = this.settled;
    this.settled = null;
    for (const fn of settled || []) fn();
    if (this.idleResolve) {
      const r = this.idleResolve;
      this.idleResolve = null;
      r();
    }
  }

  /** Calls fn in the task of the next frame after which nothing moves: the drawing buffer is still
   *  whole there, so a picture of it needs no second drawing (the handout's, pictures.js). */
  whenSettled(fn) {
    (this.settled ||= []).push(fn);
    this.invalidate();
  }

  /** Resolves once nothing moves any more (for tests and the benchmark). */
  idle() {
    if (!this.raf && !this.tweens.size && !this.rig?.tween) return Promise.resolve();
    return /** @type {Promise<void>} */ (
      new Promise((r) => {
        const prev = this.idleResolve;
        this.idleResolve = () => {
          prev?.();
          r();
        };
      })
    );
  }

  /** A tween of `ms` (0 with reduced motion): fn(eased, raw) each frame, done() at the end. */
  tween(ms, fn, done, opts = {}) {
    const tw = { t0: performance.now(), ms: this.reduced ? 0 : ms, fn, done, ...opts };
    this.tweens.add(tw);
    this.invalidate();
    return tw;
  }

  resize() {
    const w = this.el.clientWidth || 1,
      h = this.el.clientHeight || 1;
    this.renderer.setSize(w, h, false);
    this.camera.aspect = w / h;
    this.camera.updateProjectionMatrix();
    this.invalidate();
  }
}
