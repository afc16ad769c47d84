"""Switching a part off changes values, not the layout (scene/gates.py): for both shipped models and several
shapes, the structure (every block's place and size, the connectors, every step's view, the camera) is the
same with no part off, one head, one sub-layer and several parts off; every part's gate has its place in it,
named for its part, while a trace with the part on has no node for it; and the served scene of an ablated
trace is that one structure with the input's own parts."""

from __future__ import annotations

import numpy as np
import orjson
import pytest
import torch

from article.tour import load_tour
from model import models
from model.ablation import parts
from model.train import load
from recorder import parameters
from recorder.documents import Trace
from recorder.program import _pieces
from recorder.record import record
from scene import build
from scene.build import structure_of
from tests.in_page import PageRequest, page_parts

TOUR = load_tour()
SHAPES = ((2, 1), (5, 7), (10, 13))  # (source pieces, decoder rows)
torch.set_num_threads(1)


@pytest.fixture(scope="module", params=models.NAMES)
def shipped(request):
    model = load(models.weights_path(request.param))
    return model, parameters(model)


def sets(cfg) -> list[list[str]]:
    """No part off; one head; one sub-layer; several parts across both towers."""
    every = [p.id for p in parts(cfg)]
    head = next(p.id for p in parts(cfg) if p.kind == "head" and p.id.startswith("dec.1.cross"))
    return [[], [head], ["enc.0.ffn"], ["enc.0.self", "enc.1.self.h2", "dec.0.cross", head, every[-1]]]


def graph(cfg, params, n: int, m: int, off: list[str]) -> Trace:
    """The graph at n source pieces and m decoder rows (stand-in pieces) with the parts `off` switched off."""
    source, rows = _pieces(n, m)
    off = [p.id for p in parts(cfg) if p.id in off]  # in the model's order, as the recorder keeps them
    g, memory, out_tokens, lenses = record(cfg, params, source, rows, frozenset(off))
    return Trace(0, source, rows, out_tokens, g.nodes, list(params), memory=memory, ablation=off, lens=lenses)


def structure(t: Trace, cfg, params) -> dict:
    """The structure of the trace's shape, built afresh (nothing kept from an earlier trace), as JSON."""
    build.STRUCTURES.clear()
    return orjson.loads(orjson.dumps(structure_of(t, cfg, params, TOUR).to_json()))


def test_a_shapes_structure_is_the_same_whatever_is_switched_off(shipped):
    model, params = shipped
    for n, m in SHAPES:
        intact, *ablated = [
            structure(graph(model.cfg, params, n, m, off), model.cfg, params) for off in sets(model.cfg)
        ]
        for off, other in zip(sets(model.cfg)[1:], ablated, strict=True):
            assert [(b["id"], b["x"], b["y"], b["w"], b["rows"], b["cols"]) for b in other["blocks"]] == [
                (b["id"], b["x"], b["y"], b["w"], b["rows"], b["cols"]) for b in intact["blocks"]
            ], (n, m, off)
            assert other["connectors"] == intact["connectors"], (n, m, off)
            assert [s["view"] for s in other["steps"]] == [s["view"] for s in intact["steps"]], (n, m, off)
            assert (other["camera"], other["overview"]) == (intact["camera"], intact["overview"]), (n, m, off)
            assert other == intact, (n, m, off)  # and everything else: one structure


def test_every_parts_gate_has_its_place_named_for_its_part(shipped):
    model, params = shipped
    cfg = model.cfg
    intact = graph(cfg, params, 5, 7, [])
    doc = structure(intact, cfg, params)
    gated = {b["id"]: b["part"] for b in doc["blocks"] if b["part"]}
    every = [p.id for p in parts(cfg)]
    assert gated == {f"{p}.{k}": p for p in every for k in ("gate", "off")}
    nodes = {n.id for n in intact.nodes}
    assert not nodes & set(gated)  # with every part on, the trace has no gate: the stage draws none
    by_id = {b["id"]: b for b in doc["blocks"]}
    for p in every:  # each in its part's station, the product reading the part's output and the gate
        gate, off = by_id[f"{p}.gate"], by_id[f"{p}.off"]
        assert gate["station"] == off["station"] == ".".join(p.split(".")[:3])
        assert off["inputs"][1] == gate["id"] and off["inputs"][0] in nodes
    # the wiring is the model's with every part on: no block reads a gate's product
    assert not [b["id"] for b in doc["blocks"] if any(i in gated for i in b["inputs"]) and not b["part"]]
    labelled = {la["part"] for la in doc["labels"] if la["part"]}  # each gate's label names its part too
    assert labelled == set(every) and sum(1 for la in doc["labels"] if la["part"]) == 2 * len(every)
    assert not [s for s in doc["switches"] if s["off"]]  # a structure has every part on


def curves_drawn(connectors: list[dict]) -> list[dict]:
    """The structure's connectors with each curve it gives as ends and control point drawn (the page draws
    them: static/compute/curves.js), recomputed here from the quadratic Bézier formula."""

    def line(spec):
        if isinstance(spec, list):
            return spec
        t = np.linspace(0.0, 1.0, spec["segments"] + 1)[:, None]
        a, c, e = (np.asarray(spec[k], dtype=np.float64) for k in ("from", "control", "to"))
        return np.round((1 - t) ** 2 * a + 2 * (1 - t) * t * c + t * t * e, 3).tolist()

    return [{**c, "lines": [line(x) for x in c["lines"]]} for c in connectors]


def test_an_ablated_traces_scene_is_the_one_structure_with_the_inputs_parts(client, shipped, request):
    """The page's scene of an ablated trace (tests/in_page.py: static/compute/scene.js over the served structure)."""
    model, params = shipped
    off = sets(model.cfg)[3]
    name = request.node.callspec.params["shipped"]
    asked = "" if name == models.DEFAULT else name  # the model as the page asks it
    page = page_parts(client, [PageRequest("305", model=asked, ablate=",".join(off))])[0]
    mine, t = page["scene"], page["trace"]
    alone = structure(graph(model.cfg, params, len(t["source_tokens"]), len(t["target_tokens"]), []), model.cfg, params)
    assert mine["blocks"] == alone["blocks"] and mine["stations"] == alone["stations"]
    assert mine["connectors"][1:] == curves_drawn(alone["connectors"])  # the threads are the input's own
    assert [s["view"] for s in mine["steps"]] == [s["view"] for s in alone["steps"]]
    assert (
        [s["id"] for s in mine["switches"] if s["off"]]
        == t["ablation"]
        == [p.id for p in parts(model.cfg) if p.id in off]
    )
    assert [{**s, "off": False} for s in mine["switches"]] == alone["switches"]
    drawn = {n["id"] for n in t["nodes"]}  # drawn: the trace has them
    assert {b["id"] for b in mine["blocks"] if b["part"] in off} <= drawn
