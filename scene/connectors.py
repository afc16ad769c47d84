"""Connectors: the lines between blocks. Threads from E's row of each token to its embedded row (the one
connector that depends on the input), residual rails up each station's side into its sum, memory arcs
from z to every cross-attention's W^K and W^V, the tie from E to Eᵀ, and the loop from the chosen tokens
back into the decoder's input."""

from __future__ import annotations

from scene.cells import row_y
from scene.document import Block, Connector, Scene, Station
from scene.measures import CONNECTOR_Z
from scene.tensors import Tensor

# a thread: its end this far left of the embedding's ids, its control point this far out beside E and this
# high off the blocks' plane, its curve drawn in this many segments (the browser draws them too:
# scene/structure.py sends these)
THREAD_END_GAP, THREAD_BEND, THREAD_LIFT, THREAD_SEGMENTS = 0.3, 30, 8, 24


def thread_ends(by_id: dict[str, Block], trace) -> list[dict]:
    """What the threads are drawn from, per embedding that gathers rows of E: the node holding its token ids
    (`tokens`), the block its rows are (`block`), the block whose left edge the threads end at (`end`: its ids
    column, else the embedding) and whether they leave E on its left (`left`: the source side)."""
    if "E" not in by_id:
        return []
    return [
        {
            "tokens": n.inputs[1],
            "block": n.id,
            "end": n.inputs[1] if n.inputs[1] in by_id else n.id,
            "left": by_id[n.id].tower == "src",
        }
        for n in trace.nodes
        if n.op == "Gather" and n.inputs[0] == "E"
    ]


def rail(x: Block, b: Block, st: Station | None) -> list:
    """A residual rail: the sub-layer's input X up the station's left side (of `st`) and into the sum b."""
    z = CONNECTOR_Z
    margin = (st.x if st else b.x) - 3
    start = (x.x + 1, x.y + 0.3, z)
    return [
        list(start),
        [start[0], x.y + 1.5, z],
        [margin, x.y + 1.5, z],
        [margin, row_y(b, 0), z],
        [b.x - 0.3, row_y(b, 0), z],
    ]


ARC_SEGMENTS = 40


def arc(mem: Block, w: Block) -> dict:
    """A memory arc: from z (`mem`) to a cross-attention's W^K or W^V, as a quadratic Bézier curve's ends and
    control point; the page draws it (static/compute/curves.js, which draws the input's threads too), so a
    curve is sampled in one place."""
    z = CONNECTOR_Z
    a = [mem.x + mem.w, mem.y - mem.rows / 2, z]
    b = [w.x + w.w / 2, w.y - w.rows - 0.3, z]
    return {"from": a, "control": [(a[0] + b[0]) / 2, max(a[1], b[1]) + 12, 40], "to": b, "segments": ARC_SEGMENTS}


def tie(e: Block, et: Block) -> list:
    """The tie: E at the bottom to Eᵀ at the top, through the gap between towers."""
    z, gx = CONNECTOR_Z, e.x + e.w + 6
    return [
        [e.x + e.w, e.y - 0.5, z],
        [gx, e.y - 0.5, z],
        [gx, et.y - et.rows / 2, z],
        [et.x - 0.3, et.y - et.rows / 2, z],
    ]


def loop(argmax: Block, tgt_ids: Block, right: float) -> list:
    """The loop: the chosen tokens back into the decoder's input, one row down, right of everything
    (`right`: the scene's right bound)."""
    z = CONNECTOR_Z
    out_x, y0 = right + 6, tgt_ids.y - tgt_ids.rows - 4
    mid = tgt_ids.x + tgt_ids.w / 2
    return [
        [argmax.x + argmax.w + 0.3, row_y(argmax, 0), z],
        [out_x, row_y(argmax, 0), z],
        [out_x, y0, z],
        [mid, y0, z],
        [mid, tgt_ids.y - tgt_ids.rows - 0.3, z],
    ]


def connector_anchors(
    scene: Scene, by_id: dict[str, Block], tensors: dict[str, Tensor], memory: str | None
) -> dict[str, list[list[str]]]:
    """The blocks each structural connector runs between, by kind: a rail's input X and sum, an arc's
    memory and weights, the tie's E and Eᵀ, the loop's chosen tokens and the decoder's ids. None of them is
    a part's gated output, so they are the same whatever is switched off (scene/gates.py)."""
    rails = [
        [tensors[b.id].inputs[0], b.id]
        for b in scene.blocks
        if tensors[b.id].op == "Add" and b.row_stats and tensors[b.id].inputs and tensors[b.id].inputs[0] in by_id
    ]
    arcs = (
        [
            [memory, t.inputs[1]]
            for t in tensors.values()
            if memory in by_id
            and t.op in ("Gemm", "MatMul")
            and t.inputs
            and t.inputs[0] == memory
            and t.inputs[1] in by_id
        ]
        if memory
        else []
    )
    ties = [
        ["E", t.id]
        for t in tensors.values()
        if t.op == "Transpose" and t.inputs == ["E"] and "E" in by_id and t.id in by_id
    ]
    argmax = next((t.id for t in tensors.values() if t.op == "ArgMax" and t.id in by_id), None)
    tgt_ids = next(
        (
            b.inputs[1]
            for b in scene.blocks
            if b.op == "Gather" and b.inputs[0] == "E" and b.tower == "tgt" and b.inputs[1] in by_id
        ),
        None,
    )
    return {"rail": rails, "arc": arcs, "tie": ties, "loop": [[argmax, tgt_ids]] if argmax and tgt_ids else []}


CONNECTOR_KINDS = ("rail", "arc", "tie", "loop")  # in the scene's order, after the threads


def connector_lines(scene: Scene, by_id: dict[str, Block], anchors: dict[str, list[list[str]]]) -> list[Connector]:
    """Every connector but the threads, drawn between its anchors (`connector_anchors`)."""
    colors, stations = scene.palette["connectors"], {s.id: s for s in scene.stations}
    lines = {
        "rail": [rail(by_id[x], by_id[b], stations.get(by_id[b].station)) for x, b in anchors["rail"]],
        "arc": [arc(by_id[m], by_id[w]) for m, w in anchors["arc"]],
        "tie": [tie(by_id[e], by_id[t]) for e, t in anchors["tie"]],
        "loop": [loop(by_id[a], by_id[i], scene.bounds[1]) for a, i in anchors["loop"]],
    }
    return [Connector(kind, colors[kind], lines[kind]) for kind in CONNECTOR_KINDS]


def connectors(
    scene: Scene, by_id: dict[str, Block], tensors: dict[str, Tensor], memory: str | None
) -> list[Connector]:
    """Every connector but the threads (`threads`): they follow from the structure alone."""
    return connector_lines(scene, by_id, connector_anchors(scene, by_id, tensors, memory))
