"""An ablated graph's scene structure from its shape's intact structure and patch (issue 25): Python's rule
(scene/ablated.py `ablated_structure`) gives exactly the structure the server builds from the ablated
trace, and the browser's (static/local/ablated.js, under Node) exactly Python's, float for float, for
random sets of parts switched off in both models and several shapes; a planted error is caught."""

from __future__ import annotations

import copy
import json
import random
import shutil
import subprocess
from pathlib import Path

import orjson
import pytest
import torch

from article.tour import load_tour
from model import models
from model.ablation import parts
from model.train import load
from recorder import parameters, trace
from recorder.documents import Trace
from recorder.record import record
from scene.ablated import ablated_structure, ablation_patch_document
from scene.build import _build_structure

ROOT = Path(__file__).resolve().parents[1]
TOUR = load_tour()
# (model, input, the fixed sets too, how many random sets): both models, short and long inputs; 44 sets
INPUTS = [("2017", 305, True, 9), ("2017", 777777, False, 8), ("modern", 13, True, 9), ("modern", 482917, False, 8)]
torch.set_num_threads(1)


def fixed_sets(ids: list[str]) -> list[list[str]]:
    """Nothing, one head, a pair across the towers, a whole decoder layer, everything."""
    layer = [p for p in ids if p.startswith("dec.1.")]
    return [[], [ids[1]], [ids[1], ids[-1]], layer, ids]


def as_json(scene) -> dict:
    """`Scene.to_json()`, faster (the structure holds no NaN nor ∞, which orjson would write as null)."""
    return orjson.loads(orjson.dumps(scene))


def diff(a, b, path: str = "") -> list[str]:
    """Where two JSON values differ (exactly: floats too), as paths."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b), key=str)
                for d in (diff(a[k], b[k], f"{path}.{k}") if k in a and k in b else [f"{path}.{k}: only one has it"])]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items vs {len(b)}"]
        return [d for k, (x, y) in enumerate(zip(a, b, strict=True)) for d in diff(x, y, f"{path}[{k}]")]
    return [] if a == b and type(a) is type(b) or (a == b and {type(a), type(b)} <= {int, float}) \
        else [f"{path}: {a!r} vs {b!r}"]


def _graph(t, cfg, params, off=()) -> Trace:
    """The graph of a trace's shape (its source pieces and decoder rows) with the parts `off` switched off."""
    off = tuple(p.id for p in parts(cfg) if p.id in off)  # in the model's order, as the recorder keeps them
    g, memory, out_tokens, lenses = record(cfg, params, t.source_tokens, t.target_tokens, frozenset(off), True)
    return Trace(t.number, t.source_tokens, t.target_tokens, out_tokens, g.nodes, list(params), memory=memory,
                 ablation=list(off), lens=lenses)


@pytest.fixture(scope="module")
def cases() -> list[dict]:
    """Per shape met: its intact structure and patch, the sets, and for each the server's structure and
    Python's patched one. The fixed sets are traced as served (greedy decodes without the parts, so the
    shape may change); the random ones over the intact trace's rows (one shape per input, cheaper)."""
    rng, shapes = random.Random(25), {}
    for name, number, fixed, n_random in INPUTS:
        model = load(models.weights_path(name))
        params, cfg = parameters(model), model.cfg
        ids, intact = [p.id for p in parts(cfg)], trace(model, number, params)
        graphs = [trace(model, number, params, ablation=off) for off in fixed_sets(ids) if fixed]
        graphs += [_graph(intact, cfg, params, rng.sample(ids, rng.randint(1, len(ids)))) for _ in range(n_random)]
        for t in graphs:
            key = (name, len(t.source_tokens), len(t.target_tokens))
            if key not in shapes:
                base = _build_structure(_graph(t, cfg, params), cfg, params, TOUR)
                shapes[key] = {"structure": base.to_json(), "sets": [], "built": [], "patched": [],
                               "patch": ablation_patch_document(_graph(t, cfg, params), cfg, params, TOUR, base)}
            c = shapes[key]
            c["sets"].append(list(t.ablation))
            c["built"].append(as_json(_build_structure(t, cfg, params, TOUR)))
            c["patched"].append(ablated_structure(c["structure"], c["patch"], t.ablation))
    return list(shapes.values())


def run_js(cases: list[dict], folder: Path) -> list[list[dict]]:
    """static/local/ablated.js's structure for each case's sets, under Node."""
    (folder / "in.json").write_text(json.dumps({"cases": [{k: c[k] for k in ("structure", "patch", "sets")}
                                                          for c in cases]}))
    subprocess.run(["node", "--no-warnings", str(ROOT / "tests" / "local_ablation.mjs"), str(folder / "in.json"),
                    str(folder / "out.json")], cwd=ROOT, check=True, timeout=60)
    return json.loads((folder / "out.json").read_text())["results"]


def test_the_cases_cover_both_models_many_shapes_and_sets(cases):
    assert len({c["structure"]["config"]["norm_first"] for c in cases}) == 2  # the modern model is pre-norm
    assert len(cases) >= 4 and sum(len(c["sets"]) for c in cases) >= 40
    assert {len(s) for c in cases for s in c["sets"]} >= {0, 1, 2, len(cases[0]["patch"]["parts"])}


def test_pythons_patch_gives_the_structure_the_server_builds_exactly(cases):
    for c in cases:
        for off, built, patched in zip(c["sets"], c["built"], c["patched"], strict=True):
            assert patched == built, (off, diff(patched, built)[:10])


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node to run static/local/")
def test_the_browsers_patch_gives_pythons_structure_float_for_float(cases, tmp_path):
    for c, got in zip(cases, run_js(cases, tmp_path), strict=True):
        for off, mine, patched in zip(c["sets"], got, c["patched"], strict=True):
            assert mine == patched, (off, diff(mine, patched)[:10])  # equal floats: the same operations


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node to run static/local/")
def test_a_planted_error_is_caught_in_both_languages(cases, tmp_path):
    c = next(c for c in cases if any(c["sets"]))
    k, off = next((k, s) for k, s in enumerate(c["sets"]) if s)
    built, rewired = c["built"][k], next(p for p in off if c["patch"]["parts"][p]["rewire"])
    unwired = copy.deepcopy(c["patch"])  # a part switched off whose consumer still reads the part's output
    unwired["parts"][rewired]["rewire"] = []
    taller = copy.deepcopy(c["patch"])  # the browser's layout: every station above the first a hair higher
    taller["layout"]["station_gap"] += 1e-9
    assert any(".inputs[" in d for d in diff(ablated_structure(c["structure"], unwired, off), built))
    js = run_js([{**c, "patch": unwired, "sets": [off]}, {**c, "patch": taller, "sets": [off]}], tmp_path)
    assert any(".inputs[" in d for d in diff(js[0][0], built))
    assert any(".blocks[" in d and d.split(":")[0].endswith(".y") for d in diff(js[1][0], built))
