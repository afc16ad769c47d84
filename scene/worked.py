"""The worked attention row on the stage (steps 6–9): which blocks, row and columns it passes through, for
this input (article/lessons.py `choose_worked` picks the row from the trace). The scene's structure is
kept per model shape (scene/build.py STRUCTURES); this is the input's own part, added to each copy with
the tokens: `scene.worked` (what the stage's card, static/stage/worked.js, reads its numbers from) and
the few step animations whose targets name the row."""

from __future__ import annotations

import dataclasses

from article.lessons import choose_worked, worked_blocks
from model import ids
from scene.document import SceneStep

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
    return {"station": station, "name": ids.parse(b["out"]).reader_name(), "head": head + 1,
            "row": None, "key": None, "rule": None, "axis": "source",
            "q": q_id, "k": k_id, "v": b["v"], "scores": b["scores"], "weights": b["weights"], "out": b["out"],
            "q_cols": [_offset(trace, q_id), int(trace.node(q_id).value.shape[1])],
            "k_cols": [_offset(trace, k_id), int(trace.node(k_id).value.shape[1])],
            "v_cols": [_offset(trace, b["v"]), int(trace.node(b["v"]).value.shape[1])],
            "v_full": trace.node(b["v"]).inputs[0], "scale": float(scores.attrs.get("alpha", 1.0))}


def worked_of(trace) -> dict:
    """The worked row as the stage needs it: its head's `worked_head`, with the row, the key it rests on most
    and the rule that chose them (article/lessons.py `choose_worked`)."""
    try:
        c = choose_worked(trace)
    except (KeyError, ValueError):  # a graph without the sub-layer the steps show
        return {}
    return {**worked_head(trace, c["station"], c["head"]), "row": c["row"], "key": c["key"], "rule": c["rule"]}


def _targets(anim: dict, w: dict, n: int) -> dict:
    """A step animation's targets with the worked row put in: step 6's one cell is in the row's query (its
    head's first column), step 9's sweep ends with the row framed; each says which phase it shows."""
    name, r = anim["name"], w["row"]
    out = {**anim, "worked": PHASES[name]}
    if name == QUERY_CELL and anim.get("out"):
        out.update(row=r, col=w["q_cols"][0])
    if name == SWEEP:
        off, dk = w["v_cols"]
        out["rects"] = [[w["scores"], [r, r, 0, n - 1]], [w["weights"], [r, r, 0, n - 1]],
                        [w["v_full"], [0, n - 1, off, off + dk - 1]], [w["out"], [r, r, 0, dk - 1]]]
    return out


def with_worked(steps: list[SceneStep], worked: dict, n_tokens: int) -> list[SceneStep]:
    """The tour's steps for this input: those whose animation walks the worked row get its targets (new
    objects; the kept structure's steps are shared and left as they are)."""
    if not worked:
        return steps
    return [dataclasses.replace(s, animation=_targets(s.animation, worked, n_tokens))
            if s.animation.get("name") in PHASES else s for s in steps]
