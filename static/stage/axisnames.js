// Token names on the stage's axes: every row and column of the step's subject that stands for a token
// (the scene's row_axis / col_axis) named with the scene's word for it (scene.axes). Blocks side by side
// at the same rows share one band of row names, at its left (else its right); blocks stacked over the
// same columns share one band of column names, turned upright, under the band (else over it), and under
// (or over) the blocks stacked with it over those columns that the step does not show (a head's scores). A band
// slides away from whatever it would cover (labels, overlays, switches, the subject's cells, the names
// placed before it) and staggers its names into tiers where the pitch is narrower than a line; a band
// that cannot be placed whole inside the stage is not shown. Text never shrinks below `minPx`.
import { colX } from "./cells.js";
import { overlaps, shownRect, textWidth as measured } from "./screenboxes.js";

export const NAME_FONT = '500 {px}px "Inter", "Helvetica Neue", Arial, sans-serif';
export const textWidth = (text, size) => measured(text, size, NAME_FONT);
const LINE = 1.0,
  PAD = 2,
  GAP = 3,
  MAX_PX = 13,
  MAX_TIERS = 3,
  SLIDES = 8;

/** Words with their position (counted from 1) where a word repeats: "nine·1 hundred ninety nine·4 …", so
 *  that each row and column a reader reads is one token (a 10-token input names four rows "nine"). */
export function positioned(words, compact = false) {
  const count = new Map();
  for (const w of words) count.set(w, (count.get(w) || 0) + 1);
  const at = compact ? subscript : (n) => `·${n}`;
  return words.map((w, i) => (count.get(w) > 1 ? `${w}${at(i + 1)}` : w));
}

/** The position in subscript digits ("nine₄"): a band too narrow for "nine·4" (two tiers beside a wide block). */
const subscript = (n) => String(n).replace(/\d/g, (d) => String.fromCharCode(0x2080 + Number(d)));

const named = new WeakMap(); // an axis's words → with their positions, and compact
function positionedOnce(words) {
  if (!named.has(words)) named.set(words, [positioned(words), positioned(words, true)]);
  return named.get(words);
}

/** The scene's labels with each column of token labels (those that share an x, read top down) named by
 *  position where a token repeats in it; the other labels as they are. */
export function withPositions(labels) {
  const columns = new Map();
  labels.forEach((l, i) => {
    if (l.role !== "token") return;
    if (!columns.has(l.x)) columns.set(l.x, []);
    columns.get(l.x).push(i);
  });
  const text = labels.map((l) => l.text);
  for (const idx of columns.values()) {
    idx.sort((a, b) => labels[b].y - labels[a].y);
    positioned(idx.map((i) => labels[i].text)).forEach((t, k) => (text[idx[k]] = t));
  }
  return labels.map((l, i) => (text[i] === l.text ? l : { ...l, text: text[i] }));
}

/** The subject's bands: blocks with a token axis grouped by the rows (or the columns) they share; rows
 *  beside an ids column of the subject already carry its token labels (scene/labels.py), as do rows whose
 *  ids column (`rows_named_by`) the step lights (`lit`). Blocks in `windowed` show only the columns
 *  `cols` (windowed.js): their band names those, beside them. */
export function bands(scene, blocks, { windowed = new Set(), cols = null, lit = new Set() } = {}) {
  const out = new Map(),
    rowKey = (b) => `${b.station}|${b.y}|${b.rows}`;
  const idsRows = new Set(blocks.filter((b) => b.kind === "ids").map(rowKey)); // named by the scene's token labels
  for (const b of blocks) if (b.rows_named_by && lit.has(b.rows_named_by)) idsRows.add(rowKey(b));
  for (const b of blocks) {
    if (b.param || b.kind === "ids") continue;
    for (const [axis, name, key] of [
      ["row", b.row_axis, rowKey(b)],
      ["col", b.col_axis, `${b.station}|${b.x}|${b.cols}|${b.gap_every}`],
    ]) {
      const [words, compact] = (name && scene.axes[name] && positionedOnce(scene.axes[name])) || [];
      if (!words || (axis === "row" && idsRows.has(key))) continue;
      const k = `${axis}|${name}|${key}`;
      if (!out.has(k))
        out.set(k, { axis, axisName: name, words, compact, bare: scene.axes[name], blocks: [], window: null });
      out.get(k).blocks.push(b);
    }
  }
  for (const band of out.values()) {
    band.window = band.blocks.every((b) => windowed.has(b.id)) ? cols : null;
    // a column band's names stand past the blocks stacked over the same columns of the same axis (a head's
    // scores under its weights), not over their cells
    const under = band.blocks[0].cols_named_under;
    band.mates =
      band.axis === "col" && under
        ? scene.blocks.filter((m) => m.cols_named_under === under && !band.blocks.includes(m))
        : [];
  }
  return [...out.values()];
}

