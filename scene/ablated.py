"""The structure of an ablated graph from the intact one (issue 25): a reader may switch off any set of the
model's heads and sub-layers (model/ablation.py, 2^34 sets in the shipped shape), far too many to build
ahead, so the static site ships each shape's intact structure with a patch, and the browser's
static/local/ablated.js applies it by the rule `ablated_structure` applies here.

The rule. Switching a part off adds two blocks to the graph (`part.gate`, a zero constant, and
`part.off`, the product the consumers then read) and nothing else: every other block keeps its fields but
its place, and one input of one block is rewired. The layout is a vertical stack of stations built from a
box tree (scene/layout.py, scene/boxes.py) that names the gates already, so the patch carries that tree
and the two blocks of every part; the browser measures and places the tree again over the blocks present
(the same `measure` and `place`), and redraws what follows from the places with the same formulas: the
stations, the labels (scene/labels.py), the switches (scene/switches.py), the connectors between the
same anchors (scene/connectors.py), the bounds and the overview, and every step's view and phone parts
(scene/views.py, scene/windows.py). A step's subject, lit blocks and animation targets are the fully
ablated structure's, less the blocks absent (block order is the tree's reading order, the same for every
set). Here the rule runs the scene's own routines (lay_out, labels, switches, connector_lines, the views');
the JS is their port, operation for operation. tests/test_local_ablation.py checks that this equals the
full rebuild exactly, and that the JS equals this float for float.

The patch is per structure (source length n, output rows m, model): the gates' shapes follow n and m. Its
layout tree and measures are the model's (the same in every shape of it)."""

from __future__ import annotations

import dataclasses

from model import ids
from model.ablation import parts as model_parts
from model.transformer import Config
from recorder.documents import Trace
from recorder.record import record
from scene.boxes import Node
from scene.build import _build_structure
from scene.connectors import connector_anchors, connector_lines
from scene.document import Block, Scene, SceneStep, SliceAlias, View
from scene.labels import labels
from scene.layout import (
    DEFAULT_SHARED_WIDTH,
    LEFT_TOWER,
    SHARED,
    SHARED_BLOCK,
    SHARED_OTHER,
    SHARED_TOP,
    SPARE_Y,
    TOWER_START_Y,
    lay_out,
    shared_tree,
    towers,
)
from scene.measures import (
    AZIMUTH,
    CONNECTOR_Z,
    ELEVATION,
    H_GAP,
    LABEL_LIFT,
    LABEL_ROOM,
    NAME_ROOM,
    PART_NAME_ROOM,
    STATION_GAP,
    TOWER_GAP,
    VIEW_MARGIN,
)
from scene.switches import HEAD_SWITCH_LIFT, TITLE_SIDE, switches
from scene.tensors import memory_id, tensors_of
from scene.views import _framing, _phone_parts, bounds, centre
from scene.windows import LABEL_SHARE, WIDE, WIDTHS, WINDOW_LABEL
from scene.words import station_title

PATCH_FORMAT = "anatomy-ablation/1"


def all_off(trace, cfg: Config, params: dict) -> Trace:
    """The graph of the trace's shape (its source pieces and decoder rows) with every part switched off."""
    every = [p.id for p in model_parts(cfg)]
    g, memory, out_tokens, lenses = record(cfg, params, list(trace.source_tokens), list(trace.target_tokens),
                                           frozenset(every), bool(getattr(trace, "lens", ())))
    return Trace(trace.number, list(trace.source_tokens), list(trace.target_tokens), out_tokens, g.nodes,
                 list(params), memory=memory, ablation=every, lens=lenses)


def ablation_patch_document(trace, cfg: Config, params: dict, tour: list, base: Scene | None = None) -> dict:
    """What the browser needs to ablate the structure of this trace's shape (`base`, built when not given):
    per part its two blocks, their labels (what `labels` makes for them but the place) and the inputs it
    rewires; the layout's box tree; the connectors' anchors; per step its framing rule and the fully ablated
    subject, lit blocks and animation where they differ; which head each block belongs to (a view frames its
    head's label line); the measures."""
    if getattr(trace, "ablation", ()):
        raise ValueError("the patch starts from the intact structure: pass a trace with nothing switched off")
    base = base or _build_structure(trace, cfg, params, tour)
    full_trace = all_off(trace, cfg, params)
    full = _build_structure(full_trace, cfg, params, tour)
    by_id = {b.id: b for b in full.blocks}
    anchors = connector_anchors(full, by_id, tensors_of(full_trace, params), memory_id(full_trace))
    return {"format": PATCH_FORMAT, "parts": _parts(base, full, full_trace), "layout": layout_document(cfg),
            "connectors": anchors, "steps": _steps(base, full, tour), "head_out": _head_out(full),
            "measures": _measures()}


