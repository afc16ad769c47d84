"""The browser's scene (static/compute/scene.js `personalize`, through page_parts.js as tests/in_page.py runs it
over the documents the app serves) adds each input's own parts to its shape's structure, checked against the
trace itself: for 40 inputs over both models, training snapshots, every length, inputs whose worked row is
chosen by the rule "any", inputs whose output departs from the reference (the loss overlay's marks) and seven
ablation sets, the axes' words and row names are the trace's tokens, one thread leaves E at the row of each
token id the trace holds, the token labels name the trace's tokens at the rows of the blocks the structure
lists, and the worked row's cell is the trace's weight. A planted error (two source token ids swapped in the
trace) is caught; the structure of a shape equals the structure of real traces of that shape."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import orjson
import pytest

from app.service.model_choice import _load
from app.service.model_service import TraceRequest
from model import models
from model.vocab import EOS, VOCAB
from recorder import trace as record_trace
from scene import build
from scene.structure import shapes_of, structure_document, structure_for_shape
from tests.in_page import PageRequest, node_json, page_parts, run_page_parts

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.node

TRAINED_2017 = (0, 7, 13, 45, 100, 512, 999, 4321, 70001, 101010, 123456, 999999)
TRAINED_MODERN = (3, 6, 8, 13, 17, 21, 4321, 87654, 250000, 999999)  # 3 … 17: the rule "any"
SNAPSHOTS = (
    (0, 15),
    (0, 5),
    (25, 9),
    (25, 217),
    (100, 7),
    (100, 446),
    (100, 7781),
    (100, 36495),
    (1000, 31337),
    (1000, 600000),
)  # (step, input): long outputs, one row, "any", departures
ABLATED = (
    ("2017", 4321, ("enc.0.self.h1",)),
    ("2017", 58, ("dec.1.cross",)),
    ("modern", 777, ("enc.0.self",)),
    ("2017", 305, ("enc.0.self.h1", "dec.1.cross.h2")),
    ("2017", 90210, ("enc.0.ffn", "dec.0.self", "dec.1.cross.h0")),
    ("modern", 4321, ("dec.0.cross", "dec.1.self.h3", "enc.1.ffn")),
    ("2017", 777777, ("enc.0.self", "enc.1.self", "dec.0.self", "dec.0.cross", "dec.1.self", "dec.1.cross")),
)
CASES = (
    [("2017", x, (), None) for x in TRAINED_2017]
    + [("modern", x, (), None) for x in TRAINED_MODERN]
    + [("2017", x, (), step) for step, x in SNAPSHOTS]
    + [(m, x, off, None) for m, x, off in ABLATED]
    + [("2017", x, (), None) for x in (20, 300, 8_000, 610_011, 47_000)]
)
# Bézier curves whose points fall on halves of the third decimal (1.0625 · 1000 = 1062.5: numpy rounds it to the
# even 1062, not up), and on none
CURVES = {
    "a": [[1.0625, -2.0625, 0.2], [0.3, 4.7, 0.2]],
    "c": [[31.0625, 7.5, 8], [-29.7, 1.1, 8]],
    "e": [[2.0005, -1.0625, 0.2], [-3.3, 5.5, 0.2]],
    "n": 24,
}


def case_name(model: str, number: int, ablation: tuple, step: int | None) -> str:
    return "-".join([model, str(number), *ablation, *([] if step is None else [f"c{step}"])])


def request_of(model: str, number: int, ablation: tuple, step: int | None) -> PageRequest:
    return PageRequest(str(number), model=model, ablate=",".join(ablation), checkpoint=step)


@pytest.fixture(scope="module")
def shown(client) -> dict[str, dict]:
    """Each case's served trace (JSON form), the page's scene for it, and the structure document it came from."""
    out = dict(zip((case_name(*c) for c in CASES), page_parts(client, [request_of(*c) for c in CASES]), strict=True))
    for p in out.values():
        t = p["trace"]
        p["structure"] = _structure(client, t["model"], len(t["source_tokens"]), len(t["target_tokens"]))
    return out


def _structure(client, model: str, n: int, m: int) -> dict:
    """The shape's structure document as the app serves it (the base of n, patched by the shape's difference)."""
    import gzip

    from app.service.json_diff import json_patched

    def get(url: str):
        body = client.get(url).content
        return orjson.loads(gzip.decompress(body) if body[:2] == b"\x1f\x8b" else body)

    return json_patched(get(f"/site/scene/{model}/{n}.json.gz"), get(f"/site/scene/{model}/{n}-{m}.diff.json.gz"))


def problems(scene: dict, t: dict, structure: dict) -> list[str]:
    """Where the page's own parts of `scene` disagree with the trace `t` (its header and its nodes)."""
    nodes = {n["id"]: n for n in t["nodes"]}
    tokens = {"source": t["source_tokens"], "target": t["target_tokens"]}
    own, by_id, out = structure["personal"], {b["id"]: b for b in scene["blocks"]}, []
    if (scene["axes"]["source"], scene["axes"]["target"]) != (tokens["source"], tokens["target"]):
        out.append("axes: not the trace's tokens")
    if scene["axes"]["vocab"] != list(VOCAB.tokens) or scene["row_names"]["source"] != [
        own["row_names"]["token"].format(token=x) for x in tokens["source"]
    ]:
        out.append("axes or row names: not the vocabulary's and the source's words")
    names = [
        own["row_names"]["decoder"].format(reads=a, writes=w)
        for a, w in zip(t["target_tokens"], t["output_tokens"], strict=False)
    ]
    if scene["row_names"]["target"] != names:
        out.append("row names: not what each decoder row reads and writes")
    e = by_id["E"]
    starts = [
        [e["x"] if end["left"] else e["x"] + e["w"], e["y"] - i - 0.5]
        for end in own["threads"]["ends"]
        for i in VOCAB.ids(tokens["source" if end["left"] else "target"])
    ]
    threads = next(c for c in scene["connectors"] if c["kind"] == "thread")["lines"]
    if [line[0][:2] for line in threads] != starts:
        out.append("threads: not from E's row of each of the trace's token ids")
    out += _label_problems(scene, t, nodes, own, by_id, tokens)
    return out + _worked_problems(scene["worked"], t, nodes, own)


