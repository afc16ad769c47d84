"""The article's live figures computed in the browser (static/local/derived.js), under Node: for 60 server
traces (both models, training snapshots, ablations, one to six digits, inputs whose worked row falls to the
"any" rule, outputs that leave the reference) the figures computed from the trace's own nodes and the model's
recipe (GET /api/live, article/recipe.py, as the API serves it) equal the server's `derived` block: every
string exactly, every number to 1e-9 of its size; so do computeTrace's `derived` option's (liveFigures),
which asks each recipe once. A planted error in the recipe (a sentence, a constant) is caught, and every
sentence of the table is formatted as Python formats it."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import orjson
import pytest

from article.derived import with_figures
from article.lessons import choose_worked
from article.recipe import live_recipe
from model import models
from recorder import trace
from tests import program_cases as pc

ROOT = Path(__file__).resolve().parents[1]
CASES = pc.cases(48, seed=2026, checkpoints=(0, 25, 100, 1000)) + [
    pc.Case("modern", 4), pc.Case("modern", 50), pc.Case("2017", 13, (), 0), pc.Case("2017", 9, (), 25),
    pc.Case("2017", 70, (), 25), pc.Case("2017", 0), pc.Case("2017", 21), pc.Case("modern", 999_999),
    pc.Case("2017", 777_777, (), 0), pc.Case("2017", 100_000, (), 50), pc.Case("modern", 7_000),
    pc.Case("2017", 31, ("dec.1.cross",))]
pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="needs Node to run static/local/")


def served(case: pc.Case) -> dict:
    """The trace as /api/trace sends it: the header with its `derived` block, and the nodes."""
    model = pc.model_of(case.model, case.checkpoint)
    t = with_figures(trace(model, case.number, pc.params_of(case.model, case.checkpoint), ablation=case.ablation),
                     model)
    return orjson.loads(orjson.dumps(t.to_json(), option=orjson.OPT_SERIALIZE_NUMPY))


@pytest.fixture(scope="module")
def traces() -> list[dict]:
    return [served(c) for c in CASES]


@pytest.fixture(scope="module")
def recipes(client) -> dict[str, dict]:
    return {name: client.get("/api/live", params={"model": name}).json() for name in models.NAMES}


def test_the_api_serves_each_models_recipe_cached_with_json_errors(client, recipes):
    for name in models.NAMES:
        assert recipes[name] == orjson.loads(orjson.dumps(live_recipe(pc.model_of(name))))
        r = client.get("/api/live", params={"model": name})
        assert r.status_code == 200 and r.headers["content-type"] == "application/json"
        assert client.get("/api/live", params={"model": name}, headers={"If-None-Match": r.headers["etag"]}
                          ).status_code == 304
    assert recipes[models.DEFAULT] == client.get("/api/live").json()
    bad = client.get("/api/live", params={"model": "gpt"})
    assert bad.status_code == 422 and bad.headers["content-type"] == "application/json"


def write(folder: Path, cases: list[pc.Case], traces: list[dict], recipes: dict[str, dict], plant: str = "") -> None:
    for name in ["", *models.NAMES]:  # "": the default model's, asked without ?model=
        recipe = json.loads(json.dumps(recipes[name or models.DEFAULT]))  # a copy to plant in
        if plant == "sentence":
            recipe["sentences"]["pairs"]["sep"] = "; "
        if plant == "constant":
            recipe["constants"]["label_smoothing"] += 1e-6
        (folder / f"recipe-{name}.json").write_bytes(orjson.dumps(recipe))
    rows = [{"name": repr(c), "asked": "" if c.model == models.DEFAULT and k % 2 else c.model, "trace": t}
            for k, (c, t) in enumerate(zip(cases, traces, strict=True))]
    (folder / "cases.json").write_bytes(orjson.dumps(rows))


def run_node(folder: Path, asked: list[str] | None = None) -> list[dict]:
    out = subprocess.run(["node", "--no-warnings", str(ROOT / "tests" / "local_derived_parity.mjs"), str(folder)],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout)
    if asked is not None:
        asked += report["asked"]
    return report["cases"]


def test_the_cases_cover_what_the_figures_branch_on(traces):
    assert {c.model for c in CASES} == set(models.NAMES) and len({c.checkpoint for c in CASES}) >= 4
    assert sum(bool(c.ablation) for c in CASES) >= 20 and len({len(t["source_tokens"]) for t in traces}) >= 6
    rules = {choose_worked(_Nodes(t))["rule"] for t in traces}
    assert rules == {"word", "any"}
    departs = {t["derived"]["loss_departs"].split(" ")[0] for t in traces}
    assert departs >= {"For", "From"}  # outputs equal to the reference, and outputs that leave it
    assert any(t["derived"]["und_rows"].startswith("row") for t in traces)
    assert any(t["derived"]["exercises"] == [] for t in traces) and any(t["derived"]["exercises"] for t in traces)


def test_the_browser_computes_every_live_figure_of_the_servers_trace(tmp_path, traces, recipes):
    write(tmp_path, CASES, traces, recipes)
    asked = []
    report = run_node(tmp_path, asked)
    assert len(report) == len(CASES)
    assert sorted(asked) == ["/api/live", "/api/live?model=2017", "/api/live?model=modern"]  # each once
    assert [(r["name"], r["problems"]) for r in report if r["problem_count"]] == []


@pytest.mark.parametrize("plant", ["sentence", "constant"])
def test_a_planted_error_is_caught(tmp_path, traces, recipes, plant):
    write(tmp_path, CASES[:3], traces[:3], recipes, plant)
    assert all(r["problem_count"] > 0 for r in run_node(tmp_path))


class _Nodes:
    """A served trace's nodes as choose_worked reads them (id, value)."""

    def __init__(self, served_trace: dict):
        import numpy as np

        self.source_tokens = served_trace["source_tokens"]
        self.nodes = [type("N", (), {"id": n["id"], "value": np.array(n["data"], dtype=np.float64).reshape(n["shape"])})
                      for n in served_trace["nodes"] if n["id"].endswith(".weights")]

    def node(self, node_id: str):
        return next(n for n in self.nodes if n.id == node_id)


