"""Windows and heads for a phone's parts (scene/views.py `_parts`): the views a stage too small for a step's
subject frames instead of the whole.

A block wider than `WIDE` columns (the FFN's 128 hidden units, the 65 pieces of the output layer) cannot
draw its columns at a legible size on a phone, whatever part of the subject is framed. Its part is then a
*window*: a run of its columns, framed with room for the names of its rows (and of those columns, where they
stand for tokens), the cells outside the run not drawn (static/stage/windowed.js). A block of pieces whose
rows the step marks (the piece written, the reference piece) is windowed where those marks are, for this
input (`with_windows`); any other, from its first column. Each window says on the stage which columns it
shows (`label`), and names the rows whose marked piece it leaves out.

Steps 6–9 walk the worked head's row (scene/worked.py); their parts frame that head, not the first
(`on_worked_head`), and step 9's first part is that head over a window of V: the head's own columns of V,
the value rows its weights mix (`worked_part`)."""

from __future__ import annotations

import dataclasses

import numpy as np

from model import ids
from scene.cells import col_x
from scene.document import Block, SceneStep, View
from scene.measures import LABEL_ROOM, PART_NAME_ROOM

WIDE = 32  # columns: a block wider than this is framed by windows where it is framed as a part
WIDTHS = (32, 24, 16)  # the windows offered from a block's first column, largest first (the stage takes the
# largest that draws its cells at camera.part_cell_px: tour.js stepView)
MARKED_MIN = 16  # a window around marked columns: at least this wide, at most WIDE
LABEL_SHARE = 0.16  # a window keeps this share of its larger side over its label's room: its own label's line,
# clear of the overlays at the stage's top (static/stage/windowed.js places it)
VALUE_NAME_ROOM = 0.5  # step 9's parts over V: the share of a part's name room kept under V (`worked_part`)
WINDOW_LABEL = "columns {first}–{last} of {count}"  # what a window says it shows (the browser fills it too:
LEFT_OUT = " · row {row}'s {word}: column {column}"  # scene/structure.py sends both)


def window_part(blocks: list[Block], c0: int, c1: int, azimuth: float, elevation: float, label: str,
                lit: list[Block]) -> dict:
    """A part framing columns c0..c1 (inclusive) of blocks stacked over the same columns: their rectangle
    with the labels' room above it (the blocks' and the window's) and the token names' room beside and under
    it (views._name_room's). `clip`: the blocks drawn only in those columns, these and every block the step
    lights over the same columns."""
    x0 = min(b.x for b in blocks) + c0
    x1 = min(b.x for b in blocks) + c1 + 1
    y0, y1 = min(b.y - b.rows for b in blocks), max(b.y for b in blocks) + LABEL_ROOM
    named = [b for b in blocks if not b.param and b.kind != "ids"]
    side = max(x1 - x0, y1 - y0)
    rows, cols = any(b.row_axis for b in named), any(b.col_axis for b in named)
    box = [x0 - (PART_NAME_ROOM * side if rows else 0.0), x1, y0 - (2 * PART_NAME_ROOM * side if cols else 0.0),
           y1 + LABEL_SHARE * side]
    view = View(box, [(box[0] + box[1]) / 2, (box[2] + box[3]) / 2, 0.0], azimuth, elevation)
    clip = [b.id for b in blocks] + [b.id for b in lit if (b.x, b.cols) == (blocks[0].x, blocks[0].cols)
                                     and b not in blocks]
    return {"blocks": [b.id for b in blocks], "view": view, "window": {"cols": [c0, c1], "label": label, "clip": clip}}


def _label(c0: int, c1: int, n: int) -> str:
    return WINDOW_LABEL.format(first=c0 + 1, last=c1 + 1, count=n)


def wide(blocks: list[Block]) -> bool:
    """Blocks stacked over the same columns, more of them than a phone draws legibly, no head gaps."""
    return (len({(b.x, b.cols) for b in blocks}) == 1 and blocks[0].cols > WIDE
            and not any(b.gap_every for b in blocks))


def first_windows(blocks: list[Block], azimuth: float, elevation: float, lit: list[Block]) -> list[dict]:
    """Windows from the blocks' first column, largest first."""
    n = blocks[0].cols
    return [window_part(blocks, 0, w - 1, azimuth, elevation, _label(0, w - 1, n), lit) for w in WIDTHS if w < n]


