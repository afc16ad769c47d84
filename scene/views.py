"""The tour on the stage: each step's subject (its globs expanded against the scene's blocks), the
blocks it lights, its camera view and its animation's targets; and the rule that fits a view to the
screen (`fit_distance`, which both renderers apply)."""

from __future__ import annotations

import fnmatch
import functools
import math
import re

import numpy as np

from article.tour import TourStep
from model import ids
from model.transformer import Config
from scene import windows
from scene.document import Block, Scene, SceneStep, View
from scene.measures import AZIMUTH, ELEVATION, FIT_EXTRA, LABEL_ROOM, NAME_ROOM, PART_NAME_ROOM
from scene.tensors import Tensor


def rect(b: Block) -> list[float]:
    return [b.x, b.x + b.w, b.y - b.rows, b.y]


def bounds(blocks: list[Block]) -> list[float]:
    rs = np.array([rect(b) for b in blocks])
    return [float(rs[:, 0].min()), float(rs[:, 1].max()), float(rs[:, 2].min()), float(rs[:, 3].max())]


def centre(box: list[float]) -> list[float]:
    return [(box[0] + box[1]) / 2, (box[2] + box[3]) / 2, 0.0]


def expand(globs: list[str], scene: Scene, cfg: Config, names: tuple | None = None) -> list[str]:
    """Block ids matching the globs ({last} is the last layer); a head slice stands for its block."""
    names = names or (tuple(b.id for b in scene.blocks), tuple((s.id, s.of) for s in scene.slices))
    out: dict[str, None] = {}
    for g in globs:
        out.update(dict.fromkeys(_matching(g.replace("{last}", str(cfg.n_layers - 1)), names)))
    return list(out)


@functools.lru_cache(maxsize=4096)  # the names depend on the model's shape, not on the input
def _matching(glob: str, names: tuple[tuple[str, ...], tuple[tuple[str, str], ...]]) -> tuple[str, ...]:
    match = re.compile(fnmatch.translate(glob)).match
    blocks, aliases = names
    return tuple(dict.fromkeys([i for i in blocks if match(i)] + [of for a, of in aliases if match(a)]))


def scene_step(
    s: TourStep, scene: Scene, by_id: dict[str, Block], tensors: dict[str, Tensor], cfg: Config, names: tuple
) -> SceneStep:
    """A step of the tour on the stage: its subject and the blocks lit, its camera view (the subject's
    box with room for the labels, seen from its tower's side) and its animation's targets."""
    subject = expand(s.subject, scene, cfg, names)
    lit = subject + [i for i in expand(s.also, scene, cfg, names) if i not in subject]
    if s.view == "overview" or not subject:
        view = scene.overview
        if s.angle:
            view = View(scene.overview.box, scene.overview.target, s.angle[0], s.angle[1], scene.overview.margin)
    else:
        view = _framing([by_id[i] for i in subject], s, by_id=by_id)
    # a part is framed without its head's label line: where the stage frames parts (a phone's) a head's
    # name and switch do not fit side by side, and the switches table serves (static/stage/switches.js)
    parts = [] if s.view == "overview" else _phone_parts([by_id[i] for i in subject], s, [by_id[i] for i in lit])
    anim = ANIMATIONS.get(s.animation)
    if anim is None:
        raise ValueError(f"step {s.step}: unknown animation {s.animation!r}; known: {sorted(ANIMATIONS)}")
    marks = [m for m in s.marks if m["block"] in by_id and m["columns"] in tensors]
    overlay = {"name": s.overlay, "block": subject[0]} if s.overlay and subject else None
    return SceneStep(
        s.step, s.title, subject, lit, view, {"name": s.animation, **anim(scene, tensors, cfg)}, marks, overlay, parts
    )


def _framing(blocks: list[Block], s: TourStep, name_room: float = NAME_ROOM, by_id: dict | None = None) -> View:
    """The view of some blocks: their box with room for the labels and the token names (a share of its larger
    side: a part, zoomed closer, keeps more), seen from their tower's side (or the step's angle). A head's
    blocks bring their head's label line (`_head_lines`)."""
    rs = np.array([rect(b) for b in blocks + _head_lines(blocks, by_id or {})])
    box = [float(rs[:, 0].min()), float(rs[:, 1].max()), float(rs[:, 2].min()), float(rs[:, 3].max()) + LABEL_ROOM]
    box = _name_room(blocks, box, name_room)
    return View(box, centre(box), *_angles(blocks, s))


