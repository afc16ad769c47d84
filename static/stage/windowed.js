// A window of wide blocks: on a stage too small for a step's subject, the part tour.js frames may be a run
// of its blocks' columns (scene/windows.py: a part's `window`, {cols: [c0, c1], label}). The cells outside
// the run are not drawn, nor their rings (marks.js), nor their numbers, the readouts name only the run's
// columns, and the window's label says on the stage which columns it shows. Nothing here knows what the
// columns stand for: the scene says which and what the label reads.
import { boxStyle, overlaps, textWidth } from "./screenboxes.js";

const LABEL_FONT = '600 {px}px "Inter", "Helvetica Neue", Arial, sans-serif'; // as stage.css's .readout-window
const LABEL_PX = [11, 10, 9],
  GAP = 3,
  TRIES = 8;

/** Draws only the window's columns of the given blocks (win null: every column of every block). */
export function applyWindow(stage, blocks, win) {
  const s = stage;
  if (!s.cells) return;
  for (const id of s.windowed || []) s.cells.set(id, { clip: null });
  s.windowed = win ? blocks.filter((id) => s.cells.has(id)) : [];
  s.windowCols = win ? win.cols : null; // the pointer finds no cell where none is drawn (pointer.js)
  for (const id of s.windowed) s.cells.set(id, { clip: win.cols });
  s.marks?.window(win ? new Set(s.windowed) : null, win?.cols);
  s.invalidate();
}

/** Where the window's label goes: over the window's top edge, flush with its right end, else its left,
 *  else the stage's left or right edge, moved up past whatever it would cover, at the largest size that
 *  fits (never under 9 px); null where it cannot be placed inside the stage. */
export function placeWindowLabel(text, edge, obstacles, W, H) {
  for (const size of LABEL_PX) {
    const w = Math.ceil(textWidth(text, size, LABEL_FONT)) + 4,
      h = Math.ceil(size * 1.3);
    for (const x0 of [edge.x1 - w, edge.x0, 0, W - w]) {
      let y1 = Math.min(edge.y0 - GAP, H);
      for (let k = 0; k < TRIES; k++) {
        const r = { x0: Math.max(0, Math.min(x0, W - w)), x1: 0, y0: y1 - h, y1 };
        r.x1 = r.x0 + w;
        if (r.y0 < 0) break;
        const hits = obstacles.filter((o) => overlaps(r, o));
        if (!hits.length) return { text, size, rect: r };
        y1 = Math.min(...hits.map((o) => o.y0)) - GAP;
      }
    }
  }
  return null;
}

/** The label's element, in the readouts' layer. */
export function drawWindowLabel(el, placed) {
  el.hidden = !placed;
  if (!placed) return;
  const r = placed.rect;
  if (el.textContent !== placed.text) el.textContent = placed.text;
  Object.assign(el.style, boxStyle(r, LABEL_FONT, placed.size));
}

export { LABEL_FONT };
