// Layout, computed apart from rendering (STYLE: llm-viz): shapes in, placed blocks out.
// Pure functions, no three.js: every tensor id of the trace and every parameter is mapped to a block
// {id, rows, cols, x, y, ...} in world units (one cell = 1), blocks in the z = 0 plane, y up.
// (x, y) is a block's top-left corner; cell (r, c) has its centre at
// (x + colX(c) + 0.5, y − r − 0.5), where colX adds a gap after every head slice.

export const HEAD_GAP = 1;      // gap between head slices of Q, K, V, W^Q… (cells)
export const V_GAP = 3;         // vertical gap between stacked blocks: room for a label
export const H_GAP = 4;         // horizontal gap between blocks side by side
export const STATION_GAP = 14;  // between sub-layers of a tower: room for the station's title

const N_HEADS = 4, D_K = 8;

// What kind of cells a block has; the renderer picks colours and heights from this.
export function kindOf(id, op) {
  if (/\.weights$|^out\.probs$/.test(id)) return 'bar';
  if (/\.masked$/.test(id)) return 'masked';
  if (/\.hidden$/.test(id)) return 'relu';
  if (id === 'dec.mask') return 'bool';
  if (/\.ids$|^out\.tokens$/.test(id)) return 'ids';
  return 'value';
}

// Drawn rows and columns of a tensor of the given shape (1-D vectors of parameters lie as rows
// under their matrices; ids and chosen tokens stand as columns beside the token rows).
export function drawnShape(id, shape) {
  if (shape.length === 0) return [1, 1];
  if (shape.length === 1) return /\.ids$|^out\.tokens$/.test(id) ? [shape[0], 1] : [1, shape[0]];
  if (id.endsWith('.W_2')) return [shape[1], shape[0]];  // W₂ drawn transposed: its columns line up with the hidden units
  return [shape[0], shape[1]];
}

const headed = id => /\.(q|k|v|concat|W_q|W_k|W_v|b_q|b_k|b_v)$/.test(id);

export function colX(block, c) {
  return c + (block.gapEvery ? Math.floor(c / block.gapEvery) * HEAD_GAP : 0);
}

// The inverse of colX: which column a local x falls in (−1 in a gap or outside).
export function colAt(block, lx) {
  if (lx < 0 || lx >= block.w) return -1;
  if (!block.gapEvery) return Math.floor(lx);
  const period = block.gapEvery + HEAD_GAP;
  const slice = Math.floor(lx / period), within = lx - slice * period;
  if (within >= block.gapEvery) return -1;
  const c = slice * block.gapEvery + Math.floor(within);
  return c < block.cols ? c : -1;
}

// ---- a tiny box layout: blocks, horizontal and vertical stacks ----
const B = (id) => ({ t: 'b', id });
const H = (items, opts = {}) => ({ t: 'h', items: items.filter(Boolean), gap: H_GAP, align: 'top', ...opts });
const V = (items, opts = {}) => ({ t: 'v', items: items.filter(Boolean), gap: V_GAP, align: 'left', ...opts }); // items bottom → top

function measure(node, blocks) {
  if (node.t === 'b') {
    const b = blocks.get(node.id);
    if (!b) { node.w = node.h = 0; node.missing = true; return node; }
    node.w = b.w; node.h = b.rows; return node;
  }
  node.items.forEach(i => measure(i, blocks));
  const items = node.items.filter(i => !i.missing);
  node.missing = items.length === 0;
  const gaps = Math.max(0, items.length - 1) * node.gap;
  if (node.t === 'h') { node.w = items.reduce((s, i) => s + i.w, 0) + gaps; node.h = Math.max(0, ...items.map(i => i.h)); }
  else { node.h = items.reduce((s, i) => s + i.h, 0) + gaps; node.w = Math.max(0, ...items.map(i => i.w)); }
  return node;
}