def _angles(blocks: list[Block], s: TourStep) -> tuple[float, float]:
    """The azimuth and elevation blocks are seen from: their tower's side, or the step's angle."""
    towers = {b.tower for b in blocks}
    az = s.angle[0] if s.angle else AZIMUTH[towers.pop() if len(towers) == 1 else "shared"]
    return az, s.angle[1] if s.angle else ELEVATION


def _phone_parts(blocks: list[Block], s: TourStep, lit: list[Block]) -> list[dict]:
    """The parts of a subject (`_parts`), each with its view; then, where a part's blocks are too wide for a
    phone to draw legibly, windows of its columns (scene/windows.py)."""
    by_id = {b.id: b for b in blocks}
    parts = [{"blocks": p, "view": _framing([by_id[i] for i in p], s, PART_NAME_ROOM)} for p in _parts(blocks)]
    for ids_ in _candidates(blocks):  # the first column's windows, else its weights' (or last block's)
        mine = [by_id[i] for i in ids_ if not by_id[i].param]
        if mine and windows.wide(mine):
            return parts + windows.first_windows(mine, *_angles(mine, s))
    return parts


def _head_lines(blocks: list[Block], by_id: dict[str, Block]) -> list[Block]:
    """The output blocks of the heads some blocks belong to, not among them: a head's name ("head 4") and
    its switch stand on its output block's label line (scene/labels.py, scene/switches.py), so a view of a
    head's scores or weights that stopped at their own labels would leave the head unnamed and its switch
    under the key hints. The output block lies right above the weights and is the
    head's widest, so the switch at its right edge is in view too."""
    have, out = {b.id for b in blocks}, {}
    for b in blocks:
        n = None if b.param else ids.parse(b.id)
        if n is None or n.head is None:
            continue
        o = by_id.get(ids.head_id(n.station, n.head, "out"))
        if o is not None and o.id not in have:
            out[o.id] = o
    return list(out.values())


def _parts(blocks: list[Block]) -> list[list[str]]:
    """Smaller parts of a subject, for a stage too small to draw the whole at a legible size (the stage takes
    the largest whose cells are at least `camera.part_cell_px`): the first column of blocks (the blocks over
    the leftmost activation's columns: one head of four, the first of a row of blocks side by side), then
    that column's weights (or its last block). Each differs from the one before it; none are the whole."""
    out, last = [], [b.id for b in blocks]
    for part in _candidates(blocks):
        if part != last:
            out.append(part)
            last = part
    return out


def _candidates(blocks: list[Block]) -> list[list[str]]:
    """The first column of blocks and its weights (or its last block), whole or not: `_parts`."""
    acts = [b for b in blocks if not b.param and b.kind != "ids" and (b.row_axis or b.col_axis)]
    if not acts:
        return []
    first = min(acts, key=lambda b: (b.x, -b.y))
    column = [b for b in blocks if b.x < first.x + first.w and first.x < b.x + b.w]
    mine = [b for b in column if b in acts]
    one = next((b for b in mine if b.kind == "bar"), max(mine, key=lambda b: b.y))
    return [[b.id for b in column], [one.id]]


def _name_room(blocks: list[Block], box: list[float], share: float = NAME_ROOM) -> list[float]:
    """The box grown for the token names of the subject's rows (at its left) and columns (under it): a share
    of its larger side, so that the names fit at any zoom the box is fitted at (static/stage/axisnames.js).
    A part (framed closer) keeps twice its share under it: its column names go past the label of the block
    under it. Column names stand under the blocks that carry them: where the subject's lowest block carries
    none (step 9's V under the heads), they stand inside the box, and it keeps no room under it."""
    named = [b for b in blocks if not b.param and b.kind != "ids"]
    side = max(box[1] - box[0], box[3] - box[2])
    low = min((b.y - b.rows for b in named), default=0.0)
    rows = any(b.row_axis for b in named)
    cols = any(b.col_axis for b in named if b.y - b.rows == low)
    row_room, col_room = share * side, (2 * share if share != NAME_ROOM else share) * side
    return [box[0] - (row_room if rows else 0.0), box[1], box[2] - (col_room if cols else 0.0), box[3]]


