"""The worked attention row on the stage (steps 6–9): what each head's card reads (`worked_head`: the blocks
and columns a row passes through), sent with the structure (scene/structure.py). Which row, and the step
animations' targets that name it, are the input's own: the page chooses them (static/compute/worked.js)."""

from __future__ import annotations

from article.live_nodes import worked_blocks
from model import ids

# the phase of the worked row each step's animation shows: the query and keys, the scores, the scale,
# the weighted sum of values
PHASES = {"one-cell": "qk", "worked-scores": "scores", "worked-scale": "scale", "sweep": "sum"}
QUERY_CELL, SWEEP = "one-cell", "sweep"  # the animations that point at the row's query cell, and sweep its sum


def _offset(trace, slice_id: str) -> int:
    return int(trace.node(slice_id).attrs["starts"][0])


def worked_head(trace, station: str, head: int) -> dict:
    """What the worked row's card reads of one head (counted from 0), the row, key and rule left open: the
    trace ids of its Q, K, V columns, scores, weights and output; its first column in Q, K and V; the scale the
    scores were multiplied by; the axis its rows and keys stand for; its words."""
    b = worked_blocks(station, head)
    scores = trace.node(b["scores"])
    q_id, k_id = scores.inputs[:2]  # the slices the scores are computed from (rotated first, in the modern model)
    return {
        "station": station,
        "name": ids.parse(b["out"]).reader_name(),
        "head": head + 1,
        "row": None,
        "key": None,
        "rule": None,
        "axis": "source",
        "q": q_id,
        "k": k_id,
        "v": b["v"],
        "scores": b["scores"],
        "weights": b["weights"],
        "out": b["out"],
        "q_cols": [_offset(trace, q_id), int(trace.node(q_id).value.shape[1])],
        "k_cols": [_offset(trace, k_id), int(trace.node(k_id).value.shape[1])],
        "v_cols": [_offset(trace, b["v"]), int(trace.node(b["v"]).value.shape[1])],
        "v_full": trace.node(b["v"]).inputs[0],
        "scale": float(scores.attrs.get("alpha", 1.0)),
    }
