// The structure of an ablated graph in the browser: the intact structure of its shape and the patch Python
// emits for that shape (scene/ablated.py ablation_patch_document) give the structure the server builds for
// any set of parts switched off, exactly (tests/test_local_ablation.py). The rule is scene/ablated.py's
// `ablated_structure`, step by step: each part off adds its two blocks and rewires one input; the layout's
// box tree is placed again over the blocks present (ablated_layout.js); the stations, labels, switches,
// connectors, bounds, overview and every step's view and parts are drawn again from the places with the
// scene's own formulas (scene/labels.py, switches.py, connectors.py; views.py and windows.py:
// ablated_views.js); a step's subject, lit blocks and animation targets are the fully ablated ones, less
// the blocks absent. Nothing here knows the model: ids, trees and measures all come from the patch.

import { layOut } from "./ablated_layout.js";
import { bounds, centre, framing, phoneParts } from "./ablated_views.js";

const rowY = (b, r) => b.y - r - 0.5;

// numpy's round(x, 3): x · 1000 rounded half to even, / 1000
function round3(x) {
  const y = x * 1000.0, f = Math.floor(y), d = y - f;
  const r = d > 0.5 ? f + 1 : d < 0.5 ? f : f % 2 === 0 ? f : f + 1;
  return r / 1000.0;
}

// connectors.py _bezier: n + 1 points from a through control c to e, as numpy computes them
function bezier(a, c, e, n) {
  const step = 1.0 / n;
  return Array.from({ length: n + 1 }, (_, i) => {
    const t = i === n ? 1.0 : i * step, u = 1 - t;
    return [0, 1, 2].map((k) => round3(u * u * a[k] + 2 * u * t * c[k] + t * t * e[k]));
  });
}

const LINES = {
  rail([x, b], z, scene) {
    const st = scene.stations.find((s) => s.id === b.station);
    const margin = (st ? st.x : b.x) - 3;
    const start = [x.x + 1, x.y + 0.3, z];
    return [start, [start[0], x.y + 1.5, z], [margin, x.y + 1.5, z], [margin, rowY(b, 0), z],
      [b.x - 0.3, rowY(b, 0), z]];
  },
  arc([mem, w], z) {
    const a = [mem.x + mem.w, mem.y - mem.rows / 2, z];
    const b = [w.x + w.w / 2, w.y - w.rows - 0.3, z];
    return bezier(a, [(a[0] + b[0]) / 2, Math.max(a[1], b[1]) + 12, 40], b, 40);
  },
  tie([e, et], z) {
    const gx = e.x + e.w + 6;
    return [[e.x + e.w, e.y - 0.5, z], [gx, e.y - 0.5, z], [gx, et.y - et.rows / 2, z],
      [et.x - 0.3, et.y - et.rows / 2, z]];
  },
  loop([argmax, ids], z, scene) {
    const outX = scene.bounds[1] + 6, y0 = ids.y - ids.rows - 4, mid = ids.x + ids.w / 2;
    return [[argmax.x + argmax.w + 0.3, rowY(argmax, 0), z], [outX, rowY(argmax, 0), z], [outX, y0, z],
      [mid, y0, z], [mid, ids.y - ids.rows - 0.3, z]];
  },
};

function connectorsOf(scene, byId, patch) {
  const z = patch.measures.connector_z;
  return Object.entries(patch.connectors).map(([kind, anchors]) => ({
    kind, color: scene.palette.connectors[kind],
    lines: anchors.filter((a) => a.every((i) => byId.has(i)))
      .map((a) => LINES[kind](a.map((i) => byId.get(i)), z, scene)),
  }));
}

// scene/labels.py: a label per block over its top edge, then one per station (but the shared one) over it
function labelsOf(scene, structure, patch, chosen) {
  const m = patch.measures, n = structure.blocks.length;
  const templates = new Map(structure.blocks.map((b, k) => [b.id, structure.labels[k]]));
  for (const p of chosen) patch.parts[p].blocks.forEach((b, k) => templates.set(b.id, patch.parts[p].labels[k]));
  const fields = fieldsOf(structure.labels);  // a patch's label has no place: its fields in a label's order
  const out = scene.blocks.map((b) => Object.assign({ ...fields }, templates.get(b.id), { x: b.x, y: b.y + m.label_lift }));
  const titled = scene.stations.filter((s) => s.id !== patch.layout.shared.station);
  structure.labels.slice(n).forEach((label, k) => {
    const s = titled[k];
    out.push({ ...label, x: label.anchor === "right" ? s.x + s.w : s.x, y: s.y + m.title_lift, room: s.w });
  });
  return out;
}

