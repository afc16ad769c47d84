"""Parity in Chromium against the running server, for the static build: for 300 random inputs over both models, ten
ablations and five training snapshots (drawn from the programs' own lists, GET /api/program), typed as
digits, grouped digits or English words, the static page's trace, which the page computes itself
(static/compute/trace.js computeTrace over static/js/api.js keptDocuments: static/engine/ over the program and
the weights it names, the live figures, the scene), equals the served page's, /api/trace as the page decodes
it with the page's parts added (static/compute/page_parts.js over the server's tensors), node for node (ids,
ops, inputs, attributes, shapes, dtypes; values to tests/engine_compare.mjs's rule; the token lists and every
header field equal), its live figures to tests/local_compare.mjs's OWN_FIGURES and the scene the stage draws
exactly. One page for the whole module; the comparison runs in the page, which answers only the differences."""

from __future__ import annotations

import random
from pathlib import Path

import httpx
import pytest

from model import models
from model.numbers import to_english
from tests.browser import has_chromium

pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.skipif(not has_chromium(), reason="Debian chromium is not installed")
TESTS = Path(__file__).resolve().parents[1]
COUNT, ABLATIONS, CHECKPOINTS = 300, 10, 5


def spelt(number: int, k: int) -> str:
    """The input as a reader might type it: digits, grouped digits, or English words."""
    return [str(number), f"{number:,}".replace(",", " "), " ".join(to_english(number))][k % 3]


def cases(programs: dict[str, dict], count: int, seed: int) -> list[dict]:
    """`count` inputs of one to six digits: both models in turn (the default one asked by name and without),
    ten ablations drawn from the model's parts (and none) in turn, and for a model with training snapshots
    five of them (and the trained model) in turn."""
    rng = random.Random(seed)
    ablations = {
        name: [[]] + [sorted(rng.sample(p["parts"], rng.choice((1, 1, 2, 3)))) for _ in range(ABLATIONS)]
        for name, p in programs.items()
    }
    snapshots = {
        name: [None, *sorted(rng.sample([int(s) for s in p["weights"]["checkpoints"]], CHECKPOINTS))]
        if p["weights"]["checkpoints"]
        else [None]
        for name, p in programs.items()
    }
    out = []
    for k in range(count):
        model = models.NAMES[k % 2]
        digits = rng.randrange(1, 7)
        number = rng.randrange(10 ** (digits - 1) if digits > 1 else 0, 10**digits)
        out.append(
            {
                "input": spelt(number, k // 2),
                "options": {
                    "ablation": ablations[model][(k // 2) % (ABLATIONS + 1)],
                    "checkpoint": snapshots[model][(k // 2) % len(snapshots[model])],
                    "model": "" if model == models.DEFAULT and k % 4 == 0 else model,
                },
            }
        )
    return out


def serve_tests(context, base: str) -> None:
    """This folder's modules at /test-modules/… of the server's origin (answered by Playwright, never by the
    server), so the page imports them as its own: the site's content policy admits only its origin."""
    context.route(
        f"{base}/test-modules/*",
        lambda route: route.fulfill(
            status=200, content_type="text/javascript", body=(TESTS / route.request.url.rsplit("/", 1)[1]).read_text()
        ),
    )


@pytest.fixture(scope="module")
def programs(live_server) -> dict[str, dict]:
    return {
        name: httpx.get(f"{live_server}/api/program", params={"model": name}, timeout=30).json()
        for name in models.NAMES
    }


@pytest.fixture(scope="module")
def page(browser, live_server):
    context = browser.new_context()
    serve_tests(context, live_server)
    p = context.new_page()
    p.goto(f"{live_server}/healthz")
    p.evaluate("async () => { await import('/test-modules/browser_local_parity.mjs'); return true; }")
    yield p
    context.close()


@pytest.fixture(scope="module")
def batch(programs) -> list[dict]:
    return cases(programs, COUNT, seed=25)


@pytest.fixture(scope="module")
def parity(page, batch) -> dict:
    """The page's report on the whole batch (browser_local_parity.mjs), once for the module."""
    return page.evaluate("(cases) => window.localParity(cases)", batch)


def failing(parity: dict, batch: list[dict], part: str, ablated: bool | None = None) -> list:
    return [
        (batch[f["k"]], f["parts"][part])
        for f in parity["failures"]
        if part in f["parts"] and (ablated is None or bool(batch[f["k"]]["options"]["ablation"]) == ablated)
    ]


def test_the_cases_cover_both_models_ten_ablations_five_snapshots_and_every_spelling(batch, programs):
    options = [c["options"] for c in batch]
    assert len(batch) == COUNT and {o["model"] for o in options} == {"", *models.NAMES}
    for name in models.NAMES:
        mine = [o for o in options if (o["model"] or models.DEFAULT) == name]
        assert len({tuple(o["ablation"]) for o in mine}) == ABLATIONS + 1
        assert {o["checkpoint"] for o in mine} - {None} <= {int(s) for s in programs[name]["weights"]["checkpoints"]}
    assert len({o["checkpoint"] for o in options} - {None}) == CHECKPOINTS
    assert any(" " in c["input"] and c["input"][0].isdigit() for c in batch) and any(
        c["input"][0].isalpha() for c in batch
    )


def test_the_browsers_trace_equals_the_servers_node_for_node(parity, batch):
    assert [(c, p) for c, p in failing(parity, batch, "threw") + failing(parity, batch, "server")] == []
    assert failing(parity, batch, "trace") == []
    assert parity["nodes"] > COUNT * 200


def test_the_static_pages_live_figures_equal_the_served_pages(parity, batch):
    assert failing(parity, batch, "derived") == []


def test_the_scene_the_stage_draws_equals_the_served_pages(parity, batch):
    assert failing(parity, batch, "scene", ablated=False) == []


def test_the_scene_of_an_ablated_graph_equals_the_served_pages(parity, batch):
    assert failing(parity, batch, "scene", ablated=True) == []
    assert parity["scenes"] == COUNT


def test_a_planted_error_fails_the_comparison(page, programs):
    """The same comparison, with the browser's program altered in the page (a wrong epsilon in every norm,
    its attribute left as the trace has it, so only the values can tell), finds every trace different."""
    result = page.evaluate(
        """async (batch) => {
        const { OPS } = await import('/static/engine/ops.js');
        const norm = OPS.LayerNormalization, rms = OPS.RMSNormalization;
        OPS.LayerNormalization = (x, a) => norm(x, { ...a, epsilon: 10 * (a.epsilon ?? 1e-5) });
        OPS.RMSNormalization = (x, a) => rms(x, { ...a, epsilon: 10 * (a.epsilon ?? 1e-5) });
        try { return await window.localParity(batch); }
        finally { OPS.LayerNormalization = norm; OPS.RMSNormalization = rms; }
    }""",
        cases(programs, 4, seed=7),
    )
    assert len(result["failures"]) == 4 and all(f["parts"]["trace"] for f in result["failures"])


@pytest.mark.parametrize("plant,part", [("value", "trace"), ("figure", "derived"), ("scene", "scene")])
def test_an_error_planted_in_one_number_of_the_computed_trace_is_caught(page, programs, plant, part):
    """One number of our computed trace altered just past its part's rule (a node's value by 1e-4, a live
    figure by 1e-3 of itself, a scene's coordinate by 1e-9) fails that part's comparison in every case."""
    planted = [{**c, "plant": plant} for c in cases(programs, 3, seed=11)]
    result = page.evaluate("(cases) => window.localParity(cases)", planted)
    assert len(result["failures"]) == 3 and all(f["parts"].get(part) for f in result["failures"]), result
