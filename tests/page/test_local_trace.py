"""The trace and the beam table computed in JS (static/compute/trace.js) are the server's, under Node
against the running server: for 30 requests (both models, ablations, training snapshots, digits and words)
computeTrace without the page's parts (`parts: false`) gives the compact trace as the page decodes it — every
header field equal (the lens's probabilities to the engine's rule), every node's id, op, inputs, attrs,
shape, dtype and form equal (a float32 node's data a Float32Array, others the JSON's arrays) and its values
to tests/engine_compare.mjs's rule; for 15 refused requests (input, ablation, checkpoint, model) the same 422
and message word for word; for 50 inputs computeBeam gives /api/beam (and its refusals for 3 more). A planted
error (the program's lens count, ablation message and beam α, the weights) fails every comparison."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest

from model import models
from model.numbers import to_english
from tests import program_cases as pc

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.node

REFUSED = [  # (input, ablation, checkpoint, model): each refused by one of the API's rules
    ("", [], None, ""),
    ("   ", [], None, "modern"),
    ("-5", [], None, ""),
    ("1000000", [], None, ""),
    ("forty twelve", [], None, ""),
    ("zwölf", [], None, ""),
    ("7", ["enc.2.self"], None, ""),
    ("7", ["enc.0.ffn.h1", "x"], None, ""),
    ("7", ["dec.0.self.h4"], None, "modern"),
    ("7", ["enc.0.cross", "enc.\u0663.self"], None, ""),
    ("7", ["e" * 2001], None, ""),
    ("7", ["enc.01.self\u200b'"], None, ""),
    ("7", [], " 0\u00a0'\"", ""),
    ("7", [], "0", "modern"),
    ("7", [], None, "gpt"),
]


def spelt(number: int, k: int) -> str:
    """The input as a reader might type it: digits, grouped digits, or English words."""
    return [str(number), f"{number:,}".replace(",", " "), " ".join(to_english(number)).upper()][k % 3]


def trace_cases() -> list[dict]:
    out = []
    for k, c in enumerate(pc.cases(30, seed=1025, checkpoints=(0, 100, 1000, 4000))):
        options = {
            "ablation": list(c.ablation),
            "checkpoint": c.checkpoint,
            "model": "" if c.model == models.DEFAULT and k % 4 else c.model,
        }
        out.append({"name": repr(c), "kind": "trace", "input": spelt(c.number, k), "options": options})
    for text, ablation, checkpoint, model in REFUSED:
        out.append(
            {
                "name": f"refused {text!r} {ablation!r} {checkpoint!r} {model!r}",
                "kind": "trace",
                "input": text,
                "options": {"ablation": ablation, "checkpoint": checkpoint, "model": model},
            }
        )
    return out


BEAM_REFUSED = ["", "one million", "12 34"]


def beam_cases(count: int) -> list[dict]:
    """`count` inputs over both models, then inputs /api/beam refuses."""
    rng = random.Random(50)
    return [
        {
            "name": f"beam {n} {models.NAMES[k % 2]}",
            "kind": "beam",
            "input": spelt(n, k),
            "options": {"model": models.NAMES[k % 2]},
        }
        for k, n in enumerate(rng.sample(range(1_000_000), count))
    ] + [
        {"name": f"beam refused {text!r}", "kind": "beam", "input": text, "options": {"model": ""}}
        for text in BEAM_REFUSED
    ]


def run_node(folder: Path, base: str, cases: list[dict], plant: bool = False) -> list[dict]:
    (folder / "cases.json").write_text(json.dumps(cases))
    script = ROOT / "tests" / "local_trace_parity.mjs"
    command = ["node", "--no-warnings", str(script), base, str(folder / "cases.json")]
    out = subprocess.run(command + (["plant"] if plant else []), cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout)


def test_the_js_trace_and_beam_table_are_the_servers(tmp_path, live_server):
    cases = trace_cases()
    assert sum(bool(c["options"]["ablation"]) for c in cases[:30]) >= 10
    assert len({c["options"]["checkpoint"] for c in cases[:30]}) >= 3 and {c["options"]["model"] for c in cases} >= {
        "",
        *models.NAMES,
    }
    report = run_node(tmp_path, live_server, cases + beam_cases(50))
    assert [(r["name"], r["problems"]) for r in report if r["problem_count"]] == []
    traces, refused, beams = report[:30], report[30 : len(cases)], report[len(cases) :]
    assert all(r["refused"] is None and r["nodes"] > 200 for r in traces)
    assert all(r["refused"]["status"] == 422 and r["refused"]["message"] for r in refused)
    assert len(beams) == 50 + len(BEAM_REFUSED) and all(r["refused"] is None for r in beams[:50])
    assert all(r["refused"]["status"] == 422 for r in beams[50:])


def test_a_planted_error_fails_every_comparison(tmp_path, live_server):
    cases = [
        *trace_cases()[:4],
        *[c for c in trace_cases() if c["options"]["ablation"] == ["enc.2.self"]],
        *beam_cases(2)[:2],
    ]
    report = run_node(tmp_path, live_server, cases, plant=True)
    said = [" ".join(r["problems"]) for r in report]
    assert all("lens" in s and "node" in s for s in said[:4]), said[:4]  # the lens count, the weights
    assert said[4].startswith("refusal") and all(said[5:]), said[4:]  # the ablation message, beam's alpha
