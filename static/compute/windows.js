// A phone's parts of the tour's steps for one input: every window part framed (`withWindows`: from a block's
// first columns, or around the marks of a step that marks cells), and steps 6–9's parts over the worked head
// (`onWorkedHead`, step 9's over V: `valueParts`). `w` is the structure document's personal.windows (the
// measures and sentences), `byId` the scene's blocks by id.

/** A template's {names} filled in. */
export const fill = (template, values) => template.replace(/\{(\w+)\}/g, (_, k) => String(values[k]));

const label = (w, c0, c1, n) => fill(w.label, { first: c0 + 1, last: c1 + 1, count: n });
const view = (box, azimuth, elevation, w) => ({
  box,
  target: [(box[0] + box[1]) / 2, (box[2] + box[3]) / 2, 0],
  azimuth,
  elevation,
  margin: w.view_margin,
});
const isFirst = (part) => part.window?.first !== undefined; // a window the structure names but does not frame
const colX = (gapEvery, c, headGap) => (gapEvery ? c + Math.floor(c / gapEvery) * headGap : c);

/** A part framing columns c0..c1 (inclusive) of blocks stacked over the same columns: their rectangle with the
 * labels' room above it and the token names' room beside and under it; `clip`: the blocks drawn only in those
 * columns, these and every block the step lights over the same columns. */
export function windowPart(blocks, c0, c1, azimuth, elevation, text, lit, w) {
  const left = Math.min(...blocks.map((b) => b.x));
  const x0 = left + c0,
    x1 = left + c1 + 1;
  const y0 = Math.min(...blocks.map((b) => b.y - b.rows)),
    y1 = Math.max(...blocks.map((b) => b.y)) + w.label_room;
  const named = blocks.filter((b) => !b.param && b.kind !== "ids");
  const side = Math.max(x1 - x0, y1 - y0);
  const rows = named.some((b) => b.row_axis),
    cols = named.some((b) => b.col_axis);
  const box = [
    x0 - (rows ? w.part_name_room * side : 0),
    x1,
    y0 - (cols ? 2 * w.part_name_room * side : 0),
    y1 + w.label_share * side,
  ];
  const clip = [
    ...blocks.map((b) => b.id),
    ...lit.filter((b) => b.x === blocks[0].x && b.cols === blocks[0].cols && !blocks.includes(b)).map((b) => b.id),
  ];
  return {
    blocks: blocks.map((b) => b.id),
    view: view(box, azimuth, elevation, w),
    window: { cols: [c0, c1], label: text, clip },
  };
}

/** The run of columns around the marks (scene/windows.py marked_window). */
export function markedWindow(marked, n, w) {
  let cols = [...new Set(marked)].sort((a, b) => a - b);
  const gaps = cols.slice(1).map((c, i) => c - cols[i]);
  if (gaps.length && Math.max(...gaps) > 1) {
    const cut = gaps.reduce((at, g, i) => (g > gaps[at] ? i : at), 0);
    const parts = [cols.slice(0, cut + 1), cols.slice(cut + 1)];
    const [a, b] = parts.map((p) => marked.filter((c) => p.includes(c)).length);
    cols = a > b ? parts[0] : parts[1];
  }
  const lo = cols[0],
    hi = cols[cols.length - 1];
  if (hi - lo + 1 > w.wide) {
    let best = lo,
      most = -1;
    for (let s = lo; s < hi - w.wide + 2; s++) {
      const held = marked.filter((c) => s <= c && c < s + w.wide).length;
      if (held >= most) [best, most] = [s, held]; // the later on a tie
    }
    return [best, best + w.wide - 1];
  }
  const width = Math.max(w.marked_min, hi - lo + 1);
  const start = Math.min(Math.max(0, Math.floor((lo + hi + 1 - width) / 2)), n - width);
  return [start, start + width - 1];
}

function leftOut(marks, c0, c1, words, w) {
  const pairs = [...new Map(marks.map(([r, c]) => [`${r} ${c}`, [r, c]])).values()].sort(
    (p, q) => p[0] - q[0] || p[1] - q[1],
  );
  return pairs
    .filter(([, c]) => !(c0 <= c && c <= c1))
    .map(([r, c]) => fill(w.left_out, { row: r + 1, word: c < words.length ? words[c] : c, column: c + 1 }))
    .join("");
}

/** The steps with their windows framed: the structure names each window's blocks and the first columns it
 * keeps (`window.first`, scene/windows.py first_windows); a step that marks cells (`marked(step)`: its (row,
 * column) pairs) gets one window around its marks instead. Windows already framed (the worked head's) stay. */
