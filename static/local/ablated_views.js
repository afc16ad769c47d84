// A step's view and a phone's parts from the blocks it frames: scene/views.py (`_framing`, `_name_room`,
// `_angles`, `_phone_parts`, `_parts`, `_candidates`, `bounds`) and scene/windows.py (`wide`,
// `first_windows`, `window_part`), operation for operation, with the measures the patch sends (`m`).

import { fill, windowPart } from "./windows.js";

/** A window's label: its columns, 1-based, of the block's n (scene/windows.py _label, the structure's template). */
const windowLabel = (c0, c1, n, m) => fill(m.window_label, { first: c0 + 1, last: c1 + 1, count: n });

export const rect = (b) => [b.x, b.x + b.w, b.y - b.rows, b.y];
export const centre = (box) => [(box[0] + box[1]) / 2, (box[2] + box[3]) / 2, 0.0];

export function boxOf(rects) {
  return [Math.min(...rects.map((r) => r[0])), Math.max(...rects.map((r) => r[1])),
    Math.min(...rects.map((r) => r[2])), Math.max(...rects.map((r) => r[3]))];
}

export const bounds = (blocks) => boxOf(blocks.map(rect));

const viewOf = (box, azimuth, elevation, m) => ({ box, target: centre(box), azimuth, elevation, margin: m.view_margin });

// the output blocks of the heads these blocks belong to, not among them (their label line: name and switch)
function headLines(blocks, heads) {
  if (!heads) return [];
  const have = new Set(blocks.map((b) => b.id));
  const out = new Map();
  for (const b of blocks) {
    const o = b.param ? undefined : heads.byId.get(heads.out[b.id]);
    if (o !== undefined && !have.has(o.id)) out.set(o.id, o);
  }
  return [...out.values()];
}

function nameRoom(blocks, box, share, m) {
  const named = blocks.filter((b) => !b.param && b.kind !== "ids");
  const side = Math.max(box[1] - box[0], box[3] - box[2]);
  const low = named.length ? Math.min(...named.map((b) => b.y - b.rows)) : 0.0;
  const rows = named.some((b) => b.row_axis);
  const cols = named.some((b) => b.y - b.rows === low && b.col_axis);
  const rowRoom = share * side;
  const colRoom = (share !== m.name_room ? 2 * share : share) * side;
  return [box[0] - (rows ? rowRoom : 0.0), box[1], box[2] - (cols ? colRoom : 0.0), box[3]];
}

export function angles(blocks, angle, m) {
  const towers = new Set(blocks.map((b) => b.tower));
  const az = angle ? angle[0] : m.azimuth[towers.size === 1 ? [...towers][0] : m.mixed_tower];
  return [az, angle ? angle[1] : m.elevation];
}

// blocks' view: their box with room for the labels and the token names; `heads` {out, byId} brings each
// head's label line (a part is framed without it)
export function framing(blocks, angle, share, m, heads) {
  const box = boxOf([...blocks, ...headLines(blocks, heads)].map(rect));
  box[3] = box[3] + m.label_room;
  return viewOf(nameRoom(blocks, box, share, m), ...angles(blocks, angle, m), m);
}

function firstOf(acts) {
  let first = acts[0];
  for (const b of acts) if (b.x < first.x || (b.x === first.x && -b.y < -first.y)) first = b;
  return first;
}

function candidates(blocks) {
  const acts = blocks.filter((b) => !b.param && b.kind !== "ids" && (b.row_axis || b.col_axis));
  if (!acts.length) return [];
  const first = firstOf(acts);
  const column = blocks.filter((b) => b.x < first.x + first.w && first.x < b.x + b.w);
  const mine = column.filter((b) => acts.includes(b));
  let one = mine.find((b) => b.kind === "bar");
  if (one === undefined) {
    one = mine[0];
    for (const b of mine) if (b.y > one.y) one = b;
  }
  return [column.map((b) => b.id), [one.id]];
}

const same = (a, b) => a.length === b.length && a.every((x, k) => x === b[k]);

function partsOf(blocks) {
  const out = [];
  let last = blocks.map((b) => b.id);
  for (const part of candidates(blocks)) {
    if (!same(part, last)) out.push(part);
    last = part;
  }
  return out;
}

function wide(blocks, m) {
  return new Set(blocks.map((b) => `${b.x} ${b.cols}`)).size === 1 && blocks[0].cols > m.wide
    && !blocks.some((b) => b.gap_every);
}

export function phoneParts(blocks, angle, lit, m) {
  const byId = new Map(blocks.map((b) => [b.id, b]));
  const parts = partsOf(blocks).map((p) => ({ blocks: p,
    view: framing(p.map((i) => byId.get(i)), angle, m.part_name_room, m) }));
  for (const ids of candidates(blocks)) {
    const mine = ids.map((i) => byId.get(i)).filter((b) => !b.param);
    if (mine.length && wide(mine, m)) {
      const at = angles(mine, angle, m), n = mine[0].cols;
      return [...parts, ...m.widths.filter((w) => w < n).map((w) => windowPart(mine, 0, w - 1, ...at, windowLabel(0, w - 1, n, m), lit, m))];
    }
  }
  return parts;
}
