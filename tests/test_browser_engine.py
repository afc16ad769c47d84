"""Parity in Chromium against the running server (issue 25): for 300 random inputs over both models, ten
ablations and five training snapshots, the trace the browser computes itself (static/engine/ over
GET /api/program and the weights the program names) equals the server's /api/trace node for node (ids, ops,
inputs, attributes, shapes, dtypes; values to tests/engine_compare.mjs's rule; the token lists equal). One
page for the whole module; the comparison runs in the page."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from model import models
from model.ablation import parts
from model.transformer import Config
from tests.browser import has_chromium

pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.skipif(not has_chromium(), reason="Debian chromium is not installed")
TESTS = Path(__file__).resolve().parent
CHECKPOINTS = (0, 100, 500, 2000, 4000)


def cases(count: int, seed: int) -> list[dict]:
    """`count` inputs: both models in turn, ten ablations (and none) in turn, for the 2017 model the five
    snapshots (and the trained model) in turn."""
    rng = random.Random(seed)
    every = [p.id for p in parts(Config())]  # both miniatures have the same parts (2 layers, 4 heads)
    ablations = [()] + [tuple(rng.sample(every, rng.choice((1, 1, 2, 3)))) for _ in range(10)]
    out = []
    for k in range(count):
        model = models.NAMES[k % 2]
        checkpoint = (None, *CHECKPOINTS)[(k // 2) % 6] if model == models.DEFAULT else None
        digits = rng.randrange(1, 7)
        number = rng.randrange(10 ** (digits - 1) if digits > 1 else 0, 10 ** digits)
        out.append({"model": model, "number": number, "ablation": list(ablations[k % 11]), "checkpoint": checkpoint})
    return out


def serve_tests(context, base: str) -> None:
    """This folder's modules at /test-modules/… of the server's origin (answered by Playwright, never by the
    server), so the page imports them as its own: the site's content policy admits only its origin."""
    context.route(f"{base}/test-modules/*", lambda route: route.fulfill(
        status=200, content_type="text/javascript", body=(TESTS / route.request.url.rsplit("/", 1)[1]).read_text()))


@pytest.fixture(scope="module")
def page(browser, live_server):
    context = browser.new_context()
    serve_tests(context, live_server)
    p = context.new_page()
    p.goto(f"{live_server}/healthz")
    p.evaluate("""async () => { Object.assign(window, await import('/test-modules/engine_compare.mjs'));
                                await import('/test-modules/browser_parity.mjs'); return true; }""")
    yield p
    context.close()


def run(page, batch: list[dict], compare: bool = True, ahead: int = 2) -> dict:
    """The page's summary of the batch (browser_parity.mjs), `ahead` server requests in flight at once."""
    script = "([cases, compare, ahead]) => window.parity(cases, compare ? window.compareTrace : null, ahead)"
    return page.evaluate(script, [batch, compare, ahead])


def test_the_browsers_trace_equals_the_servers_for_300_inputs(page):
    batch = cases(300, seed=25)
    assert len({tuple(c["ablation"]) for c in batch}) == 11 and {c["checkpoint"] for c in batch} >= set(CHECKPOINTS)
    result = run(page, batch)
    assert result["failures"] == []
    assert result["nodes"] > 300 * 200


def test_a_planted_error_fails_the_comparison(page):
    """The same comparison, with the browser's program altered in the page (a wrong epsilon in every norm,
    its attribute left as the trace has it, so only the values can tell), finds every trace different."""
    result = page.evaluate("""async (batch) => {
        const { OPS } = await import('/static/engine/ops.js');
        const norm = OPS.LayerNormalization, rms = OPS.RMSNormalization;
        OPS.LayerNormalization = (x, a) => norm(x, { ...a, epsilon: 10 * (a.epsilon ?? 1e-5) });
        OPS.RMSNormalization = (x, a) => rms(x, { ...a, epsilon: 10 * (a.epsilon ?? 1e-5) });
        try { return await window.parity(batch, window.compareTrace); }
        finally { OPS.LayerNormalization = norm; OPS.RMSNormalization = rms; }
    }""", cases(4, seed=7))
    assert len(result["failures"]) == 4