/** Each name of a band along its axis: index, word and its centre in px (rows: y; columns: x). */
function centres(band, px, headGap) {
  const b = band.blocks[0],
    n = band.axis === "row" ? b.rows : b.cols;
  const [lo, hi] = band.axis === "col" && band.window ? band.window : [0, n - 1];
  return Array.from({ length: hi - lo + 1 }, (_, k) => {
    const i = lo + k;
    const p = band.axis === "row" ? px(b.x, b.y - i - 0.5) : px(b.x + colX(b, i, headGap) + 0.5, b.y - b.rows / 2);
    return { index: i, word: band.words[i] ?? "", at: band.axis === "row" ? p[1] : p[0] };
  });
}

/** The band's names at distance d from its edge on `side`: one rectangle each (stage px). */
function layout(band, items, side, d, size) {
  const line = size * LINE,
    pitch = items.length > 1 ? Math.abs(items[1].at - items[0].at) : line * 2;
  const tiers = Math.max(1, Math.ceil(line / Math.max(pitch, 1) - 1e-6)); // neighbours in one tier only touch
  const long = Math.max(...items.map((t) => t.len)) + 2 * PAD,
    e = band.edge;
  return {
    tiers,
    rects: items.map((t, i) => {
      const from = d + (i % tiers) * (long + GAP),
        len = t.len + 2 * PAD;
      const [a0, a1] = [t.at - line / 2, t.at + line / 2];
      if (band.axis === "row")
        return side === "before"
          ? { x0: e.x0 - from - len, x1: e.x0 - from, y0: a0, y1: a1 }
          : { x0: e.x1 + from, x1: e.x1 + from + len, y0: a0, y1: a1 };
      return side === "before"
        ? { x0: a0, x1: a1, y0: e.y1 + from, y1: e.y1 + from + len }
        : { x0: a0, x1: a1, y0: e.y0 - from - len, y1: e.y0 - from };
    }),
  };
}

/** How far the band must move past what a set of rectangles covers (the farthest one's far side). */
function pastObstacles(band, side, hits) {
  const e = band.edge;
  const far = hits.map((r) =>
    band.axis === "row"
      ? side === "before"
        ? e.x0 - r.x0
        : r.x1 - e.x1
      : side === "before"
        ? r.y1 - e.y1
        : e.y0 - r.y0,
  );
  return Math.max(...far) + GAP;
}

/** A band placed on the first side where it fits whole: {side, size, tiers, names[{index, word, rect}]}, or null. */
export function placeBand(band, px, headGap, obstacles, W, H, minPx, walls = []) {
  band.edge = [...band.blocks, ...(band.mates || [])]
    .map((b) => shownRect(px, b, band.window, headGap))
    .reduce((a, r) => ({
      x0: Math.min(a.x0, r.x0),
      y0: Math.min(a.y0, r.y0),
      x1: Math.max(a.x1, r.x1),
      y1: Math.max(a.y1, r.y1),
    }));
  const items = centres(band, px, headGap);
  if (items.length < 1) return null;
  const pitch = items.length > 1 ? Math.abs(items[1].at - items[0].at) : MAX_PX * LINE;
  const best = Math.max(minPx, Math.min(MAX_PX, Math.floor(pitch / LINE)));
  // why it could not be placed (for the tests' table)
  band.why = [`${best} px, pitch ${Math.round(pitch * 10) / 10} px`];
  // the largest size that fits, never below minPx: a smaller line can fit between two obstacles; then the
  // positions of repeated tokens in subscript, narrower; and where even those do not fit (two tiers of a 10-token
  // input beside the FFN's 128 columns), the bare words rather than no names at all
  for (const words of band.compact ? [band.words, band.compact, band.bare] : [band.words]) {
    items.forEach((t) => (t.word = words[t.index] ?? ""));
    for (let size = best; size >= minPx; size--) {
      const placed = placeAt(band, items, size, obstacles, W, H, walls);
      if (placed) return placed;
    }
  }
  return null;
}

/** The band's names at one size on the first side where they fit whole, sliding past what they cover but
 *  never onto or past a wall (another block's cells: names beyond it would stand apart from their columns). */
function placeAt(band, items, size, obstacles, W, H, walls = []) {
  for (const t of items) t.len = Math.ceil(textWidth(t.word, size));
  for (const side of ["before", "after"]) {
    let d = GAP;
    for (let k = 0; k < SLIDES; k++) {
      const { rects, tiers } = layout(band, items, side, d, size);
      const why =
        tiers > MAX_TIERS
          ? `${tiers} tiers`
          : rects.some((r) => r.x0 < 0 || r.y0 < 0 || r.x1 > W || r.y1 > H)
            ? "past the edge"
            : "";
      const walled = walls.some((o) => rects.some((r) => overlaps(r, o)));
      if (why || walled) {
        band.why.push(`${size} px ${side} at ${Math.round(d)} px: ${why || "another block"}`);
        break;
      }
      const hits = obstacles.filter((o) => rects.some((r) => overlaps(r, o)));
      if (!hits.length)
        return { side, size, tiers, names: items.map((t, i) => ({ index: t.index, word: t.word, rect: rects[i] })) };
      d = Math.max(d + 1, pastObstacles(band, side, hits));
    }
  }
  return null;
}
