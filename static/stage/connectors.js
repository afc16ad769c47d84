// Connectors, computed from the layout: embedding threads from E's rows, the violet residual rail,
// orange arcs carrying the memory to each cross-attention, the teal E–Eᵀ tie, the yellow loop.
import * as THREE from 'three';
import { colX } from './layout.js';

export const COLORS = { thread: 0x9aa3b5, rail: 0x9b6bff, arc: 0xff9a3c, tie: 0x2ec4b6, loop: 0xffd23f };

function bezier(a, c, b, n = 24) {
  const out = [];
  for (let i = 0; i <= n; i++) {
    const t = i / n, u = 1 - t;
    out.push(new THREE.Vector3(u * u * a.x + 2 * u * t * c.x + t * t * b.x, u * u * a.y + 2 * u * t * c.y + t * t * b.y, u * u * a.z + 2 * u * t * c.z + t * t * b.z));
  }
  return out;
}

function segmentsOf(polylines) {
  const p = [];
  for (const line of polylines) for (let i = 0; i + 1 < line.length; i++) p.push(line[i].x, line[i].y, line[i].z, line[i + 1].x, line[i + 1].y, line[i + 1].z);
  return new Float32Array(p);
}

function lines(kind, polylines, opacity = 0.9) {
  const g = new THREE.BufferGeometry();
  g.setAttribute('position', new THREE.BufferAttribute(segmentsOf(polylines), 3));
  g.computeBoundingSphere();
  const m = new THREE.LineBasicMaterial({ color: COLORS[kind], transparent: true, opacity, depthWrite: false });
  const obj = new THREE.LineSegments(g, m);
  obj.name = kind; obj.userData.vertexCount = g.getAttribute('position').count;
  obj.renderOrder = 1;
  return obj;
}

const V3 = (x, y, z = 0.2) => new THREE.Vector3(x, y, z);
const rowY = (b, r) => b.y - r - 0.5;
const left = b => b.x, right = b => b.x + b.w, bottom = b => b.y - b.rows;

/** layout, tensors (for ids and the residual inputs) → THREE.Group of five LineSegments. */
export function buildConnectors(layout, tensors) {
  const B = id => layout.blocks.get(id);
  const group = new THREE.Group();
  const E = B('E');
  // Threads: from E's row of each token (left side for the source, right side for the target).
  const threads = [];
  for (const side of ['src', 'tgt']) {
    const ids = tensors.get(`${side}.ids`), emb = B(`${side}.emb`), idb = B(`${side}.ids`);
    if (!ids || !E || !emb) continue;
    ids.data.forEach((tok, r) => {
      const a = side === 'src' ? V3(left(E), rowY(E, tok)) : V3(right(E), rowY(E, tok));
      const b = side === 'src' ? V3(left(idb) - 0.3, rowY(emb, r)) : V3(left(idb) - 0.3, rowY(emb, r));
      const c = V3(side === 'src' ? a.x - 30 : a.x + 30, b.y, 6);
      threads.push(bezier(a, V3(c.x, (a.y + b.y) / 2, 8), b));
    });
  }
  group.add(lines('thread', threads, 0.55));
  // The residual rail: X up the station's left side and into the sum.
  const rails = [];
  for (const b of layout.blocks.values()) {
    if (!b.id.endsWith('.sum')) continue;
    const x = tensors.get(b.id)?.inputs?.[0], xb = x && B(x);
    if (!xb) continue;
    const station = layout.stations.find(s => b.id.startsWith(s.id + '.'));
    const margin = (station ? station.x : b.x) - 3;
    const start = V3(left(xb) + 1, xb.y + 0.3);
    rails.push([start, V3(start.x, xb.y + 1.5), V3(margin, xb.y + 1.5), V3(margin, rowY(b, 0)), V3(left(b) - 0.3, rowY(b, 0))]);
  }
  group.add(lines('rail', rails, 0.95));
  // Orange arcs: the memory z to every decoder layer's cross-attention keys and values.
  const mem = B('enc.1.ffn.ln') || B('enc.0.ffn.ln'), arcs = [];
  if (mem) {
    for (const b of layout.blocks.values()) {
      if (!/^dec\.\d\.cross\.W_[kv]$/.test(b.id)) continue;
      const a = V3(right(mem), mem.y - mem.rows / 2), t = V3(b.x + b.w / 2, bottom(b) - 0.3);
      arcs.push(bezier(a, V3((a.x + t.x) / 2, Math.max(a.y, t.y) + 12, 40), t, 40));
    }
  }
  group.add(lines('arc', arcs, 0.95));
  // The teal tie: E at the bottom, Eᵀ at the top, through the gap between the towers.
  const ET = B('out.ET');
  if (E && ET) {
    const gx = right(E) + 6;
    group.add(lines('tie', [[V3(right(E), E.y - 0.5), V3(gx, E.y - 0.5), V3(gx, ET.y - ET.rows / 2), V3(left(ET) - 0.3, ET.y - ET.rows / 2)]], 0.95));
  }
  // The yellow loop: each chosen token back to the decoder's input, one row down.
  const tok = B('out.tokens'), tid = B('tgt.ids');
  if (tok && tid) {
    const outX = layout.bounds.maxX + 6, y0 = bottom(tid) - 4;
    group.add(lines('loop', [[V3(right(tok) + 0.3, rowY(tok, 0)), V3(outX, rowY(tok, 0)), V3(outX, y0), V3(tid.x + tid.w / 2, y0), V3(tid.x + tid.w / 2, bottom(tid) - 0.3)]], 0.95));
  }
  return group;
}

export { colX };