def marked_window(marked: list[int], n: int) -> tuple[int, int]:
    """The run of columns around the marks: the marked columns split where they lie farthest apart, the
    cluster that holds the most rows' marks (the later on a tie), widened to MARKED_MIN about its centre;
    a cluster wider than WIDE gives the WIDE-wide run that holds the most marks."""
    cols = sorted(set(marked))
    gaps = [cols[i + 1] - cols[i] for i in range(len(cols) - 1)]
    if gaps and max(gaps) > 1:
        cut = int(np.argmax(gaps))
        parts = [cols[:cut + 1], cols[cut + 1:]]
        a, b = (sum(marked.count(c) for c in p) for p in parts)
        cols = parts[0] if a > b else parts[1]
    lo, hi = cols[0], cols[-1]
    if hi - lo + 1 > WIDE:
        best = max(range(lo, hi - WIDE + 2), key=lambda s: (sum(s <= c < s + WIDE for c in marked), s))
        return best, best + WIDE - 1
    width = max(MARKED_MIN, hi - lo + 1)
    start = min(max(0, (lo + hi + 1 - width) // 2), n - width)
    return start, start + width - 1


def _left_out(marks: list[tuple[int, int]], c0: int, c1: int, words: list[str]) -> str:
    return "".join(LEFT_OUT.format(row=r, word=words[c] if c < len(words) else c, column=c + 1)
                   for r, c in sorted(set(marks)) if not c0 <= c <= c1)


def with_windows(steps: list[SceneStep], by_id: dict[str, Block], marked,
                 axes: dict[str, list[str]]) -> list[SceneStep]:
    """The tour's steps for this input: the windows of a step that marks cells (`marked(step)`: its (row,
    column) pairs, the pieces rung) are one per set of blocks, around the marks, in place of those from
    the blocks' first column."""
    out = []
    for s in steps:
        mine = marked(s) if s.marks and any(p.get("window") for p in s.parts) else []
        if not mine:
            out.append(s)
            continue
        parts, seen = [], set()
        for p in s.parts:
            if not p.get("window"):
                parts.append(p)
                continue
            if tuple(p["blocks"]) in seen:
                continue
            seen.add(tuple(p["blocks"]))
            blocks = [by_id[i] for i in p["blocks"]]
            n = blocks[0].cols
            c0, c1 = marked_window([c for _, c in mine], n)
            label = _label(c0, c1, n) + _left_out(mine, c0, c1, axes.get(blocks[0].col_axis or "", []))
            parts.append(window_part(blocks, c0, c1, p["view"].azimuth, p["view"].elevation, label,
                                     [by_id[i] for i in s.lit if i in by_id]))
        out.append(dataclasses.replace(s, parts=parts))
    return out


def on_worked_head(steps: list[SceneStep], by_id: dict[str, Block], worked: dict, phases) -> list[SceneStep]:
    """Steps 6–9's parts over the worked head instead of the first: each head block of the worked row's
    station taken for the same block of the worked head, the view moved by as much as the blocks."""
    if not worked:
        return steps
    station, head = worked["station"], worked["head"] - 1

    def moved(part: dict) -> dict:
        mapped = []
        for i in part["blocks"]:
            n = ids.parse(i)
            j = ids.compose(dataclasses.replace(n, head=head)) if n.station == station and n.head is not None else i
            mapped.append(j if j in by_id else i)
        dx = {by_id[j].x - by_id[i].x for i, j in zip(part["blocks"], mapped, strict=True)}
        dy = {by_id[j].y - by_id[i].y for i, j in zip(part["blocks"], mapped, strict=True)}
        if mapped == part["blocks"] or len(dx) != 1 or dy != {0}:
            return part
        d, v = dx.pop(), part["view"]
        view = View([v.box[0] + d, v.box[1] + d, v.box[2], v.box[3]], [v.target[0] + d, *v.target[1:]],
                    v.azimuth, v.elevation, v.margin)
        return {**part, "blocks": mapped, "view": view}

    def parts(s: SceneStep) -> list[dict]:
        if phases[s.animation["name"]] != "sum" or worked["v_full"] not in s.subject:
            return [moved(p) for p in s.parts]
        return value_parts(worked, by_id, (s.view.azimuth, s.view.elevation))  # step 9: V's rows in view

    return [dataclasses.replace(s, parts=parts(s)) if s.animation.get("name") in phases and s.parts else s
            for s in steps]


def worked_part(worked: dict, by_id: dict[str, Block], angles: tuple[float, float], keys: tuple[str, ...],
                values: str = "") -> dict:
    """A part of step 9 for a stage too small for its whole subject: some of the worked head's blocks (`keys`
    of `worked`) over V (`values`: "whole", or "window": the head's own columns of V, the value rows its
    weights mix, the rest of V not drawn), with room for the label line over them and the token names of
    their rows (at the left) and of the keys (under them; with V the lowest block, whose columns stand for
    no tokens, the scores' key names go under V, past its cells: half the room, `VALUE_NAME_ROOM`)."""
    head = [by_id[worked[k]] for k in keys]
    rects = [(b.x, b.x + b.w, b.y - b.rows) for b in head]
    v, (c0, cols) = by_id[worked["v_full"]], worked["v_cols"]
    if values:
        left = v.x + col_x(v.gap_every, c0) if values == "window" else v.x
        rects.append((left, left + (cols if values == "window" else v.w), v.y - v.rows))
    x0, x1, y0 = min(r[0] for r in rects), max(r[1] for r in rects), min(r[2] for r in rects)
    y1 = max(b.y for b in head) + LABEL_ROOM
    side = max(x1 - x0, y1 - y0)
    box = [x0 - PART_NAME_ROOM * side, x1, y0 - (VALUE_NAME_ROOM if values else 2) * PART_NAME_ROOM * side, y1]
    part = {"blocks": [b.id for b in head] + ([v.id] if values else []),
            "view": View(box, [(box[0] + box[1]) / 2, (box[2] + box[3]) / 2, 0.0], *angles)}
    if values == "window":
        part["window"] = {"cols": [c0, c0 + cols - 1], "label": _label(c0, c0 + cols - 1, v.cols), "clip": [v.id]}
    return part


def value_parts(worked: dict, by_id: dict[str, Block], angles: tuple[float, float]) -> list[dict]:
    """Step 9's parts, largest first: the worked head over its window of V (a phone's), over V whole (a
    desktop's: it names V's columns whole), then its weights alone over V, then the head alone and its
    weights alone (where V cannot be held at the size a part needs)."""
    head, weights = ("scores", "weights", "out"), ("scores", "weights")
    return [worked_part(worked, by_id, angles, keys, values) for keys in (head, weights)
            for values in ("window", "whole")] + [worked_part(worked, by_id, angles, head),
                                                  worked_part(worked, by_id, angles, ("weights",))]
