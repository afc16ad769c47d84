"""Labels: every block's and station's name on the stage, and the token names beside the id columns and
the chosen tokens."""

from __future__ import annotations

from model import ids
from scene.document import Block, Label, Scene
from scene.measures import LABEL_LIFT, STATION_GAP

HEAD_NAME_SIZE = 1.3  # world units; the other block labels are 1.5
UP_MARGIN = 0.3  # world units a label keeps clear of the block above it (seen a little from below, it nears it)
TOKEN_SIZE, TOKEN_GAP = 0.85, 0.6  # a token label's line height, and its gap from the block's side


def headroom(b: Block, blocks: list[Block]) -> float:
    """The height between a block's label line (LABEL_LIFT over its top edge) and the cells of the nearest
    block above whose columns it shares, where the label may grow; 0 where nothing is above it."""
    line = b.y + LABEL_LIFT
    over = [a.y - a.rows - line for a in blocks if a.x < b.x + b.w and b.x < a.x + a.w and a.y - a.rows > line - 1e-9]
    return round(min(over) - UP_MARGIN, 6) if over else 0.0


def labels(scene: Scene) -> list[Label]:
    """Block and station labels; the token labels are `token_labels`. A block's label grows on screen (a
    minimum size in px, static/stage/labels.js) no taller than the room under the block above it."""
    out = []
    by_tower: dict[str, list[Block]] = {}
    for b in scene.blocks:
        by_tower.setdefault(b.tower, []).append(b)
    for b in scene.blocks:
        small = b.rows == 1 and b.cols == 1
        name = None if b.op == "Parameter" else ids.parse(b.id)
        head = name is not None and name.head is not None
        # a head's name ("head 3") shares its output block's line with the head's switch (scene/switches.py):
        # a little smaller than the other labels, so that both fit side by side on a desktop's smallest views
        size = 1.1 if small else HEAD_NAME_SIZE if head and b.id == ids.head_id(name.station, name.head, "out") else 1.5
        out.append(
            Label(
                b.label,
                b.x,
                b.y + LABEL_LIFT,
                size,
                "param" if b.param else "block",
                room=b.w + 1.7 if head else max(b.w + 3.5, 8),
                part=b.part,
                up=headroom(b, by_tower[b.tower]),
            )
        )
    for s in scene.stations:
        if s.id == "shared":
            continue
        left = s.tower == "src"
        out.append(
            Label(
                s.title,
                s.x + s.w if left else s.x,
                s.y + STATION_GAP / 2,
                6.5,
                "station",
                anchor="right" if left else "left",
                baseline="middle",
                room=s.w,
            )
        )
    return out


def name_rows(blocks: list[Block]) -> None:
    """Marks each block whose rows an ids column beside it names (`rows_named_by`): an input's ids carry
    their rows' words as token labels (`token_labels`), so the rows beside them at the same height are named
    (the chosen tokens' column names what each row writes, not what it stands for: not those)."""
    labelled = {
        (b.station, b.y, b.rows, b.row_axis): b.id
        for b in blocks
        if b.value_axis == "vocab" and b.op != "ArgMax" and b.row_axis
    }
    for b in blocks:
        if b.kind != "ids" and not b.param:
            b.rows_named_by = labelled.get((b.station, b.y, b.rows, b.row_axis))


def name_columns(blocks: list[Block]) -> None:
    """Marks each block stacked with others over the same token columns (a head's scores, masked scores and
    weights: same station, place, width and column axis) with the lowest of them (`cols_named_under`): the
    column names of any of them stand under that one, not over the cells of the others
    (static/stage/axisnames.js), and a view of any keeps room under it (scene/views.py)."""
    stacks: dict[tuple, list[Block]] = {}
    for b in blocks:
        if not b.param and b.kind != "ids" and b.col_axis:
            stacks.setdefault((b.station, b.x, b.cols, b.gap_every, b.col_axis), []).append(b)
    for stack in stacks.values():
        if len(stack) > 1:
            low = min(stack, key=lambda b: b.y - b.rows)
            for b in stack:
                b.cols_named_under = low.id


def token_blocks(scene: Scene) -> list[dict]:
    """The blocks token labels name, in the scene's order: each id column (its rows' words: the tokens of the
    axis its rows stand for) and each column of chosen tokens (`chosen`: the words of its own ids)."""
    return [
        {"block": b.id, "chosen": b.op == "ArgMax", "axis": b.row_axis or ""}
        for b in scene.blocks
        if b.value_axis == "vocab"
    ]


def token_label(text: str, x: float, y: float, chosen: bool) -> Label:
    """A token's name, centred on its row: at the right of a column of chosen tokens, at the left of an id
    column (the browser's labels are copies of these: scene/structure.py)."""
    if chosen:
        return Label(text, x, y, TOKEN_SIZE, "token", baseline="middle")
    return Label(text, x, y, TOKEN_SIZE, "token", anchor="right", baseline="middle")