export function withWindows(steps, byId, marked, axes, w) {
  return steps.map((s) => {
    if (!s.parts.some(isFirst)) return s;
    const mine = s.marks.length ? marked(s) : [],
      lit = s.lit.filter((i) => byId.has(i)).map((i) => byId.get(i));
    const parts = [],
      seen = new Set();
    for (const p of s.parts) {
      if (!isFirst(p)) {
        parts.push(p);
        continue;
      }
      const blocks = p.blocks.map((i) => byId.get(i)),
        n = blocks[0].cols,
        { azimuth, elevation } = p.window;
      if (!mine.length) {
        const c1 = p.window.first - 1;
        parts.push(windowPart(blocks, 0, c1, azimuth, elevation, label(w, 0, c1, n), lit, w));
        continue;
      }
      const key = JSON.stringify(p.blocks);
      if (seen.has(key)) continue;
      seen.add(key);
      const [c0, c1] = markedWindow(
        mine.map(([, c]) => c),
        n,
        w,
      );
      const text = label(w, c0, c1, n) + leftOut(mine, c0, c1, axes[blocks[0].col_axis || ""] ?? [], w);
      parts.push(windowPart(blocks, c0, c1, azimuth, elevation, text, lit, w));
    }
    return { ...s, parts };
  });
}

/** Some of the worked head's blocks (`keys` of `worked`) over V, whole or its window, or not (scene/windows.py
 * worked_part). */
function workedPart(worked, byId, [azimuth, elevation], keys, values, w, headGap) {
  const head = keys.map((k) => byId.get(worked[k]));
  const rects = head.map((b) => [b.x, b.x + b.w, b.y - b.rows]);
  const v = byId.get(worked.v_full),
    [c0, cols] = worked.v_cols;
  if (values) {
    const left = values === "window" ? v.x + colX(v.gap_every, c0, headGap) : v.x;
    rects.push([left, left + (values === "window" ? cols : v.w), v.y - v.rows]);
  }
  const x0 = Math.min(...rects.map((r) => r[0])),
    x1 = Math.max(...rects.map((r) => r[1]));
  const y0 = Math.min(...rects.map((r) => r[2])),
    y1 = Math.max(...head.map((b) => b.y)) + w.label_room;
  const side = Math.max(x1 - x0, y1 - y0);
  const box = [x0 - w.part_name_room * side, x1, y0 - (values ? w.value_name_room : 2) * w.part_name_room * side, y1];
  const part = {
    blocks: [...head.map((b) => b.id), ...(values ? [v.id] : [])],
    view: view(box, azimuth, elevation, w),
  };
  if (values === "window")
    part.window = { cols: [c0, c0 + cols - 1], label: label(w, c0, c0 + cols - 1, v.cols), clip: [v.id] };
  return part;
}

/** Step 9's parts, largest first (scene/windows.py value_parts). */
function valueParts(worked, byId, angles, w, headGap) {
  const head = ["scores", "weights", "out"],
    weights = ["scores", "weights"];
  const part = (keys, values = "") => workedPart(worked, byId, angles, keys, values, w, headGap);
  return [
    part(head, "window"),
    part(head, "whole"),
    part(weights, "window"),
    part(weights, "whole"),
    part(head),
    part(["weights"]),
  ];
}

/** Steps 6–9's parts over the worked head instead of the first (scene/windows.py on_worked_head). */
export function onWorkedHead(steps, byId, worked, definition, w, headGap) {
  if (!Object.keys(worked).length) return steps;
  const head = worked.head - 1,
    counterparts = definition.counterparts,
    { phases } = definition;
  const moved = (part) => {
    const mapped = part.blocks.map((i) => {
      const j = Object.hasOwn(counterparts, i) ? counterparts[i][head] : i;
      return byId.has(j) ? j : i;
    });
    const dx = new Set(mapped.map((j, k) => byId.get(j).x - byId.get(part.blocks[k]).x));
    const dy = new Set(mapped.map((j, k) => byId.get(j).y - byId.get(part.blocks[k]).y));
    if (mapped.every((j, k) => j === part.blocks[k]) || dx.size !== 1 || dy.size !== 1 || !dy.has(0)) return part;
    const [d] = dx,
      v = part.view;
    return {
      ...part,
      blocks: mapped,
      view: {
        box: [v.box[0] + d, v.box[1] + d, v.box[2], v.box[3]],
        target: [v.target[0] + d, ...v.target.slice(1)],
        azimuth: v.azimuth,
        elevation: v.elevation,
        margin: v.margin,
      },
    };
  };
  const parts = (s) =>
    phases[s.animation.name] !== phases[definition.sweep] || !s.subject.includes(worked.v_full)
      ? s.parts.map(moved)
      : valueParts(worked, byId, [s.view.azimuth, s.view.elevation], w, headGap);
  return steps.map((s) =>
    Object.hasOwn(phases, s.animation.name ?? "") && s.parts.length ? { ...s, parts: parts(s) } : s,
  );
}
