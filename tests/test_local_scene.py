"""The browser's scene (static/local/scene.js `personalize`) is the server's, under Node: for 40 inputs over both
models, training snapshots, every length, inputs whose worked row is chosen by the rule "any", inputs whose
output departs from the reference (the loss overlay's marks) and seven ablation sets, the structure of the
trace's shape (scene/structure.py `structure_for_shape`: the same whatever is switched off, every part's gate
in its place) with the server's trace (its JSON body, the scene removed) gives the scene the server sent,
every float equal. A planted error
(two source tokens swapped in the trace) is caught; the structure of a shape equals the structure of real
traces of that shape."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import orjson
import pytest

from app.service.model_choice import _load
from app.service.model_service import TraceRequest
from model import models
from recorder import trace as record_trace
from scene import build
from scene.connectors import _beziers
from scene.structure import shapes_of, structure_document, structure_for_shape

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="needs Node to run static/local/")

TRAINED_2017 = (0, 7, 13, 45, 100, 512, 999, 4321, 70001, 101010, 123456, 999999)
TRAINED_MODERN = (3, 6, 8, 13, 17, 21, 4321, 87654, 250000, 999999)  # 3 … 17: the rule "any"
SNAPSHOTS = ((0, 15), (0, 5), (25, 9), (25, 217), (100, 7), (100, 446), (100, 7781), (100, 36495),
             (1000, 31337), (1000, 600000))  # (step, input): long outputs, one row, "any", departures
ABLATED = (("2017", 4321, ("enc.0.self.h1",)), ("2017", 58, ("dec.1.cross",)), ("modern", 777, ("enc.0.self",)),
           ("2017", 305, ("enc.0.self.h1", "dec.1.cross.h2")),
           ("2017", 90210, ("enc.0.ffn", "dec.0.self", "dec.1.cross.h0")),
           ("modern", 4321, ("dec.0.cross", "dec.1.self.h3", "enc.1.ffn")),
           ("2017", 777777, ("enc.0.self", "enc.1.self", "dec.0.self", "dec.0.cross", "dec.1.self", "dec.1.cross")))
CASES = ([("2017", x, (), None) for x in TRAINED_2017] + [("modern", x, (), None) for x in TRAINED_MODERN]
         + [("2017", x, (), step) for step, x in SNAPSHOTS] + [(m, x, off, None) for m, x, off in ABLATED]
         + [("2017", x, (), None) for x in (20, 300, 8_000, 610_011, 47_000)])
PLANTED = "planted: two source tokens swapped"
# Bézier curves whose points fall on halves of the third decimal (1.0625 · 1000 = 1062.5: numpy rounds it to the
# even 1062, not up), and on none
CURVES = {"a": [[1.0625, -2.0625, 0.2], [0.3, 4.7, 0.2]], "c": [[31.0625, 7.5, 8], [-29.7, 1.1, 8]],
          "e": [[2.0005, -1.0625, 0.2], [-3.3, 5.5, 0.2]], "n": 24}


def case_name(model: str, number: int, ablation: tuple, step: int | None) -> str:
    return "-".join([model, str(number), *ablation, *([] if step is None else [f"c{step}"])])


@pytest.fixture(scope="module")
def parity(client, tmp_path_factory):
    """The cases written, Node run once over them; each case's served scene and the browser's, and the
    structures built on the way."""
    folder, rows, served, structures = tmp_path_factory.mktemp("local-scene"), [], {}, {}
    services = {name: _load(client.app.state, name).service for name in models.NAMES}
    for model, number, ablation, step in CASES:
        svc, name = services[model], case_name(model, number, ablation, step)
        body = svc.trace_sync(TraceRequest(number, ablation, step)).body
        head = orjson.loads(body)
        served[name] = head["scene"]
        n, m = len(head["source_tokens"]), len(head["target_tokens"])
        shape = f"s-{model}-{n}-{m}.json"
        doc = structures[shape] = structures.get(shape) or structure_for_shape(svc, n, m)
        row = {"name": name, "structure": shape, "trace": f"t-{name}.json"}  # ablated or not: one structure
        (folder / f"t-{name}.json").write_bytes(body)
        rows.append(row)
    planted = rows[7]
    rows.append({**planted, "name": PLANTED, "plant": structures[planted["structure"]]["personal"]["threads"]
                 ["ends"][0]["tokens"]})
    served[PLANTED] = served[planted["name"]]
    for key, doc in structures.items():
        (folder / key).write_bytes(orjson.dumps(doc))
    (folder / "cases.json").write_text(json.dumps(rows))
    (folder / "curves.json").write_text(json.dumps(CURVES))
    run = subprocess.run(["node", "--no-warnings", str(ROOT / "tests" / "local_scene_parity.mjs"), str(folder)],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads((folder / "scenes.json").read_text())
    return served, out["scenes"], structures, services, out["curves"]


def differences(a, b, path: str = "scene") -> list[str]:
    """Where two JSON values differ (a number only if not exactly equal), the first few."""
    if isinstance(a, dict) and isinstance(b, dict):
        if list(a) != list(b):  # the same keys in the same order
            return [f"{path}: keys {list(a)} ≠ {list(b)}"[:300]]
        return [d for k in a for d in differences(a[k], b[k], f"{path}.{k}")][:5]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items, not {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in differences(x, y, f"{path}[{i}]")][:5]
    return [] if a == b and type(a) is type(b) or isinstance(a, float | int) and a == b else [f"{path}: {a!r} ≠ {b!r}"]


@pytest.mark.parametrize("case", CASES, ids=[case_name(*c) for c in CASES])
def test_the_browser_adds_the_same_input_parts_to_the_structure(parity, case):
    served, browser, *_ = parity
    name = case_name(*case)
    assert differences(browser[name], served[name]) == []


def test_the_cases_meet_every_rule_and_overlay(parity):
    served, *_ = parity
    rules = {s["worked"]["rule"] for s in served.values()}
    rows = {len(s["axes"]["target"]) for s in served.values()}
    assert rules == {"word", "any"} and 1 in rows and max(rows) > 50
    loss = [p for s in served.values() for st in s["steps"] if (st.get("overlay") or {}).get("name") == "loss"
            for p in st["parts"] if "·" in (p.get("window") or {}).get("label", "")]
    assert loss, "no case leaves a marked piece out of its window"


def test_a_planted_error_is_caught(parity):
    served, browser, *_ = parity
    assert differences(browser[PLANTED], served[PLANTED]) != []


def test_the_structure_of_a_shape_is_that_of_real_traces(parity):
    """Each built cold (the structure cache emptied): from stand-in pieces, and from real inputs of the shape."""
    *_, services, _ = parity
    for model, number, step in (("modern", 21, None), ("modern", 4321, None), ("2017", 999999, None),
                                ("2017", 446, 100)):
        svc = services[model]
        mdl, params = svc.weights_for(TraceRequest(number, (), step))[:2]
        t = record_trace(mdl, number, params)
        build.STRUCTURES.clear()
        real = orjson.loads(orjson.dumps(structure_document(t, mdl.cfg, params, svc.tour)))
        build.STRUCTURES.clear()
        mine = orjson.loads(orjson.dumps(structure_for_shape(svc, len(t.source_tokens), len(t.target_tokens))))
        assert mine["scene"] == real["scene"] and mine["personal"] == real["personal"], (model, number, step)


def test_every_shape_the_page_may_meet_is_listed():
    shapes = shapes_of("2017")
    assert shapes == shapes_of("modern") and (2, 1) in shapes and (10, 60) in shapes and (10, 61) not in shapes
    assert len(shapes) == len(set(shapes)) == sum(n + 50 for n in range(2, 11))


def test_the_browser_draws_curves_as_numpy_rounds_them(parity):
    *_, curves = parity
    assert curves == _beziers(CURVES["a"], CURVES["c"], CURVES["e"], CURVES["n"])