def _station_nodes(scene: Scene, station: str, op: str) -> list[str]:
    return [b.id for b in scene.blocks if b.station == station and b.op == op]


def _first_station(scene: Scene, stack: str, part: str) -> str | None:
    return next(
        (s.id for s in scene.stations if ids.parse(s.id).stack == stack and ids.parse(s.id).sublayer == part), None
    )


def _one_cell(scene: Scene, tensors: dict[str, Tensor], cfg: Config) -> dict:
    """Step 6: one cell of Q = a row of X against a column of W^Q, plus that entry of b^Q. Which row and
    column is the input's own (the worked row's query, scene/worked.py); row 0, column 0 here."""
    st = _first_station(scene, "enc", "self")
    q = tensors.get(ids.join(st, "q"))
    if q is None:
        return {}
    return {
        "x": q.inputs[0],
        "w": q.inputs[1],
        "b": q.inputs[2] if len(q.inputs) > 2 else None,
        "out": q.id,
        "row": 0,
        "col": 0,
    }


def _sweep(scene: Scene, tensors: dict[str, Tensor], cfg: Config) -> dict:
    """Step 9: each head's softmax row sweeps down while its output fills row by row; then the worked row
    stays framed (`rects`, the input's own: scene/worked.py)."""
    st = _first_station(scene, "enc", "self")
    pairs = [
        [t.inputs[0], t.id]
        for t in tensors.values()
        if t.op == "MatMul" and tensors[t.inputs[0]].op == "Softmax" and ids.parse(t.id).station == st
    ]
    return {"pairs": pairs, "rects": []}


def _residual(scene: Scene, tensors: dict[str, Tensor], cfg: Config) -> dict:
    st = _first_station(scene, "enc", "self")
    ln = ids.join(st, "ln")
    return {"sum": ids.join(st, "sum"), "ln": ln if ln in tensors else None}


def _mask(scene: Scene, tensors: dict[str, Tensor], cfg: Config) -> dict:
    st = _first_station(scene, "dec", "self")
    masked = _station_nodes(scene, st, "Where")
    return {"blocks": masked + sorted({tensors[m].inputs[0] for m in masked})}


def _arcs(scene: Scene, tensors: dict[str, Tensor], cfg: Config) -> dict:
    return {"blocks": [b.id for b in scene.blocks if b.op == "Softmax" and ids.parse(b.station).sublayer == "cross"]}


def _loop(scene: Scene, tensors: dict[str, Tensor], cfg: Config) -> dict:
    return {"blocks": [b.id for b in scene.blocks if b.tower == "tgt" and not b.param and b.row_axis == "target"]}


def _dropout(scene: Scene, tensors: dict[str, Tensor], cfg: Config) -> dict:
    st = _first_station(scene, "enc", "self")
    return {"block": ids.join(st, "proj")}


def _parameters(scene: Scene, tensors: dict[str, Tensor], cfg: Config) -> dict:
    return {"blocks": [b.id for b in scene.blocks if b.param]}


ANIMATIONS = {
    "none": lambda scene, tensors, cfg: {},
    "one-cell": _one_cell,
    "sweep": _sweep,
    # steps 7 and 8 walk the worked row's scores and their scale (static/stage/worked.js; its row: scene/worked.py)
    "worked-scores": lambda scene, tensors, cfg: {},
    "worked-scale": lambda scene, tensors, cfg: {},
    "residual": _residual,
    "mask": _mask,
    "arcs": _arcs,
    "loop": _loop,
    "dropout": _dropout,
    "parameters": _parameters,
}


def fit_distance(view: View, fov_deg: float, aspect: float) -> float:
    """The camera distance at which the view's box fills the screen (the renderers use this rule; the web
    stage applies it to the band of its height that its overlays leave free, static/stage/camera.js)."""
    w = (view.box[1] - view.box[0]) * view.margin
    h = (view.box[3] - view.box[2]) * view.margin
    t = math.tan(math.radians(fov_deg) / 2)
    return max(h / 2 / t, w / 2 / (t * aspect)) + FIT_EXTRA
