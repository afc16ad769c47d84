// What the inspector says about one cell: name, shape, row/column (with the token), value, and per
// kind of tensor the extra the article needs (raw E entry, row mean and std, masked or not).

const fmt = v => (v === -Infinity ? '−∞' : Number.isInteger(v) ? String(v) : v.toPrecision(5));

function where(id) {
  let m;
  if ((m = /^(enc|dec)\.(\d)\.(self|cross|ffn)/.exec(id))) {
    const part = { self: m[1] === 'dec' ? 'masked self-attention' : 'self-attention', cross: 'cross-attention', ffn: 'feed-forward' }[m[3]];
    return `${m[1] === 'enc' ? 'encoder' : 'decoder'} layer ${+m[2] + 1}, ${part}`;
  }
  if (id.startsWith('src.')) return 'source embedding';
  if (id.startsWith('tgt.')) return 'target embedding (shifted right)';
  if (id.startsWith('out.')) return 'output layer';
  return 'shared';
}

const NAMES = [
  [/^E$/, 'E, the shared embedding table (vocabulary × d_model)'],
  [/\.ids$/, 'token ids'], [/\.emb$/, 'E[token], the looked-up rows'], [/\.scaled$/, 'E[token]·√32'],
  [/\.pe$/, 'positional encoding PE'], [/\.x0$/, 'x⁽⁰⁾ = E[token]·√32 + PE'], [/^dec\.mask$/, 'causal mask (row i reads columns 0…i)'],
  [/^const\.sqrt_d$/, '√d_model'], [/^const\.neg_inf$/, '−∞ (fills masked scores)'],
  [/\.W_([qkvo])$/, m => `W^${m[1].toUpperCase()} (d_in × d_out)`], [/\.b_([qkvo])$/, m => `bias b^${m[1].toUpperCase()}`],
  [/\.([qkv])$/, m => `${m[1].toUpperCase()} = X·W^${m[1].toUpperCase()} + b`], [/\.([qkv])\.h(\d)$/, m => `${m[1].toUpperCase()}, head ${+m[2] + 1} slice`],
  [/\.h(\d)\.scores$/, m => `scores QKᵀ/√8, head ${+m[1] + 1}`], [/\.h(\d)\.masked$/, m => `masked scores, head ${+m[1] + 1}`],
  [/\.h(\d)\.weights$/, m => `attention weights softmax(·), head ${+m[1] + 1}`], [/\.h(\d)\.out$/, m => `head ${+m[1] + 1} output = weights·V`],
  [/\.concat$/, 'Concat(head₁ … head₄)'], [/\.proj$/, 'Concat·W^O + b^O'], [/\.sum$/, 'residual sum X + Sublayer(X)'],
  [/\.ln$/, 'LayerNorm(X + Sublayer(X))'], [/\.ln\.gamma$/, 'LayerNorm gain γ'], [/\.ln\.beta$/, 'LayerNorm bias β'],
  [/\.W_1$/, 'W₁ (32 × 128)'], [/\.b_1$/, 'bias b₁'], [/\.hidden_pre$/, 'x·W₁ + b₁'], [/\.hidden$/, 'ReLU(x·W₁ + b₁)'],
  [/\.W_2$/, 'W₂ (128 × 32), drawn transposed'], [/\.b_2$/, 'bias b₂'], [/\.ffn\.out$/, 'FFN(x) = ReLU(·)·W₂ + b₂'],
  [/^out\.ET$/, 'Eᵀ, the tied output projection'], [/^out\.logits$/, 'logits = h·Eᵀ'], [/^out\.probs$/, 'output probabilities softmax(logits)'],
  [/^out\.tokens$/, 'chosen token (argmax)'],
];

export function describe(id) {
  for (const [re, text] of NAMES) { const m = re.exec(id); if (m) return typeof text === 'function' ? text(m) : text; }
  return id;
}

/** cell: {id, shape, row, col, value, ...} → {lines: [..], text}. */
export function inspectorLines(cell, ctx) {
  const { id, shape, row, col, value } = cell;
  const lines = [];
  lines.push(`${describe(id)} — ${where(id)}`);
  lines.push(`${id}  shape ${shape.length ? shape.join(' × ') : 'scalar'}`);
  const tok = ctx.rowToken(id, row, shape);
  const colTok = ctx.colToken(id, col, shape);
  const pos = shape.length === 0 ? '' : shape.length === 1 ? `index ${shape[0] === 1 ? 0 : Math.max(row, col)}` : `row ${row}, column ${col}`;
  lines.push(`${pos}${tok ? ` (token “${tok}”)` : ''}${colTok ? ` → column token “${colTok}”` : ''}`);
  lines.push(`value ${fmt(value)}${cell.tokenName ? ` = “${cell.tokenName}”` : ''}`);
  if (cell.raw !== undefined) lines.push(`raw E entry ${fmt(cell.raw)} × √32 = ${fmt(cell.raw * Math.sqrt(32))}`);
  if (cell.rowMean !== undefined) lines.push(`row mean ${fmt(cell.rowMean)}, std ${fmt(cell.rowStd)}`);
  if (cell.masked !== undefined) lines.push(cell.masked ? 'masked (a later position): −∞ before the softmax' : 'not masked');
  if (cell.alias) lines.push(`also ${cell.alias}`);
  if (cell.note) lines.push(cell.note);
  return lines;
}

export function rowStats(data, cols, row) {
  let s = 0, s2 = 0;
  for (let c = 0; c < cols; c++) s += data[row * cols + c];
  const mean = s / cols;
  for (let c = 0; c < cols; c++) { const d = data[row * cols + c] - mean; s2 += d * d; }
  return { mean, std: Math.sqrt(s2 / cols) };  // population std, as LayerNorm uses
}
