"""The article's live figures computed in the browser (static/compute/derived.js), under Node: for 60 served
traces (both models, training snapshots, ablations, one to six digits, inputs whose worked row falls to the
"any" rule, outputs that leave the reference) every figure is computed from the trace's own nodes and the
model's recipe (GET /api/live, article/recipe.py, as the API serves it), no sentence left unfilled, and the
figures numpy recomputes from the trace's probabilities (each row's loss, the smoothed loss and its mean and
sum, the least certain choice) equal them to 1e-9 of their size; so do computeTrace's `derived` option's
(liveFigures), which asks each recipe once. A planted error in the recipe (a sentence, a constant) is caught,
and every sentence of the table is formatted as Python's format language says."""

from __future__ import annotations

import json
import math
import re
import string
import subprocess
from pathlib import Path

import numpy as np
import orjson
import pytest

from article.format import format_number
from article.recipe import live_recipe
from model import models
from model.vocab import VOCAB
from tests import program_cases as pc
from tests.in_page import PageRequest, node_script

ROOT = Path(__file__).resolve().parents[2]
CASES = pc.cases(48, seed=2026, checkpoints=(0, 25, 100, 1000)) + [
    pc.Case("modern", 4),
    pc.Case("modern", 50),
    pc.Case("2017", 13, (), 0),
    pc.Case("2017", 9, (), 25),
    pc.Case("2017", 70, (), 25),
    pc.Case("2017", 0),
    pc.Case("2017", 21),
    pc.Case("modern", 999_999),
    pc.Case("2017", 777_777, (), 0),
    pc.Case("2017", 100_000, (), 50),
    pc.Case("modern", 7_000),
    pc.Case("2017", 31, ("dec.1.cross",)),
]
pytestmark = pytest.mark.node
RELATIVE = 1e-9


@pytest.fixture(scope="module")
def traces(client) -> list[dict]:
    """Each case's trace as /api/trace sends it (JSON form)."""
    out = []
    for c in CASES:
        query = PageRequest(str(c.number), model=c.model, ablate=",".join(c.ablation), checkpoint=c.checkpoint).query()
        r = client.get(f"/api/trace?{query}")
        assert r.status_code == 200, r.text[:300]
        out.append(r.json())
    return out


@pytest.fixture(scope="module")
def recipes(client) -> dict[str, dict]:
    return {name: client.get("/api/live", params={"model": name}).json() for name in models.NAMES}


def test_the_api_serves_each_models_recipe_cached_with_json_errors(client, recipes):
    for name in models.NAMES:
        assert recipes[name] == orjson.loads(orjson.dumps(live_recipe(pc.model_of(name))))
        r = client.get("/api/live", params={"model": name})
        assert r.status_code == 200 and r.headers["content-type"] == "application/json"
        assert (
            client.get("/api/live", params={"model": name}, headers={"If-None-Match": r.headers["etag"]}).status_code
            == 304
        )
    assert recipes[models.DEFAULT] == client.get("/api/live").json()
    bad = client.get("/api/live", params={"model": "gpt"})
    assert bad.status_code == 422 and bad.headers["content-type"] == "application/json"


def write(folder: Path, cases: list[pc.Case], traces: list[dict], recipes: dict[str, dict], plant: str = "") -> None:
    for name in ["", *models.NAMES]:  # "": the default model's, asked without ?model=
        recipe = json.loads(json.dumps(recipes[name or models.DEFAULT]))  # a copy to plant in
        if plant == "sentence":
            recipe["sentences"]["position_losses"]["sep"] = "; "
        if plant == "constant":
            recipe["constants"]["label_smoothing"] += 1e-6
        (folder / f"recipe-{name}.json").write_bytes(orjson.dumps(recipe))
    rows = [
        {"name": repr(c), "asked": "" if c.model == models.DEFAULT and k % 2 else c.model, "trace": t}
        for k, (c, t) in enumerate(zip(cases, traces, strict=True))
    ]
    (folder / "cases.json").write_bytes(orjson.dumps(rows))


def run_node(folder: Path, asked: list[str] | None = None) -> list[dict]:
    """Each case's figures as liveFigures computes them, and where derivedFigures disagrees with it."""
    report = node_script("local_derived_parity.mjs", folder)
    if asked is not None:
        asked += report["asked"]
    return report["cases"]


