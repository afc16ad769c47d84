"""Windows and heads for a phone's parts (scene/views.py `_parts`): the views a stage too small for a step's
subject frames instead of the whole.

A block wider than `WIDE` columns (the FFN's 128 hidden units, the 65 pieces of the output layer) cannot
draw its columns at a legible size on a phone, whatever part of the subject is framed. Its part is then a
*window*: a run of its columns, framed with room for the names of its rows (and of those columns, where they
stand for tokens), the cells outside the run not drawn (static/stage/windowed.js). A block of pieces whose
rows the step marks (the piece written, the reference piece) is windowed where those marks are, for each
input, by the page (static/local/windows.js, from the constants scene/structure.py sends); any other, from
its first column, here. Each window says on the stage which columns it shows (`label`), and names the rows
whose marked piece it leaves out. Steps 6–9's parts frame the worked head, which the page chooses too."""

from __future__ import annotations

from scene.document import Block, View
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
