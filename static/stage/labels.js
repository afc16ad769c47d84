// Labels: every string rasterised once into one canvas atlas and drawn as one mesh of quads (one
// draw call for all labels). Text markup: ^{…} superscript, _{…} subscript.
import * as THREE from "three";

const PX = 64; // atlas pixels per label line height
const FONT = '"Inter", "Helvetica Neue", Arial, sans-serif';

function segments(text) {
  const out = [];
  const re = /([\^_])\{([^}]*)\}/g;
  let last = 0,
    m;
  while ((m = re.exec(text))) {
    if (m.index > last) out.push({ s: text.slice(last, m.index), k: 0 });
    out.push({ s: m[2], k: m[1] === "^" ? 1 : -1 });
    last = re.lastIndex;
  }
  if (last < text.length) out.push({ s: text.slice(last), k: 0 });
  return out;
}

/** A label's type size as a share of its line (the quad's height): labelRects()'s px × FONT_SHARE is its font size. */
export const FONT_SHARE = 0.72;

function font(k, weight) {
  return `${weight} ${k ? Math.round(PX * 0.5) : Math.round(PX * FONT_SHARE)}px ${FONT}`;
}

// A segment's width by font and text, kept for the page's life: most labels are the same from one input to
// the next, and measuring each one again took 3 ms of a new input's atlas. A font that loads later
// changes them: then they are measured again.
const widths = new Map();
globalThis.document?.fonts?.addEventListener?.("loadingdone", () => widths.clear());
function segmentWidth(ctx, text, font) {
  const key = `${font}|${text}`;
  if (!widths.has(key)) {
    ctx.font = font;
    widths.set(key, ctx.measureText(text).width);
  }
  return widths.get(key);
}

function measure(ctx, text, weight) {
  let w = 0;
  for (const seg of segments(text)) w += segmentWidth(ctx, seg.s, font(seg.k, weight));
  return Math.ceil(w) + 8;
}

// Labels keep a legible size on screen: each quad grows about its anchor (up to maxScale times its
// world size) until its line is at least minPx CSS pixels tall, and fades out where even that is not
// enough; so far away (the overview) only the station titles remain, and close up every block is named.
// A label that would cross the stage's edge, or reach into the bands its lasting overlays cover at the
// top and bottom (uBand: the free band's top and bottom in clip space, from tour.js covered()), is not
// drawn: half a word is no name, and an overlay must not sit on one. The views keep room for their own
// labels (labelroom.js), so what this hides is a neighbour's, cut like its block.
const vertexShader = /* glsl */ `
  attribute vec2 aOffset;   // the corner, relative to the anchor, at the label's world size
  attribute vec4 aSize;     // world size (line height), minPx, maxScale, maxPx (0: none)
  attribute vec4 aQuad;     // the whole quad's offsets at world size: x0, y0, x1, y1
  uniform float uPxPerUnit; // CSS pixels per world unit at distance 1 (viewport height / (2 tan(fov/2)))
  uniform vec2 uBand;       // the free band's top and bottom in clip space (1, -1: the whole stage)
  varying vec2 vUv;
  varying float vAlpha;
  bool outside(vec2 corner) {
    vec4 c = projectionMatrix * modelViewMatrix * vec4(position + vec3(corner, 0.0), 1.0);
    vec2 n = c.xy / c.w;
    return c.w <= 0.0 || n.x < -1.001 || n.x > 1.001 || n.y > uBand.x + 0.001 || n.y < uBand.y - 0.001;
  }
  void main() {
    vUv = uv;
    vec4 anchor = modelViewMatrix * vec4(position, 1.0);
    float px = aSize.x * uPxPerUnit / max(-anchor.z, 1e-3);   // the line's height on screen now
    float scale = 1.0;
    vAlpha = 1.0;
    if (aSize.y > 0.0) {
      scale = clamp(aSize.y / px, 1.0, aSize.z);
      vAlpha = smoothstep(0.55, 0.8, px * aSize.z / aSize.y);
    }
    if (aSize.w > 0.0) scale = min(scale, aSize.w / px);   // and no larger than maxPx up close
    vec4 q = aQuad * scale;
    if (outside(q.xy) || outside(q.zw) || outside(q.xw) || outside(q.zy)) vAlpha = 0.0;
    // the quad stays in the blocks' plane (z = 0), grown about its anchor
    gl_Position = projectionMatrix * modelViewMatrix * vec4(position + vec3(aOffset * scale, 0.0), 1.0);
  }`;

