// The layout's box tree measured and placed over the blocks present: scene/boxes.py `measure` and `place`
// and scene/layout.py `lay_out`, operation for operation (the tree and its numbers come from the patch,
// scene/ablated.py layout_document), so an ablated graph's blocks land where the server puts them.

function fresh(node) {
  return { ...node, w: node.w ?? 0, h: 0, missing: false, items: (node.items ?? []).map(fresh) };
}

const total = (xs) => xs.reduce((a, x) => a + x, 0);
const largest = (xs) => (xs.length ? Math.max(...xs) : 0);

function measure(node, dims) {
  if (node.t === "s") return node;
  if (node.t === "b") {
    if (!dims.has(node.id) && node.w) {
      node.t = "s"; // held room
      return node;
    }
    node.missing = !dims.has(node.id);
    [node.w, node.h] = dims.get(node.id) ?? [0, 0];
    return node;
  }
  for (const item of node.items) measure(item, dims);
  const items = node.items.filter((i) => !i.missing);
  node.missing = !items.some((i) => i.t !== "s");
  const gaps = Math.max(0, items.length - 1) * node.gap;
  if (node.t === "h") {
    node.w = total(items.map((i) => i.w)) + gaps;
    node.h = largest(items.map((i) => i.h));
  } else {
    node.w = largest(items.map((i) => i.w));
    node.h = total(items.map((i) => i.h)) + gaps;
  }
  return node;
}

// pos: block id → [x, top y], in the order placed (the reading order)
function place(node, x, y, pos) {
  if (node.missing || node.t === "s") return;
  if (node.t === "b") {
    pos.set(node.id, [x, y + node.h]);
    return;
  }
  let cur = node.t === "h" ? x : y;
  for (const item of node.items) {
    if (item.missing) continue;
    if (node.t === "h") {
      place(item, cur, y + (node.align === "top" ? node.h - item.h : 0), pos);
      cur += item.w + node.gap;
    } else {
      place(item, x + (item.right ? node.w - item.w : 0), cur, pos);
      cur += item.h + node.gap;
    }
  }
}

function blockIds(node) {
  if (node.t === "b") return node.missing ? [] : [node.id];
  return node.items.flatMap(blockIds);
}

function stackTowers(towers, inner, pos, byId, layout) {
  const stations = [];
  for (const [side, st] of towers) {
    const width = Math.max(...st.map((s) => s.node.w));
    const x0 = side === layout.left ? -inner - width : inner;
    let y = layout.start_y;
    for (const s of st) {
      if (s.node.missing) continue;
      place(s.node, x0, y, pos);
      stations.push({ id: s.id, title: s.title, tower: side, x: x0, y: y + s.node.h, w: s.node.w, h: s.node.h });
      for (const id of blockIds(s.node)) Object.assign(byId.get(id), { station: s.id, tower: side });
      y += s.node.h + layout.station_gap;
    }
  }
  return stations;
}

// Places every block (its x, y, station and tower); returns the stations and the reading order.
export function layOut(blocks, layout) {
  const byId = new Map(blocks.map((b) => [b.id, b]));
  const dims = new Map(blocks.map((b) => [b.id, [b.w, b.rows]]));
  const towers = Object.entries(layout.towers)
    .map(([side, st]) => [side, st.map((s) => ({ ...s, node: measure(fresh(s.tree), dims) }))]);
  const sh = layout.shared;
  const shared = measure(fresh(sh.tree), dims);
  const pos = new Map();
  place(shared, -shared.w / 2, sh.top - shared.h, pos);
  const inner = (dims.get(sh.block) ?? [sh.default_width])[0] / 2 + layout.tower_gap;
  const stations = stackTowers(towers, inner, pos, byId, layout);
  let spareX = inner; // anything no station names, in a row under E
  for (const b of blocks) {
    if (b.id === sh.block || b.id === sh.other) b.station = sh.station;
    if (!pos.has(b.id)) {
      pos.set(b.id, [spareX, layout.spare_y]);
      spareX += b.w + layout.h_gap;
      b.station = b.station || sh.station;
    }
    [b.x, b.y] = pos.get(b.id);
  }
  const e = byId.get(sh.block);
  if (e) stations.push({ id: sh.station, title: sh.title, tower: sh.station, x: e.x, y: e.y, w: e.w, h: e.rows });
  return { stations, order: new Map([...pos.keys()].map((id, k) => [id, k])) };
}