# the numbers the formats round most easily wrong: exact ties (0.0625 at 3 decimals, 0.125 at 2), −0, a
# negative rounding to zero, binary values just off a tie, and a rate's general form
AWKWARD = [0.0625, 0.125, -0.0, -0.0004, 2.675, 1.0005, -1.5, 0.1, 0.9, 1e-5, 123456.5, 999999.5, -2.5e-300, 7.0,
           1e22, 0.00012345650000000001]


def test_the_browser_formats_every_sentence_of_the_table_as_python_does():
    from article.sentences import PLACEHOLDER, SENTENCES, fill

    probes = {f"probe {spec}": f"{{x:{spec}}}" for spec in (".3m", ".2m", ".3f", ".2f", "g")}
    table = {**SENTENCES, **probes}
    cases = [{"entry": entry, "values": {"x": x}} for entry in probes for x in AWKWARD]
    for k, (entry, template) in enumerate(SENTENCES.items()):
        text = template if isinstance(template, str) else template["item"]
        for j in range(3):
            cases.append({"entry": entry, "values": {
                name: AWKWARD[(k + j + i) % len(AWKWARD)] if spec else f"w{i}" if i % 2 else k + i
                for i, (name, spec) in enumerate(PLACEHOLDER.findall(text))}})
    for c in cases:
        t = table[c["entry"]]
        c["said"] = fill(t, c["values"]) if isinstance(t, str) else t["sep"].join([fill(t["item"], c["values"])] * 2)
    script = ("import { sentences } from './static/local/sentences.js';\n"
              f"const table = {json.dumps(table)}, cases = {json.dumps(cases)};\n"
              "const s = sentences(table);\n"
              "const ours = cases.map((c) => typeof table[c.entry] === 'string' ? s.say(c.entry, c.values)\n"
              "  : s.listed(c.entry, [c.values, c.values]));\n"
              "console.log(JSON.stringify(ours));\n")
    out = subprocess.run(["node", "--no-warnings", "--input-type=module", "-e", script], cwd=ROOT, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    ours = json.loads(out.stdout)
    assert [(c["entry"], c["values"], o) for c, o in zip(cases, ours, strict=True) if o != c["said"]] == []
    assert {"0.062", "0.12", "\u22120.000", "-0.000", "1e-05"} <= {c["said"] for c in cases}