const fragmentShader = /* glsl */ `
  uniform sampler2D uMap;
  varying vec2 vUv;
  varying float vAlpha;
  void main() {
    vec4 t = texture2D(uMap, vUv);
    if (t.a * vAlpha < 0.01) discard;
    gl_FragColor = vec4(t.rgb, t.a * vAlpha);
    #include <colorspace_fragment>
  }`;

// How each role of label reads: the least on-screen line height it grows to (minPx), how far it may
// grow (maxScale), the most it shows up close (maxPx). The scene says what and where; this says how.
const ROLES = {
  block: { minPx: 15, maxScale: 2.4, weight: 500 },
  param: { minPx: 15, maxScale: 2.4, weight: 500 },
  station: { minPx: 22, maxScale: 8, maxPx: 34, weight: 700 },
  token: { minPx: 14, maxScale: 2.5, weight: 500 },
};

/** A role's look with its least line height raised to `floor` CSS px (presenter mode's, for a projector), its
 *  growth and its largest size raised alike, so that it reaches the floor where it reached its own minimum. */
function atLeast(role, floor) {
  if (!(floor > role.minPx)) return role;
  const k = floor / role.minPx;
  return { ...role, minPx: floor, maxScale: role.maxScale * k, ...(role.maxPx ? { maxPx: role.maxPx * k } : {}) };
}

/** The scene's labels ({text, x, y, size, role, anchor, baseline, room, up, part}) with their role's look and
 *  colour; a gate block's label (its `part`) is hidden unless `drawn` has its part (the gate is drawn only
 *  while its part is off: its place stays, the label keeps its index and takes no room). */
export function styleLabels(labels, colors, drawn = new Set(), floor = 0) {
  return labels.map((l) => ({
    ...atLeast(ROLES[l.role], floor),
    ...l,
    color: colors[l.role],
    maxWidth: l.room || undefined,
    hidden: Boolean(l.part) && !drawn.has(l.part),
  }));
}

/** Where lasting overlays cover the stage (shares of its height at the top and bottom): labels keep out. */
export function setLabelBand(mesh, cover) {
  mesh?.material.uniforms.uBand.value.set(1 - 2 * cover.top, -1 + 2 * cover.bottom);
}

/** labels: [{text, x, y, size, anchor ('left'|'center'|'right'), baseline ('bottom'|'top'|'middle'),
 *  color, weight, maxWidth, minPx, maxScale, maxPx, room, up}] in world units (room: the widest the label may
 *  grow to, not to run into its neighbour; up: the tallest, not to reach the block above). Returns a THREE.Mesh. */
export function buildLabels(labels) {
  const { canvas, slots } = drawAtlas(labels);
  const tex = new THREE.CanvasTexture(canvas);
  tex.colorSpace = THREE.SRGBColorSpace;
  tex.anisotropy = 4;
  tex.generateMipmaps = true;
  tex.minFilter = THREE.LinearMipmapLinearFilter;
  const m = /** @type {THREE.ShaderMaterial & {map?: THREE.Texture}} */ (
    new THREE.ShaderMaterial({
      vertexShader,
      fragmentShader,
      transparent: true,
      depthWrite: false,
      side: THREE.DoubleSide,
      uniforms: { uMap: { value: tex }, uPxPerUnit: { value: 1 }, uBand: { value: new THREE.Vector2(1, -1) } },
    })
  );
  m.map = tex; // so that the stage's dispose() frees the atlas too
  const mesh = new THREE.Mesh(labelQuads(labels, slots, canvas), m);
  mesh.renderOrder = 2;
  mesh.frustumCulled = false; // quads grow in the shader; the anchors' sphere would cull too early
  const size = new THREE.Vector2();
  mesh.onBeforeRender = (renderer, scene, camera) => {
    renderer.getSize(size);
    m.uniforms.uPxPerUnit.value =
      size.y / (2 * Math.tan(THREE.MathUtils.degToRad(/** @type {THREE.PerspectiveCamera} */ (camera).fov) / 2));
  };
  return mesh;
}

