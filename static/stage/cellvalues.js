// Values printed on the cells: a weight or probability (a bar) as .40, any other value at the decimals
// that give its block's largest |value| two significant digits (a block of scores up to 5.0: -1.4, .3, 0;
// cells of one block align like a table's column), a −∞ (a masked score) as nothing. A block's numbers show only
// where its cells are large enough on screen for its widest number at `MIN_PX` or more; they stand at
// each cell's centre on the blocks' plane, so that they keep the grid of a table where tall bars lean.
import { colX } from "./cells.js";
import { formatNumber } from "../js/format.js";
import { textWidth } from "./axisnames.js";

export const MIN_PX = 9; // printed values are never smaller: under it, the inspector says the value
export const CONDENSED = 0.82; // numbers are drawn this much narrower than the font (readouts.js: scaleX)
const MAX_PX = 13,
  FILL = 1; // the widest number may fill the cell's width (the gap between cells keeps its neighbours apart)
// the type may be this share of the cell's side: its digits (about 0.73 of the type) stay well inside the cell
const HEIGHT = 0.9;

/** A weight (0…1) at two decimals, the leading zero dropped: .40 (and 1 for one of .995 or more: 1.00 would be
 *  wider than the others, and a small "1.0" loses its point and reads as 10). */
export function formatWeight(v) {
  if (v >= 0.995) return "1";
  const s = formatNumber(v, "fixed2");
  return s.startsWith("0.") ? s.slice(1) : s === "-0.00" ? ".00" : s;
}

/** Decimals that give a block's largest |value| two significant digits (5.0 → 1, 0.35 → 2, 12 → 0). */
export function blockDecimals(values) {
  let m = 0;
  for (const v of values) if (Number.isFinite(v)) m = Math.max(m, Math.abs(v));
  if (!m) return 0;
  let e = Math.floor(Math.log10(m));
  if (Math.round(m / 10 ** (e - 1)) >= 100) e += 1; // 9.96 rounds to 10 at two significant digits
  return Math.max(0, 1 - e);
}

/** A value at a block's decimals, the leading zero dropped, a hyphen for the minus (narrower: cells are
 *  small), 0 for what rounds to zero: -1.4, -.35, 12, 0. */
export function formatValue(v, decimals) {
  const s = formatNumber(v, `fixed${Math.min(decimals, 9)}`);
  return Number(s) === 0 ? "0" : s.replace(/^(-?)0\./, "$1.");
}

/** The text printed on a cell of a block of this kind ('' for −∞). */
export function cellText(kind, v, decimals) {
  if (v === null || v === undefined || !Number.isFinite(v)) return "";
  return kind === "bar" ? formatWeight(v) : formatValue(v, decimals);
}

const made = new WeakMap(); // values (one array per block and trace, readouts.js) → {kind, texts, sample}

/** A block's texts and its widest one, made once for each array of values and kind. */
function blockTexts(kind, values) {
  const had = made.get(values);
  if (had?.kind === kind) return had;
  const decimals = blockDecimals(values),
    texts = Array.from(values, (v) => cellText(kind, v, decimals));
  const sample = texts.reduce((a, t) => (t.length > a.length ? t : a), "");
  made.set(values, { kind, texts, sample });
  return made.get(values);
}

/** A block's texts, the font size they fit at (0: they do not fit) and each cell's centre on screen. */
export function blockValues(stage, b, values, px) {
  if (b.kind === "ids" || b.kind === "bool") return null;
  const gap = stage.scene.cell.head_gap,
    cell = stage.scene.cell;
  const at = (r, c) => px(b.x + colX(b, c, gap) + 0.5, b.y - r - 0.5);
  const r0 = Math.floor(b.rows / 2),
    c0 = Math.floor(b.cols / 2),
    p = at(r0, c0);
  const pc = b.cols > 1 ? at(r0, c0 + (c0 + 1 < b.cols ? 1 : -1)) : null,
    pr = b.rows > 1 ? at(r0 + (r0 + 1 < b.rows ? 1 : -1), c0) : null;
  const pitchX = pc ? Math.abs(pc[0] - p[0]) : pr ? Math.abs(pr[1] - p[1]) : 0,
    pitchY = pr ? Math.abs(pr[1] - p[1]) : pitchX;
  const side = Math.min(pitchX, pitchY) * cell.footprint;
  if (side * HEIGHT < MIN_PX) return { size: 0 }; // too small for any number: no texts made (step 21 has 61 000 cells)
  const { texts, sample } = blockTexts(stage.comparing && !b.param ? "value" : b.kind, values);
  const size = Math.min(
    MAX_PX,
    Math.floor(side * HEIGHT),
    Math.floor((10 * side * FILL) / Math.max(1, CONDENSED * textWidth(sample, 10))),
  );
  if (size < MIN_PX) return { size: 0 };
  const cells = [];
  for (let r = 0; r < b.rows; r++) {
    for (let c = 0; c < b.cols; c++) {
      const k = r * b.cols + c,
        t = texts[k];
      if (t) {
        const q = at(r, c);
        cells.push({ r, c, text: t, x: q[0], y: q[1] });
      }
    }
  }
  return { size, cells };
}