def recomputed(t: dict, eps: float) -> dict:
    """The loss figures and the least certain choice, from the trace's probabilities with numpy."""
    node = next(n for n in t["nodes"] if n["id"] == "out.probs")
    probs = np.asarray(node["data"], dtype=node["dtype"]).astype(np.float64)  # float32, as the page holds them
    probs = probs.reshape(len(t["target_tokens"]), -1)
    chosen = probs.argmax(axis=1)
    p_chosen = probs[np.arange(len(chosen)), chosen]
    out, reference, v = t["output_tokens"], VOCAB.target_tokens(t["input"]["number"]), probs.shape[1]
    forced = [r for r in range(len(out)) if r < len(reference) and out[:r] == reference[:r]]
    losses = []
    for r in forced:
        q = np.full(v, eps / v)
        q[VOCAB.ids([reference[r]])[0]] += 1 - eps
        losses.append(-(q * np.log(probs[r])).sum())
    return {
        "least_certain_prob": p_chosen.min(),
        "mean_position_loss": -np.log(p_chosen).mean(),
        "loss_sum": sum(losses),
        "loss_mean": sum(losses) / max(len(forced), 1),
        "rows": dict(zip(forced, losses, strict=True)),
    }


def numpy_problems(figures: dict, t: dict, eps: float) -> list[str]:
    want, out = recomputed(t, eps), []
    for key in ("least_certain_prob", "mean_position_loss", "loss_sum", "loss_mean"):
        if not math.isclose(figures[key], want[key], rel_tol=RELATIVE, abs_tol=1e-300):
            out.append(f"{key}: {figures[key]} ≠ numpy's {want[key]}")
    rows = {x["row"]: x["loss"] for x in figures["loss_rows"] if x["forced"]}
    if list(rows) != list(want["rows"]) or not all(
        math.isclose(rows[r], want["rows"][r], rel_tol=RELATIVE) for r in rows
    ):
        out.append("loss_rows: not numpy's smoothed loss of each training row")
    unfilled = [k for k, x in figures.items() if isinstance(x, str) and "{" in x]
    return out + [f"{k}: a sentence left unfilled" for k in unfilled]


def test_the_cases_cover_what_the_figures_branch_on(tmp_path, traces, recipes):
    assert {c.model for c in CASES} == set(models.NAMES) and len({c.checkpoint for c in CASES}) >= 4
    assert sum(bool(c.ablation) for c in CASES) >= 20 and len({len(t["source_tokens"]) for t in traces}) >= 6
    write(tmp_path, CASES, traces, recipes)
    figures = [r["figures"] for r in run_node(tmp_path)]
    said = {"is a tens word": "tens", "no tens word here": "word", "end token's row": "end", "no row of": "any"}
    rules = {rule for f in figures for words, rule in said.items() if words in f["worked_reason"]}
    assert rules == {"tens", "word", "end", "any"}
    departs = {f["loss_departs"].split(" ")[0] for f in figures}
    assert departs >= {"For", "From"}  # outputs equal to the reference, and outputs that leave it
    assert any(f["und_rows"].startswith("row") for f in figures)
    assert any(f["exercises"] == [] for f in figures) and any(f["exercises"] for f in figures)


def test_the_browser_computes_every_live_figure_of_the_servers_trace(tmp_path, traces, recipes):
    write(tmp_path, CASES, traces, recipes)
    asked = []
    report = run_node(tmp_path, asked)
    assert len(report) == len(CASES)
    assert sorted(asked) == ["/api/live", "/api/live?model=2017", "/api/live?model=modern"]  # each once
    eps = recipes[models.DEFAULT]["constants"]["label_smoothing"]
    problems = [
        (r["name"], r["problems"] + numpy_problems(r["figures"], t, eps)) for r, t in zip(report, traces, strict=True)
    ]
    assert [(name, p) for name, p in problems if p] == []


