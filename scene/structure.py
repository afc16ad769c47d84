"""A scene's structure as a document, for a browser that computes the trace itself (the static build).

A scene is its graph's structure (scene/build.py `structure_of`: blocks, stations, views, rails, arcs) plus
the input's own parts (the axes' words, row names, threads, token labels, the worked row and the
steps it moves). The structure depends only on the graph's shape: the model, the source's length n and the
decoder's rows m; not on the parts switched off (every part's gate has its place in it: scene/gates.py). So the build
writes one structure per (model, n, m) the page may meet (`shapes_of`), and static/compute/scene.js
`personalize(document, trace)` adds the input's parts to it, the one place they are computed, from what this
document defines (`personal`): which nodes and blocks each part reads, its constants and its sentences. The
browser knows no trace id and no fact of the model; tests/scene/test_local_scene.py holds the two equal.

    {"format": STRUCTURE_FORMAT, "model", "n", "m",
     "scene": the structure as the trace header writes a scene (no axes, row names, threads, token labels,
              worked row),
     "personal": {"vocab", "row_names", "threads", "token_labels", "worked", "windows"}}
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import asdict

import numpy as np

from article.live_nodes import WORKED_STATION, WORKED_WORDS, head_weight_ids
from article.tour import TourStep
from model import ids, models
from model.decode import EXTRA_LENGTH
from model.transformer import Config
from model.vocab import VOCAB
from recorder.documents import Trace
from recorder.program import _pieces
from recorder.record import record
from scene.axes import ROW_NAMES
from scene.build import LOSS_OVERLAY, structure_of
from scene.connectors import THREAD_BEND, THREAD_END_GAP, THREAD_LIFT, THREAD_SEGMENTS, thread_ends
from scene.document import Block
from scene.labels import TOKEN_GAP, token_blocks, token_label
from scene.measures import CONNECTOR_Z, LABEL_ROOM, PART_NAME_ROOM, VIEW_MARGIN
from scene.windows import LABEL_SHARE, LEFT_OUT, MARKED_MIN, VALUE_NAME_ROOM, WIDE, WINDOW_LABEL
from scene.worked import PHASES, QUERY_CELL, SWEEP, worked_head

STRUCTURE_FORMAT = "anatomy-scene-structure/1"
MAX_NUMBER = 999_999  # the inputs the page accepts: 0 … MAX_NUMBER


def structure_document(trace, cfg: Config, params: dict[str, np.ndarray], tour: list[TourStep]) -> dict:
    """The structure of `trace`'s scene with what the browser needs to add any input's parts to it."""
    base = structure_of(trace, cfg, params, tour)
    by_id = {b.id: b for b in base.blocks}
    return {
        "format": STRUCTURE_FORMAT,
        "scene": base.to_json(),
        "personal": {
            "vocab": list(VOCAB.tokens),
            "row_names": dict(ROW_NAMES),
            "threads": {
                "kind": "thread",
                "from": "E",
                "ends": thread_ends(by_id, trace),
                "z": CONNECTOR_Z,
                "end_gap": THREAD_END_GAP,
                "bend": THREAD_BEND,
                "lift": THREAD_LIFT,
                "segments": THREAD_SEGMENTS,
            },
            "token_labels": {
                "blocks": token_blocks(base),
                "gap": TOKEN_GAP,
                "chosen": asdict(token_label("", 0.0, 0.0, True)),
                "ids": asdict(token_label("", 0.0, 0.0, False)),
            },
            "worked": _worked(trace, by_id),
            "windows": {
                "wide": WIDE,
                "marked_min": MARKED_MIN,
                "label_share": LABEL_SHARE,
                "label_room": LABEL_ROOM,
                "part_name_room": PART_NAME_ROOM,
                "value_name_room": VALUE_NAME_ROOM,
                "view_margin": VIEW_MARGIN,
                "label": WINDOW_LABEL,
                "left_out": LEFT_OUT,
                "loss_overlay": LOSS_OVERLAY,
            },
        },
    }


def _worked(trace, by_id: dict[str, Block]) -> dict | None:
    """What choose_worked reads (every head's weights, head by head, and the token it passes over) and each
    head's card (worked_head), with the phases of the steps that walk the row and the head map of their
    parts; None for a graph without the sub-layer the steps show (worked_of's {})."""
    weights = head_weight_ids(trace, WORKED_STATION)
    try:
        heads = [worked_head(trace, WORKED_STATION, h) for h in range(len(weights))]
    except KeyError:
        return None
    if not weights:
        return None
    return {
        "words": WORKED_WORDS,
        "weights": weights,
        "heads": heads,
        "phases": dict(PHASES),
        "query_cell": QUERY_CELL,
        "sweep": SWEEP,
        "counterparts": head_counterparts(list(by_id), WORKED_STATION, len(weights)),
    }


def head_counterparts(block_ids: list[str], station: str, heads: int) -> dict[str, list[str]]:
    """Each head block of `station` and the same block of every head, head by head (scene/windows.py
    `on_worked_head` moves a part to the worked head so; a counterpart that is no block leaves it)."""
    out = {}
    for i in block_ids:
        name = ids.parse(i)
        if name.station == station and name.head is not None:
            out[i] = [ids.compose(dataclasses.replace(name, head=h)) for h in range(heads)]
    return out


@functools.cache
def source_lengths() -> tuple[int, ...]:
    """Every source length n of the inputs 0 … MAX_NUMBER (the English words and </s>): 2 … 10."""
    return tuple(sorted({len(VOCAB.source_tokens(x)) for x in range(MAX_NUMBER + 1)}))


def shapes_of(model_name: str) -> list[tuple[int, int]]:
    """Every (n, m) the page may meet for the model: each source length with every row count greedy decoding
    can give (1: </s> at once, … n + EXTRA_LENGTH: stopped at the length limit), since training snapshots and
    switched-off parts write any length the limit allows."""
    models.check_name(model_name)
    return [(n, m) for n in source_lengths() for m in range(1, n + EXTRA_LENGTH + 1)]


def shape_trace(cfg: Config, params: dict[str, np.ndarray], n: int, m: int, version: str = "") -> Trace:
    """A trace of the graph at n source pieces and m decoder rows, of stand-in pieces (the structure reads
    the graph, never its values or tokens: recorder/program.py records its probes so)."""
    source, rows = _pieces(n, m)
    g, memory, out_tokens, lenses = record(cfg, params, source, rows)
    return Trace(
        0,
        source,
        rows,
        out_tokens,
        g.nodes,
        list(params),
        weights_version=version,
        memory=memory,
        ablation=[],
        lens=lenses,
    )


def structure_for_shape(service, n: int, m: int) -> dict:
    """The structure document of the service's model at (n, m), without an input of that shape."""
    cfg = service.translator.model.cfg
    doc = structure_document(shape_trace(cfg, service.params, n, m, service.version), cfg, service.params, service.tour)
    return {"format": doc["format"], "model": service.name, "n": n, "m": m, **doc}