def _parts(base: Scene, full: Scene, full_trace) -> dict[str, dict]:
    """Per part, in the model's order: its blocks as the fully ablated structure has them, their labels
    (those `labels` makes for them) and the inputs it rewires: [block, input index, new input]."""
    part_of = {n.id: n.attrs["ablation"] for n in full_trace.nodes if "ablation" in n.attrs}
    for n in full_trace.nodes:  # the product reads the gate
        gate = next((i for i in n.inputs if i in part_of), None) if n.op == "Mul" else None
        if gate:
            part_of[n.id] = part_of[gate]
    out = {p: {"blocks": [], "labels": [], "rewire": []} for p in full_trace.ablation}
    label_of = dict(zip((b.id for b in full.blocks), full.labels, strict=False))  # labels: one per block first
    have = {b.id: b for b in base.blocks}
    for b in full.blocks:
        if b.id not in have:
            if b.id not in part_of:
                raise ValueError(f"{b.id} is in the ablated graph only, but no part's gate nor its product")
            block = {k: v for k, v in dataclasses.asdict(b).items() if k not in ("x", "y")}
            label = {k: v for k, v in dataclasses.asdict(label_of[b.id]).items() if k not in ("x", "y")}
            out[part_of[b.id]]["blocks"].append(block)
            out[part_of[b.id]]["labels"].append(label)
            continue
        for k, (was, now) in enumerate(zip(have[b.id].inputs, b.inputs, strict=True)):
            if was != now:
                out[part_of[now]]["rewire"].append([b.id, k, now])
    return out


def _node(n: Node) -> dict:
    """A box tree's node as data: kind, block id or items, gap, alignment, right flush, held width."""
    out: dict = {"t": n.t}
    if n.t == "b":
        out["id"] = n.id
    if n.items:
        out["items"] = [_node(i) for i in n.items]
    if n.t in ("h", "v"):
        out.update(gap=n.gap, align=n.align)
    if n.flush_right:
        out["right"] = True
    if n.w:
        out["w"] = n.w
    return out


def layout_document(cfg: Config) -> dict:
    """scene/layout.py's towers as data, and what `lay_out` places beside them (the model's, every shape)."""
    return {"towers": {side: [{"id": sid, "title": station_title(sid, cfg), "tree": _node(node)} for sid, node in st]
                       for side, st in towers(cfg).items()},
            "shared": {"station": SHARED, "title": station_title(SHARED), "block": SHARED_BLOCK, "other": SHARED_OTHER,
                       "tree": _node(shared_tree()), "top": SHARED_TOP, "default_width": DEFAULT_SHARED_WIDTH},
            "left": LEFT_TOWER, "start_y": TOWER_START_Y, "station_gap": STATION_GAP, "tower_gap": TOWER_GAP,
            "spare_y": SPARE_Y, "h_gap": H_GAP}


def _steps(base: Scene, full: Scene, tour: list) -> list[dict]:
    """Per step: framed as the overview or by its subject, its angle, and the fully ablated subject, lit
    blocks and animation where they are not the intact ones."""
    out = []
    for s, mine, every in zip(tour, base.steps, full.steps, strict=True):
        step = {"overview": s.view == "overview", "angle": list(s.angle) if s.angle else None}
        for key in ("subject", "lit", "animation"):
            if getattr(every, key) != getattr(mine, key):
                step[key] = getattr(every, key)
        out.append(step)
    return out


def _head_out(full: Scene) -> dict[str, str]:
    """The output block of the head each block belongs to (views._head_lines: its name and switch stand on
    that block's label line)."""
    out = {}
    for b in full.blocks:
        n = None if b.param else ids.parse(b.id)
        if n is not None and n.head is not None:
            out[b.id] = ids.head_id(n.station, n.head, "out")
    return out