def test_a_planted_error_is_caught(tmp_path, traces, recipes):
    write(tmp_path, CASES[:3], traces[:3], recipes)
    fair = [r["figures"] for r in run_node(tmp_path)]
    eps = recipes[models.DEFAULT]["constants"]["label_smoothing"]
    write(tmp_path, CASES[:3], traces[:3], recipes, "constant")
    assert all(numpy_problems(r["figures"], t, eps) for r, t in zip(run_node(tmp_path), traces[:3], strict=True))
    write(tmp_path, CASES[:3], traces[:3], recipes, "sentence")
    planted = [r["figures"] for r in run_node(tmp_path)]
    assert all(
        p["position_losses"] != f["position_losses"] and "; " in p["position_losses"]
        for p, f in zip(planted, fair, strict=True)
    )


# the numbers the formats round most easily wrong: exact ties (0.0625 at 3 decimals, 0.125 at 2), −0, a
# negative rounding to zero, binary values just off a tie, and a rate's general form
AWKWARD = [
    0.0625,
    0.125,
    -0.0,
    -0.0004,
    2.675,
    1.0005,
    -1.5,
    0.1,
    0.9,
    1e-5,
    123456.5,
    999999.5,
    -2.5e-300,
    7.0,
    1e22,
    0.00012345650000000001,
]


PLACEHOLDER = re.compile(r"\{(\w+)(?::(\.\d[mf]|g))?\}")  # what a template may hold: {name}, {name:.Nm|.Nf|g}


class _PageFormat(string.Formatter):
    """The sentences' placeholders by the page's one way of printing a number, in its Python twin
    (article/format.py, held equal to static/js/format.js by tests/page/test_format.py): .Nf is fixedN, .Nm the same
    with a true minus sign, g is sig6."""

    def format_field(self, value: object, spec: str) -> str:
        if spec == "g":
            return format_number(value, "sig6")
        if spec:
            text = format_number(value, f"fixed{spec[1]}")
            return text.replace("-", "\u2212") if spec.endswith("m") else text
        return format(value, spec)


def fill(template: str, values: dict) -> str:
    return _PageFormat().vformat(template, (), values)


def test_the_page_fills_every_sentence_of_the_table_with_the_pages_number_formats(recipes):
    SENTENCES = recipes[models.DEFAULT]["sentences"]  # noqa: N806 — the table the page formats, as served
    assert all(
        set(PLACEHOLDER.sub("", t if isinstance(t, str) else t["item"])).isdisjoint("{}") for t in SENTENCES.values()
    )  # nothing else of the format language
    probes = {f"probe {spec}": f"{{x:{spec}}}" for spec in (".3m", ".2m", ".3f", ".2f", "g")}
    table = {**SENTENCES, **probes}
    cases = [{"entry": entry, "values": {"x": x}} for entry in probes for x in AWKWARD]
    for k, (entry, template) in enumerate(SENTENCES.items()):
        text = template if isinstance(template, str) else template["item"]
        for j in range(3):
            cases.append(
                {
                    "entry": entry,
                    "values": {
                        name: AWKWARD[(k + j + i) % len(AWKWARD)] if spec else f"w{i}" if i % 2 else k + i
                        for i, (name, spec) in enumerate(PLACEHOLDER.findall(text))
                    },
                }
            )
    for c in cases:
        t = table[c["entry"]]
        c["said"] = fill(t, c["values"]) if isinstance(t, str) else t["sep"].join([fill(t["item"], c["values"])] * 2)
    script = (
        "import { sentences } from './static/compute/sentences.js';\n"
        f"const table = {json.dumps(table)}, cases = {json.dumps(cases)};\n"
        "const s = sentences(table);\n"
        "const ours = cases.map((c) => typeof table[c.entry] === 'string' ? s.say(c.entry, c.values)\n"
        "  : s.listed(c.entry, [c.values, c.values]));\n"
        "console.log(JSON.stringify(ours));\n"
    )
    out = subprocess.run(
        ["node", "--no-warnings", "--input-type=module", "-e", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    ours = json.loads(out.stdout)
    assert [(c["entry"], c["values"], o) for c, o in zip(cases, ours, strict=True) if o != c["said"]] == []
    assert {"0.063", "0.13", "\u22120.000", "-0.000", "1·10^-5"} <= {c["said"] for c in cases}  # exact halves up