// scene/switches.py: a head's switch over its output block's right edge, a sub-layer's beside its title
function switchesOf(structure, off, byId, stations, m) {
  const byStation = new Map(stations.map((s) => [s.id, s]));
  return structure.switches.map((sw) => {
    if (sw.block !== null) {
      const b = byId.get(sw.block);
      return { ...sw, off: off.has(sw.id), x: b.x + b.w, y: b.y + m.head_switch_lift };
    }
    const st = byStation.get(sw.station), left = sw.anchor === "right";
    return { ...sw, off: off.has(sw.id), x: left ? st.x - m.title_side : st.x + st.w + m.title_side,
      y: st.y + m.title_lift };
  });
}

const present = (value, byId) => (Array.isArray(value) && value.every((i) => typeof i === "string")
  ? value.filter((i) => byId.has(i)) : value);

function stepOf(s, info, scene, byId, patch) {
  const m = patch.measures;
  const subject = present(info.subject ?? s.subject, byId), lit = present(info.lit ?? s.lit, byId);
  const animation = Object.fromEntries(Object.entries(info.animation ?? s.animation)
    .map(([k, v]) => [k, present(v, byId)]));
  const blocks = subject.map((i) => byId.get(i)), angle = info.angle;
  let view;
  if (info.overview || !subject.length) {
    const o = scene.overview;
    view = { ...o, azimuth: angle ? angle[0] : o.azimuth, elevation: angle ? angle[1] : o.elevation };
  } else {
    view = framing(blocks, angle, m.name_room, m, { out: patch.head_out, byId });
  }
  const parts = info.overview ? [] : phoneParts(blocks, angle, lit.map((i) => byId.get(i)), m);
  return { ...s, subject, lit, view, animation, parts };
}

// the fields of a structure's items (its first), in their order, unset: what an item of a patch is written
// over so that its fields come in the document's order (a scene is compared as JSON, key order included)
const fieldsOf = (items) => Object.fromEntries(Object.keys(items[0] ?? {}).map((k) => [k, undefined]));

function blocksOf(structure, patch, chosen) {
  const blocks = structure.blocks.map((b) => ({ ...b, inputs: [...b.inputs] }));
  // a patch's block with its fields in a structure block's order (the place among them, as Block's fields are)
  const fields = fieldsOf(structure.blocks);
  for (const p of chosen) {
    blocks.push(...patch.parts[p].blocks.map((b) => Object.assign({ ...fields }, b, { inputs: [...b.inputs], x: 0, y: 0 })));
  }
  const byId = new Map(blocks.map((b) => [b.id, b]));
  for (const p of chosen) for (const [id, k, now] of patch.parts[p].rewire) byId.get(id).inputs[k] = now;
  return { blocks, byId };
}

// The structure (nothing switched off) of a shape with `parts` switched off, from the shape's patch.
export function ablatedStructure(structure, patch, parts) {
  const off = new Set(parts);
  const unknown = [...off].filter((p) => !Object.hasOwn(patch.parts, p));
  if (unknown.length) throw new Error(`not parts of this model: ${unknown.join(", ")}`);
  const chosen = Object.keys(patch.parts).filter((p) => off.has(p));
  const { blocks, byId } = blocksOf(structure, patch, chosen);
  const { stations, order } = layOut(blocks, patch.layout);
  const rank = (b) => order.get(b.id) ?? order.size;
  blocks.sort((a, b) => rank(a) - rank(b));
  const box = bounds(blocks);
  const scene = { ...structure, blocks, stations, bounds: box, overview: { ...structure.overview, box, target: centre(box) },
    cells: blocks.reduce((a, b) => a + b.rows * b.cols, 0) };
  scene.connectors = connectorsOf(scene, byId, patch);
  scene.labels = labelsOf(scene, structure, patch, chosen);
  scene.steps = structure.steps.map((s, k) => stepOf(s, patch.steps[k], scene, byId, patch));
  scene.switches = switchesOf(structure, off, byId, stations, patch.measures);
  return scene;
}
