"""The browser's engine (static/engine/) computes the whole trace itself, under Node: for 30 inputs over
both models, several ablations and training snapshots, greedy decoding over the program (GET /api/program's
document) and the weights gives the server's trace node for node (ids, ops, inputs, attrs, shapes, dtypes;
values to the parity rule of tests/program_cases.py; the token lists equal), and beam search gives
/api/beam's table. Planted errors (a nudged weight, a program with a wrong attribute) are caught."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import orjson
import pytest

from model import models
from model.vocab import VOCAB
from tests import program_cases as pc
from tests.in_page import node_script

ROOT = Path(__file__).resolve().parents[2]
CASES = pc.cases(30, seed=2025)
BEAMS = [pc.Case(models.NAMES[k % 2], n) for k, n in enumerate(pc.random.Random(50).sample(range(1_000_000), 50))]
pytestmark = pytest.mark.node


def weights_doc(params: dict) -> bytes:
    """/api/weights' JSON form of a set of parameters."""
    doc = {"parameters": [{"id": k, "shape": list(v.shape), "data": v.ravel()} for k, v in params.items()]}
    return orjson.dumps(doc, option=orjson.OPT_SERIALIZE_NUMPY)


def beam_table(case: pc.Case) -> dict:
    """/api/beam's steps, finished list and best for the case's input (app/service/model_service.py beam_doc's rule)."""
    from app.service.model_service import BEAM_ALPHA, BEAM_SIZE
    from model.decode import beam_search

    r = beam_search(pc.model_of(case.model), VOCAB.ids(VOCAB.source_tokens(case.number)), BEAM_SIZE, BEAM_ALPHA)

    def said(h, done: bool) -> dict:
        return {
            "tokens": VOCAB.tokens_of(h.tokens),
            "log_prob": h.log_prob,
            "length_penalty": h.length_penalty if done else None,
            "score": h.score if done else None,
        }

    return {
        "steps": [
            {
                "step": s["step"],
                "alive": [{**h, "length_penalty": None, "score": None} for h in s["alive"]],
                "finished": s["finished"],
            }
            for s in r.steps
        ],
        "finished": [said(h, True) for h in r.finished],
        "best": said(r.best, True),
    }


def planted(program: dict, params: dict, plant: str) -> tuple[dict, dict]:
    """The program and parameters with an error planted: "attr", a wrong epsilon in every norm (the graph no
    longer is the trace's); "weight", the first encoder map nudged by 1e-3 (values move past the rule)."""
    if plant == "attr" and program:
        program = {
            **program,
            "nodes": [
                {**x, "attrs": {**x["attrs"], "epsilon": 1e-3}} if "epsilon" in x["attrs"] else x
                for x in program["nodes"]
            ],
        }
    if plant == "weight" and params:
        first = next(p for p in params if p.startswith("enc"))
        params = {**params, first: params[first] + 1e-3}
    return program, params


def write(folder: Path, cases: list[pc.Case], plant: str = "", beams: list[pc.Case] = ()) -> None:
    """The files the Node script reads: each model's program, each set of weights, and per case its
    source ids with the server's trace (or, for `beams`, /api/beam's table)."""
    for name in models.NAMES:
        (folder / f"program-{name}.json").write_text(json.dumps(planted(pc.program_of(name), {}, plant)[0]))
    for case in {(c.model, c.checkpoint) for c in [*cases, *beams]}:
        params = planted({}, pc.params_of(*case), plant)[1]
        (folder / f"weights-{case[0]}-{case[1]}.json").write_bytes(weights_doc(params))
    rows = [
        {
            "name": repr(b),
            "model": b.model,
            "weights": f"weights-{b.model}-None",
            "ablation": [],
            "trace": None,
            "source_ids": VOCAB.ids(VOCAB.source_tokens(b.number)),
            "beam": beam_table(b),
        }
        for b in beams
    ]
    for case in cases:
        t = pc.traced(case)
        rows.append(
            {
                "name": repr(case),
                "model": case.model,
                "weights": f"weights-{case.model}-{case.checkpoint}",
                "ablation": t["ablation"],
                "source_ids": VOCAB.ids(t["source_tokens"]),
                "trace": t,
                "beam": None,
            }
        )
    (folder / "cases.json").write_bytes(orjson.dumps(rows))


def run_node(folder: Path) -> dict:
    return node_script("engine_parity.mjs", folder)


def test_the_engine_computes_every_traces_nodes_and_beams_table(tmp_path):
    assert len({c.model for c in CASES}) == 2 and sum(bool(c.ablation) for c in CASES) >= 10
    assert len({c.checkpoint for c in CASES}) >= 3
    write(tmp_path, CASES, beams=BEAMS)
    report = run_node(tmp_path)
    traces = [c for c in report["cases"] if c["nodes"] is not None]
    assert len(traces) == len(CASES) and all(c["nodes"] > 200 for c in traces)
    assert [(c["name"], c["problem_count"], c["problems"]) for c in traces if c["problem_count"]] == []
    beams = [(c["name"], c["beam"]) for c in report["cases"] if c["beam"] is not None]
    assert len(beams) == len(BEAMS) and [b for b in beams if b[1]] == []


@pytest.mark.parametrize("plant", ["weight", "attr"])
def test_a_planted_error_is_caught(tmp_path, plant):
    write(tmp_path, CASES[:4], plant, beams=BEAMS[:2] if plant == "weight" else [])
    report = run_node(tmp_path)
    assert all(c["problem_count"] > 0 for c in report["cases"] if c["nodes"] is not None), report["cases"]
    assert all(c["beam"] for c in report["cases"] if c["beam"] is not None)


def test_the_engine_computes_every_operator_the_panel_explains_and_every_one_a_program_uses():
    script = (
        "import { EXPLAINED_OPS } from './static/stage/explain.js';\n"
        "import { COMPUTED_OPS } from './static/engine/ops.js';\n"
        "console.log(JSON.stringify({ explained: EXPLAINED_OPS, computed: COMPUTED_OPS }));\n"
    )
    out = subprocess.run(
        ["node", "--no-warnings", "--input-type=module", "-e", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    ops = json.loads(out)
    given = {"Constant", "Parameter"}  # values the trace gives, not computations
    assert set(ops["explained"]) - given <= set(ops["computed"])
    used = {x["op"] for name in models.NAMES for x in pc.program_of(name)["nodes"]} - given
    used |= {s["op"] for name in models.NAMES for x in pc.program_of(name)["nodes"] for s in x.get("compute", [])}
    assert used <= set(ops["computed"]) and used - set(ops["explained"]) <= {
        "Identity",
        "Range",
        "Unsqueeze",
        "Equal",
        "LessOrEqual",
        "Not",
        "And",
    }