def _measures() -> dict:
    return {"label_lift": LABEL_LIFT, "title_lift": STATION_GAP / 2, "head_switch_lift": HEAD_SWITCH_LIFT,
            "title_side": TITLE_SIDE, "label_room": LABEL_ROOM, "name_room": NAME_ROOM,
            "part_name_room": PART_NAME_ROOM, "azimuth": AZIMUTH, "elevation": ELEVATION, "view_margin": VIEW_MARGIN,
            "wide": WIDE, "widths": list(WIDTHS), "label_share": LABEL_SHARE, "window_label": WINDOW_LABEL,
            "connector_z": CONNECTOR_Z, "mixed_tower": SHARED}


# ---- the rule (static/local/ablated.js is the same, step by step) ----------------------------------------

def ablated_structure(structure: dict, patch: dict, off) -> dict:
    """The structure (`Scene.to_json()`, nothing switched off) of the same shape with the parts `off` switched
    off, from its patch (`ablation_patch_document`): equal to the structure built from the ablated trace."""
    off = set(off)
    unknown = off - set(patch["parts"])
    if unknown:
        raise ValueError(f"not parts of this model: {sorted(unknown)}")
    cfg = Config(**structure["config"])
    blocks = [Block(**b) for b in structure["blocks"]]
    for p in (p for p in patch["parts"] if p in off):
        blocks += [Block(**b, x=0.0, y=0.0) for b in patch["parts"][p]["blocks"]]
    by_id = {b.id: b for b in blocks}
    for p in (p for p in patch["parts"] if p in off):
        for block, k, now in patch["parts"][p]["rewire"]:
            by_id[block].inputs = [*by_id[block].inputs[:k], now, *by_id[block].inputs[k + 1:]]
    stations, order = lay_out(blocks, cfg)
    blocks.sort(key=lambda b: order.get(b.id, len(order)))
    box = bounds(blocks)
    o = structure["overview"]
    scene = Scene(structure["format"], structure["config"], structure["cell"], structure["palette"], {}, blocks,
                  [SliceAlias(**a) for a in structure["slices"]], stations, [], [], box,
                  View(box, centre(box), o["azimuth"], o["elevation"], o["margin"]), [],
                  sum(b.rows * b.cols for b in blocks), lens=list(structure["lens"]), camera=structure["camera"])
    anchors = {kind: [a for a in lines if all(i in by_id for i in a)] for kind, lines in patch["connectors"].items()}
    scene.connectors = connector_lines(scene, by_id, anchors)
    scene.labels = labels(scene)
    scene.steps = [_step(s, info, scene, by_id) for s, info in zip(structure["steps"], patch["steps"], strict=True)]
    scene.switches = switches(scene, cfg, off)
    return scene.to_json()


@dataclasses.dataclass
class _Framing:  # what views._framing and views._phone_parts read of a tour step
    angle: tuple[float, float] | None


def _present(value, by_id: dict):
    """A list of block ids without those absent; any other value as it is (an animation's targets)."""
    if isinstance(value, list) and all(isinstance(i, str) for i in value):
        return [i for i in value if i in by_id]
    return value


def _step(s: dict, info: dict, scene: Scene, by_id: dict[str, Block]) -> SceneStep:
    subject = _present(info.get("subject", s["subject"]), by_id)
    lit = _present(info.get("lit", s["lit"]), by_id)
    animation = {k: _present(v, by_id) for k, v in info.get("animation", s["animation"]).items()}
    framing = _Framing(tuple(info["angle"]) if info["angle"] else None)
    if info["overview"] or not subject:
        o = scene.overview
        view = View(o.box, o.target, *(info["angle"] or (o.azimuth, o.elevation)), o.margin)
    else:
        view = _framing([by_id[i] for i in subject], framing, by_id=by_id)
    parts = [] if info["overview"] else _phone_parts([by_id[i] for i in subject], framing, [by_id[i] for i in lit])
    return SceneStep(s["step"], s["title"], subject, lit, view, animation, s["marks"], s["overlay"], parts)


__all__ = ["PATCH_FORMAT", "ablated_structure", "ablation_patch_document", "all_off", "layout_document"]
