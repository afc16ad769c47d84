"""Windows and heads for a phone's parts (scene/views.py `_parts`): the views a stage too small for a step's
subject frames instead of the whole.

A block wider than `WIDE` columns (the FFN's 128 hidden units, the 65 pieces of the output layer) cannot
draw its columns at a legible size on a phone, whatever part of the subject is framed. Its part is then a
*window*: a run of its columns, framed with room for the names of its rows (and of those columns, where they
stand for tokens), the cells outside the run not drawn (static/stage/windowed.js). A block of pieces whose
rows the step marks (the piece written, the reference piece) is windowed where those marks are, for each
input; any other, from its first column. The structure says only which blocks a window keeps and which first
columns (`first_windows`); the page frames every window (static/compute/windows.js, from the constants
scene/structure.py sends). Each window says on the stage which columns it shows, and names the rows whose
marked piece it leaves out. Steps 6–9's parts frame the worked head, which the page chooses too."""

from __future__ import annotations

from scene.document import Block

WIDE = 32  # columns: a block wider than this is framed by windows where it is framed as a part
WIDTHS = (32, 24, 16)  # the windows offered from a block's first column, largest first (the stage takes the
# largest that draws its cells at camera.part_cell_px: tour.js stepView)
MARKED_MIN = 16  # a window around marked columns: at least this wide, at most WIDE
LABEL_SHARE = 0.16  # a window keeps this share of its larger side over its label's room: its own label's line,
# clear of the overlays at the stage's top (static/stage/windowed.js places it)
VALUE_NAME_ROOM = 0.5  # step 9's parts over V: the share of a part's name room kept under V (`worked_part`)
WINDOW_LABEL = "columns {first}–{last} of {count}"  # what a window says it shows (the page fills it in:
LEFT_OUT = " · row {row}'s {word}: column {column}"  # scene/structure.py sends both)


def wide(blocks: list[Block]) -> bool:
    """Blocks stacked over the same columns, more of them than a phone draws legibly, no head gaps."""
    return len({(b.x, b.cols) for b in blocks}) == 1 and blocks[0].cols > WIDE and not any(b.gap_every for b in blocks)


def first_windows(blocks: list[Block], azimuth: float, elevation: float) -> list[dict]:
    """Windows from the blocks' first column, largest first, each as the columns it keeps (`first`) and the
    angles it is seen from: the page frames every window part (static/compute/windows.js windowPart), these
    and those around an input's marks alike, so the framing is written once."""
    n = blocks[0].cols
    return [
        {"blocks": [b.id for b in blocks], "window": {"first": w, "azimuth": azimuth, "elevation": elevation}}
        for w in WIDTHS
        if w < n
    ]
