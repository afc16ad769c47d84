// Labels: every string rasterised once into one canvas atlas and drawn as one mesh of quads (one
// draw call for all labels). Text markup: ^{…} superscript, _{…} subscript.
import * as THREE from 'three';

const PX = 64;           // atlas pixels per label line height
const FONT = '"Inter", "Helvetica Neue", Arial, sans-serif';

function segments(text) {
  const out = []; const re = /([\^_])\{([^}]*)\}/g; let last = 0, m;
  while ((m = re.exec(text))) {
    if (m.index > last) out.push({ s: text.slice(last, m.index), k: 0 });
    out.push({ s: m[2], k: m[1] === '^' ? 1 : -1 }); last = re.lastIndex;
  }
  if (last < text.length) out.push({ s: text.slice(last), k: 0 });
  return out;
}

function font(k, weight) { return `${weight} ${k ? Math.round(PX * 0.5) : Math.round(PX * 0.72)}px ${FONT}`; }

function measure(ctx, text, weight) {
  let w = 0;
  for (const seg of segments(text)) { ctx.font = font(seg.k, weight); w += ctx.measureText(seg.s).width; }
  return Math.ceil(w) + 8;
}

/** labels: [{text, x, y, size, anchor ('left'|'center'|'right'), baseline ('bottom'|'top'|'middle'),
 *  color, weight, maxWidth}] in world units. Returns a THREE.Mesh. */
export function buildLabels(labels) {
  const canvas = document.createElement('canvas');
  const ctx = canvas.getContext('2d');
  const W = 2048;
  const widths = labels.map(l => measure(ctx, l.text, l.weight || 500));
  let x = 0, y = 0; const slots = [];
  for (const w of widths) {
    const ww = Math.min(w, W);
    if (x + ww > W) { x = 0; y += PX; }
    slots.push({ x, y, w: ww }); x += ww + 2;
  }
  canvas.width = W; canvas.height = THREE.MathUtils.ceilPowerOfTwo(Math.max(PX, y + PX));
  ctx.textBaseline = 'alphabetic';
  labels.forEach((l, i) => {
    const s = slots[i]; let cx = s.x + 4;
    ctx.fillStyle = l.color || '#e8e6e1';
    for (const seg of segments(l.text)) {
      ctx.font = font(seg.k, l.weight || 500);
      ctx.fillText(seg.s, cx, s.y + PX * 0.74 - seg.k * PX * 0.28);
      cx += ctx.measureText(seg.s).width;
    }
  });
  const tex = new THREE.CanvasTexture(canvas);
  tex.colorSpace = THREE.SRGBColorSpace; tex.anisotropy = 4; tex.generateMipmaps = true;
  tex.minFilter = THREE.LinearMipmapLinearFilter;
  const pos = new Float32Array(labels.length * 12), uv = new Float32Array(labels.length * 8), idx = [];
  labels.forEach((l, i) => {
    const s = slots[i];
    let size = l.size || 1.6;
    let w = size * s.w / PX;
    if (l.maxWidth && w > l.maxWidth) { size *= l.maxWidth / w; w = l.maxWidth; }
    const h = size;
    const x0 = l.anchor === 'center' ? l.x - w / 2 : l.anchor === 'right' ? l.x - w : l.x;
    const y0 = l.baseline === 'top' ? l.y - h : l.baseline === 'middle' ? l.y - h / 2 : l.y;
    const z = 0.05;
    pos.set([x0, y0, z, x0 + w, y0, z, x0 + w, y0 + h, z, x0, y0 + h, z], i * 12);
    const u0 = s.x / W, u1 = (s.x + s.w) / W, v1 = 1 - s.y / canvas.height, v0 = 1 - (s.y + PX) / canvas.height;
    uv.set([u0, v0, u1, v0, u1, v1, u0, v1], i * 8);
    const b = i * 4; idx.push(b, b + 1, b + 2, b, b + 2, b + 3);
  });
  const g = new THREE.BufferGeometry();
  g.setAttribute('position', new THREE.BufferAttribute(pos, 3));
  g.setAttribute('uv', new THREE.BufferAttribute(uv, 2));
  g.setIndex(idx);
  g.computeBoundingSphere();
  const m = new THREE.MeshBasicMaterial({ map: tex, transparent: true, depthWrite: false, side: THREE.DoubleSide });
  const mesh = new THREE.Mesh(g, m);
  mesh.renderOrder = 2;
  return mesh;
}

// The names on the blocks (SPEC §5.1: E, E[x]·√32, PE, x⁽⁰⁾, W^Q, Q, scores, softmax, …).
export function labelOf(id) {
  const side = id.startsWith('src.') ? 'x' : 'y';
  const fixed = {
    E: 'E  (65×32, shared)', 'const.sqrt_d': '×√32', 'const.neg_inf': '−∞', 'dec.mask': 'causal mask',
    'out.ET': 'Eᵀ (tied)', 'out.logits': 'logits = h·Eᵀ', 'out.probs': 'softmax: probabilities', 'out.tokens': 'argmax',
  };
  if (fixed[id]) return fixed[id];
  let m;
  if ((m = /^(src|tgt)\.(ids|emb|scaled|pe|x0)$/.exec(id))) {
    return { ids: 'ids', emb: `E[${side}]`, scaled: `E[${side}]·√32`, pe: 'PE', x0: `${side}^{(0)}` }[m[2]];
  }
  if ((m = /\.W_([qkvo])$/.exec(id))) return `W^{${m[1].toUpperCase()}}`;
  if ((m = /\.b_([qkvo])$/.exec(id))) return `b^{${m[1].toUpperCase()}}`;
  if ((m = /\.([qkv])$/.exec(id))) return m[1].toUpperCase();
  if ((m = /\.h(\d)\.(scores|masked|weights|out)$/.exec(id))) {
    return { scores: 'QKᵀ/√8', masked: 'masked', weights: 'softmax', out: `head ${+m[1] + 1}` }[m[2]];
  }
  if (id.endsWith('.concat')) return 'Concat(heads)';
  if (id.endsWith('.proj')) return 'Concat·W^{O}';
  if (id.endsWith('.ln.gamma')) return 'γ';
  if (id.endsWith('.ln.beta')) return 'β';
  if (id.endsWith('.sum')) return 'X + Sublayer(X)';
  if (id.endsWith('.ln')) return id === 'enc.1.ffn.ln' ? 'LayerNorm = memory z' : 'LayerNorm';
  if (id.endsWith('.W_1')) return 'W_{1}'; if (id.endsWith('.b_1')) return 'b_{1}';
  if (id.endsWith('.W_2')) return 'W_{2}ᵀ'; if (id.endsWith('.b_2')) return 'b_{2}';
  if (id.endsWith('.hidden_pre')) return 'xW_{1} + b_{1}';
  if (id.endsWith('.hidden')) return 'ReLU (n × 4d)';
  if (id.endsWith('.ffn.out')) return 'FFN(x) = ReLU·W_{2} + b_{2}';
  return id;
}
