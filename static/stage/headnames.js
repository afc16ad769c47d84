// Head names on the stage: every head of the step's subject that is in view carries its name. A head's own
// label ("head 3", the scene's, on its output block's line beside its switch) names it where the label is
// drawn; where the view leaves that label out (a phone frames a head's weights alone, or its neighbours cut
// at the stage's edge) the head's name is printed over its blocks' top edge (else under their bottom edge):
// the head the view frames in full where it fits over it ("decoder 2 · cross-attention · head 1"), its
// neighbours (and a framed head where the full name does not fit) short ("head 1"). Nothing
// here knows the model: the heads are the scene's head switches, and a block is a head's when it carries the
// switch's name (scene.blocks[*].name, scene.switches[*].name).
import { boxStyle, overlaps, shownRect, textWidth } from "./screenboxes.js";
import { labelRects as drawnLabels } from "./labelroom.js";

export const HEAD_FONT = '600 {px}px "Inter", "Helvetica Neue", Arial, sans-serif'; // as stage.css's .readout-head
const SIZES = [12, 11, 10, 9],
  FULL_PX = 11,
  GAP = 1, // px between a tag and what it keeps clear of (a tag may have to fit between a label and a block)
  TRIES = 8;
/** A block is in view when at least this share of its cells' rectangle lies on the stage. */
export const IN_VIEW = 0.5;

/** The share of a rectangle inside the stage (W × H). */
export function shareInside(r, W, H) {
  const a = (r.x1 - r.x0) * (r.y1 - r.y0);
  if (!(a > 0)) return 0;
  const w = Math.max(0, Math.min(r.x1, W) - Math.max(r.x0, 0)),
    h = Math.max(0, Math.min(r.y1, H) - Math.max(r.y0, 0));
  return (w * h) / a;
}

/** The heads of `blocks` in view: [{name, short, label (its scene label's index or null), rect (their cells
 *  on the stage, clipped to it), ids}]. */
export function headsInView(stage, blocks, px, cols, W, H) {
  const heads = new Map();
  for (const x of stage.switches?.buttons || []) if (x.s.kind === "head" && x.s.name) heads.set(x.s.name, x);
  const out = new Map();
  for (const b of blocks) {
    const x = b.name && heads.get(b.name);
    if (!x) continue;
    const r = shownRect(px, b, cols(b), stage.scene.cell.head_gap);
    if (shareInside(r, W, H) < IN_VIEW) continue;
    const c = { x0: Math.max(0, r.x0), y0: Math.max(0, r.y0), x1: Math.min(W, r.x1), y1: Math.min(H, r.y1) };
    const had = out.get(b.name);
    if (!had) out.set(b.name, { name: b.name, short: x.s.label, label: x.label, rect: c, ids: [b.id], rects: [c] });
    else {
      had.ids.push(b.id);
      had.rects.push(c);
      had.rect = {
        x0: Math.min(had.rect.x0, c.x0),
        y0: Math.min(had.rect.y0, c.y0),
        x1: Math.max(had.rect.x1, c.x1),
        y1: Math.max(had.rect.y1, c.y1),
      };
    }
  }
  return [...out.values()];
}

/** Whether a head's own label is drawn now, whole and on the stage, over its blocks' columns. */
function labelled(stage, head, W, H) {
  if (head.label === null || head.label === undefined || !stage.labels || !stage.decor?.visible) return false;
  const box = stage.el.getBoundingClientRect();
  const [r] = drawnLabels(stage.labels, stage.camera, stage.renderer.domElement, [head.label]);
  if (!r || r.cut) return false;
  const x0 = r.left - box.left,
    x1 = r.right - box.left,
    mid = (x0 + x1) / 2;
  const y0 = r.top - box.top,
    y1 = r.bottom - box.top;
  return x0 >= 0 && x1 <= W && y0 >= 0 && y1 <= H && mid >= head.rect.x0 && mid <= head.rect.x1;
}

/** One head's tag: over the top edge of one of its blocks (the highest first), else under their bottom edge,
 *  flush with their left (else right) side, else centred over them, moved past whatever it would cover (its
 *  own cells too), at the largest size that fits, its full name first (at 11 px or more); null where none fits. */