/** Every label's text in one canvas (rows of PX pixels), and where each sits in it. */
function drawAtlas(labels) {
  const canvas = document.createElement("canvas");
  const ctx = canvas.getContext("2d");
  const W = 2048;
  const widths = labels.map((l) => (l.hidden ? 0 : measure(ctx, l.text, l.weight || 500)));
  let x = 0,
    y = 0;
  const slots = [];
  for (const w of widths) {
    const ww = Math.min(w, W);
    if (x + ww > W) {
      x = 0;
      y += PX;
    }
    slots.push({ x, y, w: ww });
    x += ww + 2;
  }
  canvas.width = W;
  canvas.height = THREE.MathUtils.ceilPowerOfTwo(Math.max(PX, y + PX));
  ctx.textBaseline = "alphabetic";
  labels.forEach((l, i) => {
    if (l.hidden) return;
    const s = slots[i];
    let cx = s.x + 4;
    // a dark outline keeps a label legible where it overlaps cells or lines
    ctx.fillStyle = l.color || "#e8e6e1";
    ctx.strokeStyle = "rgba(16, 18, 22, 0.9)";
    ctx.lineWidth = 7;
    ctx.lineJoin = "round";
    for (const seg of segments(l.text)) {
      const f = font(seg.k, l.weight || 500);
      ctx.font = f;
      const ty = s.y + PX * 0.74 - seg.k * PX * 0.28;
      ctx.strokeText(seg.s, cx, ty);
      ctx.fillText(seg.s, cx, ty);
      cx += segmentWidth(ctx, seg.s, f);
    }
  });
  return { canvas, slots };
}

/** One quad per label, pinned at its anchor, with its world size and how it may grow on screen. A hidden
 *  label's quad is a point at its anchor that never shows (size 0 against a minimum of 1 px: labelroom.js's
 *  rects leave it out too). */
function labelQuads(labels, slots, canvas) {
  const W = canvas.width,
    n = labels.length;
  const pos = new Float32Array(n * 12),
    off = new Float32Array(n * 8),
    sz = new Float32Array(n * 16),
    uv = new Float32Array(n * 8),
    idx = [];
  const quad = new Float32Array(n * 16);
  labels.forEach((l, i) => {
    const s = slots[i];
    let size = l.hidden ? 0 : l.size || 1.6;
    let w = (size * s.w) / PX;
    if (l.maxWidth && w > l.maxWidth) {
      size *= l.maxWidth / w;
      w = l.maxWidth;
    }
    const h = size;
    // the anchor is the label's pinned point (its x anchor on its baseline); the quad grows from it
    const ax = l.x,
      ay = l.y;
    const x0 = l.anchor === "center" ? -w / 2 : l.anchor === "right" ? -w : 0;
    const y0 = l.baseline === "top" ? -h : l.baseline === "middle" ? -h / 2 : 0;
    const z = 0.05;
    for (let k = 0; k < 4; k++) pos.set([ax, ay, z], i * 12 + k * 3);
    off.set([x0, y0, x0 + w, y0, x0 + w, y0 + h, x0, y0 + h], i * 8);
    for (let k = 0; k < 4; k++) quad.set([x0, y0, x0 + w, y0 + h], i * 16 + k * 4);
    let grow = Math.max(1, l.maxScale || 1);
    if (l.room) grow = Math.max(1, Math.min(grow, l.room / w)); // no wider than the room beside it
    if (l.up) grow = Math.max(1, Math.min(grow, l.up / h)); // no taller than the room under the block above
    for (let k = 0; k < 4; k++) sz.set([size, l.hidden ? 1 : l.minPx || 0, grow, l.maxPx || 0], i * 16 + k * 4);
    const u0 = s.x / W,
      u1 = (s.x + s.w) / W,
      v1 = 1 - s.y / canvas.height,
      v0 = 1 - (s.y + PX) / canvas.height;
    uv.set([u0, v0, u1, v0, u1, v1, u0, v1], i * 8);
    const b = i * 4;
    idx.push(b, b + 1, b + 2, b, b + 2, b + 3);
  });
  const g = new THREE.BufferGeometry();
  g.setAttribute("position", new THREE.BufferAttribute(pos, 3));
  g.setAttribute("aOffset", new THREE.BufferAttribute(off, 2));
  g.setAttribute("aSize", new THREE.BufferAttribute(sz, 4));
  g.setAttribute("aQuad", new THREE.BufferAttribute(quad, 4));
  g.setAttribute("uv", new THREE.BufferAttribute(uv, 2));
  g.setIndex(idx);
  g.computeBoundingSphere();
  return g;
}
