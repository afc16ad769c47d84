"""The program (recorder/program.py, GET /api/program) is the trace's graph, free of the input's length (what
the static build computes a trace from): instantiated at a trace's lengths and ablation it gives exactly the
trace's nodes (ids, ops, inputs, attributes, shapes, dtypes, in order), for inputs of every length, both
models, many ablations and training snapshots; run with numpy (tests/onnx_numpy.py's operators, no torch) it
gives the trace's values; and the API serves it, checked and cached."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from model import models
from model.vocab import VOCAB
from recorder.program import build_program, instantiate
from tests import program_cases as pc
from tests.program_numpy import run

CASES = pc.cases(48, seed=25)


def graph_of(trace: dict) -> list[dict]:
    return [{k: n[k] for k in ("id", "op", "inputs", "attrs", "shape", "dtype")} for n in trace["nodes"]]


@pytest.mark.parametrize("name", models.NAMES)
def test_the_program_has_no_length_in_it(name):
    """Nothing but n and m varies: the same document whichever lengths it is recorded at."""
    program = pc.program_of(name)
    assert program["nodes"] and all(isinstance(d, int) or d in ("n", "m") for x in program["nodes"] for d in x["shape"])
    assert {d for x in program["nodes"] for d in x["shape"] if isinstance(d, str)} == {"n", "m"}
    assert all("value" in x or "compute" in x for x in program["nodes"] if x["op"] == "Constant")
    gated = {x["when_off"] for x in program["nodes"] if "when_off" in x}
    assert gated == set(program["parts"])  # every part an ablation may switch off has its gate


def test_instantiating_the_program_gives_every_traces_graph():
    assert len({c.model for c in CASES}) == 2 and sum(bool(c.ablation) for c in CASES) >= 20
    assert len({c.checkpoint for c in CASES}) >= 3
    lengths = set()
    for case in CASES:
        t = pc.traced(case)
        n, m = len(t["source_tokens"]), len(t["target_tokens"])
        lengths.add((n, m))
        assert instantiate(pc.program_of(case.model), n, m, frozenset(t["ablation"])) == graph_of(t), case
    assert len(lengths) >= 8


def test_a_planted_difference_is_found():
    """The comparison can fail: another length, a missing ablation, a changed attribute each differ."""
    case = next(c for c in CASES if c.ablation)
    t, program = pc.traced(case), pc.program_of(case.model)
    n, m, off = len(t["source_tokens"]), len(t["target_tokens"]), frozenset(t["ablation"])
    assert instantiate(program, n + 1, m, off) != graph_of(t)
    assert instantiate(program, n, m, frozenset()) != graph_of(t)
    wrong = {
        **program,
        "nodes": [
            {**x, "attrs": {**x["attrs"], "epsilon": 1e-6}} if "epsilon" in x["attrs"] else x for x in program["nodes"]
        ],
    }
    assert instantiate(wrong, n, m, off) != graph_of(t)


def test_running_the_program_with_numpy_gives_the_traces_values():
    for case in CASES[:10]:
        t = pc.traced(case)
        got = run(
            pc.program_of(case.model),
            pc.params_of(case.model, case.checkpoint),
            VOCAB.ids(t["source_tokens"]),
            VOCAB.ids(t["target_tokens"]),
            frozenset(t["ablation"]),
        )
        for node in t["nodes"]:
            want = np.array([-np.inf if v is None else v for v in node["data"]], dtype=np.float64)
            value = got[node["id"]].astype(np.float64).ravel()
            assert list(got[node["id"]].shape) == node["shape"], node["id"]
            assert pc.close(value, want), (case, node["id"])
        assert VOCAB.tokens_of(got["out.tokens"].tolist()) == t["output_tokens"]


def test_the_api_serves_each_models_program_cached_with_json_errors(client):
    for name in models.NAMES:
        r = client.get("/api/program", params={"model": name})
        assert r.status_code == 200 and r.headers["content-type"] == "application/json"
        doc = r.json()
        assert doc["nodes"] == pc.program_of(name)["nodes"] and doc["model"] == name
        assert doc["vocabulary"]["pieces"] == VOCAB.tokens and doc["decoding"]["beam_size"] == 4
        again = client.get("/api/program", params={"model": name}, headers={"If-None-Match": r.headers["etag"]})
        assert again.status_code == 304
    steps = client.get("/api/program").json()["weights"]["checkpoints"]
    assert steps["100"] == "/api/weights?checkpoint=100"
    bad = client.get("/api/program", params={"model": "gpt"})
    assert bad.status_code == 422 and "2017" in bad.text and bad.headers["content-type"] == "application/json"


def test_the_program_is_small():
    """Both models' programs, gzipped: a few tens of kilobytes each (the report quotes the figures)."""
    for name in models.NAMES:
        body = pc.orjson.dumps(
            build_program(pc.model_of(name).cfg, pc.params_of(name), name), option=pc.orjson.OPT_SERIALIZE_NUMPY
        )
        assert len(gzip.compress(body)) < 40_000