function placeTag(head, framed, obstacles, W, H, minPx, walls = []) {
  const e = head.rect,
    avoid = [...obstacles, ...head.rects],
    edges = [...head.rects.map((r) => ({ at: r.y0 - GAP, up: true })).sort((a, b) => a.at - b.at), { at: e.y1 + GAP }];
  for (const text of head.ids.some((id) => framed.has(id)) ? [head.name, head.short] : [head.short]) {
    // the full name at a size that reads easily, else the short one
    for (const size of SIZES.filter((s) => s >= Math.max(minPx, text === head.name ? FULL_PX : 0))) {
      const w = Math.ceil(textWidth(text, size, HEAD_FONT)) + 4,
        h = Math.ceil(size * 1.3);
      for (const x0 of new Set([e.x0, e.x1 - w, (e.x0 + e.x1 - w) / 2].map((x) => Math.max(0, Math.min(x, W - w))))) {
        const mid = x0 + w / 2;
        if (mid < e.x0 || mid > e.x1) continue; // it must stand over its own head's columns
        for (const { at: from, up } of edges) {
          const placed = slide(x0, w, h, from, up, avoid, H, walls);
          if (placed) return { text, size, rect: placed, name: head.name, ids: head.ids };
        }
      }
    }
  }
  return null;
}

/** A w × h box at x0 with its bottom (up) or top edge at `at`, moved up (or down) past what it covers, never
 *  onto or past a wall (another block's cells). */
function slide(x0, w, h, at, up, avoid, H, walls = []) {
  for (let k = 0; k < TRIES; k++) {
    const r = up ? { x0, x1: x0 + w, y0: at - h, y1: at } : { x0, x1: x0 + w, y0: at, y1: at + h };
    if (r.y0 < 0 || r.y1 > H || walls.some((o) => overlaps(r, o))) return null;
    const hits = avoid.filter((o) => overlaps(r, o));
    if (!hits.length) return r;
    at = up ? Math.min(...hits.map((o) => o.y0)) - GAP : Math.max(...hits.map((o) => o.y1)) + GAP;
  }
  return null;
}

/** The tags of the heads of the step's subject in view whose own label the view leaves out (each pushed to
 *  `obstacles`), clear of the cells of `others` too where one fits so. */
export function placeHeadTags(stage, px, cols, obstacles, W, H, minPx, others = []) {
  const blocks = (stage.step?.subject || []).map((id) => stage.blockById.get(id)).filter(Boolean),
    tags = [],
    framed = new Set(stage.tour?.framed || stage.step?.subject || []);
  for (const head of headsInView(stage, blocks, px, cols, W, H)) {
    if (labelled(stage, head, W, H)) continue;
    const tag =
      placeTag(head, framed, obstacles, W, H, minPx, others) || placeTag(head, framed, obstacles, W, H, minPx);
    if (!tag) continue;
    tags.push(tag);
    obstacles.push(tag.rect);
  }
  return tags;
}

/** A head's tag in its element (the readouts' layer). */
export function headElement(el, t) {
  const r = t.rect,
    key = [t.text, t.size, r.x0, r.y0, r.x1, r.y1].join("|");
  if (el.drawn === key) return;
  el.drawn = key;
  el.className = "readout-head";
  el.textContent = t.text;
  el.dataset.head = t.name;
  el.dataset.blocks = t.ids.join(" ");
  Object.assign(el.style, boxStyle(r, HEAD_FONT, t.size));
}

/** The tags drawn into a 2-D canvas of the stage at k device pixels per CSS px (the PNG export), as stage.css
 *  draws them. */
export function paintHeadTags(ctx, k, tags) {
  for (const t of tags) {
    ctx.save();
    ctx.font = HEAD_FONT.replace("{px}", String(t.size * k));
    ctx.fillStyle = "#e8e6e1";
    ctx.strokeStyle = "rgba(16, 18, 22, 0.9)";
    ctx.lineWidth = 3 * k;
    ctx.textAlign = "left";
    ctx.textBaseline = "middle";
    const y = ((t.rect.y0 + t.rect.y1) / 2) * k;
    ctx.strokeText(t.text, (t.rect.x0 + 2) * k, y);
    ctx.fillText(t.text, (t.rect.x0 + 2) * k, y);
    ctx.restore();
  }
}