// Places a measured node with its bottom-left corner at (x, y).
function place(node, x, y, blocks, order) {
  if (node.missing) return;
  if (node.t === 'b') { const b = blocks.get(node.id); b.x = x; b.y = y + node.h; order.push(b.id); return; }
  let cur = node.t === 'h' ? x : y;
  for (const i of node.items) {
    if (i.missing) continue;
    if (node.t === 'h') {
      const iy = node.align === 'top' ? y + node.h - i.h : node.align === 'center' ? y + (node.h - i.h) / 2 : y;
      place(i, cur, iy, blocks, order); cur += i.w + node.gap;
    } else {
      const ix = node.align === 'center' ? x + (node.w - i.w) / 2 : node.align === 'right' ? x + node.w - i.w : x;
      place(i, ix, cur, blocks, order); cur += i.h + node.gap;
    }
  }
}

// ---- stations (SPEC §5.1: inside a station, bottom to top, in the order the data flows) ----
function attention(p, masked) {
  const proj = (m) => V([B(`${p}.W_${m}`), B(`${p}.b_${m}`), B(`${p}.${m}`)]);
  const heads = [];
  for (let i = 0; i < N_HEADS; i++) {
    heads.push(H([B(`${p}.h${i}.scores`), masked && B(`${p}.h${i}.masked`), B(`${p}.h${i}.weights`), B(`${p}.h${i}.out`)], { gap: 2 }));
  }
  return V([
    H([proj('q'), proj('k'), proj('v')]),
    H(heads, { gap: 6 }),
    H([B(`${p}.concat`), V([B(`${p}.W_o`), B(`${p}.b_o`), B(`${p}.proj`)])], { gap: 6 }),
    H([B(`${p}.sum`), V([B(`${p}.ln.gamma`), B(`${p}.ln.beta`), B(`${p}.ln`)])], { gap: 6 }),
  ]);
}

function feedForward(p) {
  return V([
    V([B(`${p}.W_1`), B(`${p}.b_1`), B(`${p}.hidden_pre`), B(`${p}.hidden`), B(`${p}.W_2`)]),
    H([V([B(`${p}.b_2`), B(`${p}.out`)]), B(`${p}.sum`), V([B(`${p}.ln.gamma`), B(`${p}.ln.beta`), B(`${p}.ln`)])], { gap: 6 }),
  ]);
}

function embedding(side) {
  return H([
    B(`${side}.ids`), B(`${side}.emb`), V([side === 'src' ? B('const.sqrt_d') : B('const.neg_inf'), B(`${side}.scaled`)]),
    B(`${side}.pe`), B(`${side}.x0`), side === 'tgt' && B('dec.mask'),
  ], { gap: 3 });
}

// Titles of the stations, for the overview.
export const STATIONS = [];

function tower(side, nLayers) {
  const st = [[`${side}.emb`, embedding(side), side === 'src' ? 'Input embedding' : 'Output embedding (shifted right)']];
  for (let l = 0; l < nLayers; l++) {
    if (side === 'src') {
      st.push([`enc.${l}.self`, attention(`enc.${l}.self`, false), `Encoder ${l + 1} · self-attention`]);
      st.push([`enc.${l}.ffn`, feedForward(`enc.${l}.ffn`), `Encoder ${l + 1} · feed-forward`]);
    } else {
      st.push([`dec.${l}.self`, attention(`dec.${l}.self`, true), `Decoder ${l + 1} · masked self-attention`]);
      st.push([`dec.${l}.cross`, attention(`dec.${l}.cross`, false), `Decoder ${l + 1} · cross-attention`]);
      st.push([`dec.${l}.ffn`, feedForward(`dec.${l}.ffn`), `Decoder ${l + 1} · feed-forward`]);
    }
  }
  if (side === 'tgt') st.push(['out', V([B('out.ET'), H([B('out.logits'), B('out.tokens')], { gap: 2 }), B('out.probs')]), 'Linear (Eᵀ) and softmax']);
  return st;
}

/**
 * tensors: Map id → {shape, op} for every node and parameter. Returns
 * {blocks: Map id → block, order: [ids in layout order], stations: [{id, title, x, y, w, h}], bounds}.
 * Slice nodes (P.q.h0 …) are not blocks of their own: they are the head slices of P.q/P.k/P.v,
 * recorded in `aliases` (id → {of, colOffset}).
 */