def _label_problems(scene, t, nodes, own, by_id, tokens) -> list[str]:
    want = []
    for entry in own["token_labels"]["blocks"]:
        b = by_id[entry["block"]]
        words = (
            [VOCAB.tokens[int(i)] for i in nodes[entry["block"]]["data"]]
            if entry["chosen"]
            else tokens.get(entry["axis"], [])
        )
        want += [(w, b["y"] - r - 0.5) for r, w in enumerate(words[: b["rows"]])]
    said = [(x["text"], x["y"]) for x in scene["labels"] if x["role"] == "token"]
    return [] if said == want and want else ["token labels: not the trace's tokens at the blocks' rows"]


def _worked_problems(worked: dict, t: dict, nodes: dict, own: dict) -> list[str]:
    if not own["worked"]:
        return [] if worked == {} else ["a worked row for a graph without the sub-layer"]

    def value(i: str) -> np.ndarray:
        return np.asarray(nodes[i]["data"], dtype=np.float64).reshape(nodes[i]["shape"])

    heads, w = [value(i) for i in own["worked"]["weights"]], value(worked["weights"])
    cell, r, k = w[worked["row"], worked["key"]], worked["row"], worked["key"]
    if worked["rule"] == "any":
        return [] if cell == max(h.max() for h in heads) else ["worked row 'any': not the largest weight"]
    word = k != r and t["source_tokens"][k] != EOS and w[r].argmax() == k
    if not word:
        return [f"worked row '{worked['rule']}': not a row resting most on another word"]
    end = t["source_tokens"][r] == EOS
    if (worked["rule"] == "end") != end or (worked["rule"] == "tens" and (k != r + 1 or w[r, k] <= 0.5)):
        return [f"worked row '{worked['rule']}': not a row of that kind"]
    return []


@pytest.mark.parametrize("case", CASES, ids=[case_name(*c) for c in CASES])
def test_the_browser_adds_the_input_s_own_parts_to_the_structure(shown, case):
    p = shown[case_name(*case)]
    assert problems(p["scene"], p["trace"], p["structure"]) == []


def test_the_cases_meet_every_rule_and_overlay(shown):
    scenes = [p["scene"] for p in shown.values()]
    rules = {s["worked"]["rule"] for s in scenes}
    rows = {len(s["axes"]["target"]) for s in scenes}
    assert rules == {"tens", "word", "end", "any"} and 1 in rows and max(rows) > 50
    loss = [
        p
        for s in scenes
        for st in s["steps"]
        if (st.get("overlay") or {}).get("name") == "loss"
        for p in st["parts"]
        if "·" in (p.get("window") or {}).get("label", "")
    ]
    assert loss, "no case leaves a marked piece out of its window"


def test_a_planted_error_is_caught(client, shown):
    """The page's scene of a trace whose first two source token ids are swapped disagrees with its tokens."""
    name = case_name(*CASES[7])
    t = json.loads(json.dumps(shown[name]["trace"]))
    ids = next(n for n in t["nodes"] if n["id"] == shown[name]["structure"]["personal"]["threads"]["ends"][0]["tokens"])
    ids["data"][0], ids["data"][1] = ids["data"][1], ids["data"][0]
    n, m = len(t["source_tokens"]), len(t["target_tokens"])
    folder = f"/site/scene/{t['model']}"
    documents = {
        "/api/live": client.get("/api/live").json(),
        f"{folder}/{n}.json.gz": shown[name]["structure"],
        f"{folder}/{n}-{m}.diff.json.gz": None,
    }
    planted = run_page_parts({"documents": documents, "cases": [{"trace": t, "model": ""}]})[0]["scene"]
    assert problems(shown[name]["scene"], shown[name]["trace"], shown[name]["structure"]) == []
    assert problems(planted, shown[name]["trace"], shown[name]["structure"]) != []


def test_the_structure_of_a_shape_is_that_of_real_traces(client):
    """Each built cold (the structure cache emptied): from stand-in pieces, and from real inputs of the shape."""
    services = {name: _load(client.app.state, name).service for name in models.NAMES}
    for model, number, step in (
        ("modern", 21, None),
        ("modern", 4321, None),
        ("2017", 999999, None),
        ("2017", 446, 100),
    ):
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


def test_the_browser_draws_curves_as_numpy_rounds_them():
    """static/compute/curves.js: quadratic Bézier curves, n + 1 points each, rounded to 3 decimals as numpy
    rounds (half to even), recomputed here from their formula."""
    script = (
        "import { beziers } from './static/compute/curves.js';\n"
        f"const c = {json.dumps(CURVES)};\n"
        "console.log(JSON.stringify(beziers(c.a, c.c, c.e, c.n)));\n"
    )
    drawn = node_json(script)
    t = np.linspace(0.0, 1.0, CURVES["n"] + 1)[None, :, None]
    a, c, e = (np.asarray(CURVES[k], dtype=np.float64)[:, None, :] for k in "ace")
    assert drawn == np.round((1 - t) ** 2 * a + 2 * (1 - t) * t * c + t * t * e, 3).tolist()