export function computeLayout(tensors) {
  const blocks = new Map(), aliases = new Map();
  for (const [id, t] of tensors) {
    const m = /^(.*)\.([qkv])\.h(\d)$/.exec(id);
    if (m && t.op === 'Slice') { aliases.set(id, { of: `${m[1]}.${m[2]}`, colOffset: Number(m[3]) * D_K, cols: D_K }); continue; }
    const [rows, cols] = drawnShape(id, t.shape);
    const b = { id, rows, cols, shape: t.shape, op: t.op || 'Parameter', param: !t.op, kind: kindOf(id, t.op),
                transposed: id.endsWith('.W_2'), gapEvery: headed(id) && cols === N_HEADS * D_K ? D_K : 0, x: 0, y: 0 };
    b.w = b.gapEvery ? cols + (cols / b.gapEvery - 1) * HEAD_GAP : cols;
    blocks.set(id, b);
  }
  const nLayers = [...tensors.keys()].some(id => id.startsWith('enc.1.')) ? 2 : 1;
  const order = [], stations = [];
  const towers = { src: tower('src', nLayers), tgt: tower('tgt', nLayers) };
  const measured = {};
  for (const side of ['src', 'tgt']) {
    measured[side] = towers[side].map(([id, node, title]) => ({ id, node: measure(node, blocks), title }));
  }
  const towerW = side => Math.max(...measured[side].map(s => s.node.w));
  const E = blocks.get('E');
  const eW = E ? E.w : 32, eH = E ? E.rows : 65;
  const gapMid = eW / 2 + 24;
  const base = 8;  // towers start above E's top edge (E is below y = 0)
  if (E) { E.x = -eW / 2; E.y = -4; order.push('E'); }
  for (const side of ['src', 'tgt']) {
    const w = towerW(side);
    let y = base;
    for (const s of measured[side]) {
      const x0 = side === 'src' ? -gapMid - w + (w - s.node.w) / 2 : gapMid + (w - s.node.w) / 2;
      place(s.node, x0, y, blocks, order);
      stations.push({ id: s.id, title: s.title, side, x: x0, y: y + s.node.h, w: s.node.w, h: s.node.h });
      y += s.node.h + STATION_GAP;
    }
  }
  // Anything the recipe did not name (a future tensor) still gets drawn, in a row under E.
  let spareX = -eW / 2 + eW + 10;
  for (const b of blocks.values()) {
    if (!order.includes(b.id)) { b.x = spareX; b.y = -base - eH; spareX += b.w + H_GAP; order.push(b.id); }
  }
  const bounds = { minX: Infinity, maxX: -Infinity, minY: Infinity, maxY: -Infinity };
  for (const b of blocks.values()) {
    bounds.minX = Math.min(bounds.minX, b.x); bounds.maxX = Math.max(bounds.maxX, b.x + b.w);
    bounds.minY = Math.min(bounds.minY, b.y - b.rows); bounds.maxY = Math.max(bounds.maxY, b.y);
  }
  return { blocks, order, stations, aliases, bounds };
}

// Bounding rectangle of the blocks whose ids match any of the globs.
export function boundsOf(layout, globs) {
  const re = globs.map(globToRegExp);
  const r = { minX: Infinity, maxX: -Infinity, minY: Infinity, maxY: -Infinity, n: 0 };
  for (const b of layout.blocks.values()) {
    if (!re.some(g => g.test(b.id))) continue;
    r.minX = Math.min(r.minX, b.x); r.maxX = Math.max(r.maxX, b.x + b.w);
    r.minY = Math.min(r.minY, b.y - b.rows); r.maxY = Math.max(r.maxY, b.y); r.n++;
  }
  return r.n ? r : layout.bounds;
}

export function globToRegExp(glob) {
  return new RegExp('^' + glob.replace(/[.+^${}()|\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.') + '$');
}

// Does a block id (or a Slice alias of it) match any glob?
export function matches(id, globs, layout) {
  const re = globs.map(globToRegExp);
  if (re.some(g => g.test(id))) return true;
  if (layout) for (const [a, al] of layout.aliases) if (al.of === id && re.some(g => g.test(a))) return true;
  return false;
}
