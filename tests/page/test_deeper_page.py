"""The go-deeper pages' script in a browser (static/js/deeper.js): for an input other than the default the
page computes its tables itself, from the server's trace, with static/compute/topic_tables.js, and shows them;
the cells read from the DOM are the module's (the same module under Node, tests/topic_tables.mjs) and say the
torch model's numbers, recomputed here on their own. With JavaScript off, the default input's tables are
there (rendered by the server from the module run ahead), and another input's page says they need it."""

from __future__ import annotations

import httpx
import pytest

from tests.deeper_pages import check, figures_of, forward, module_tables, shown_tables

INPUT = 731015
SLUGS = ("attention", "causal-masking", "tokenisation")


@pytest.fixture(scope="module")
def context(browser):
    ctx = browser.new_context(viewport={"width": 1100, "height": 900})
    yield ctx
    ctx.close()


def page_figures(context, url: str) -> tuple[dict, list[str]]:
    """The page's figures once its script has drawn them, and the errors it logged."""
    page, errors = context.new_page(), []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    page.wait_for_selector('[data-topic-tables][data-state="computed"]', timeout=60_000)
    html = page.inner_html("section.deeper")
    page.close()
    return figures_of(html), errors


def test_another_inputs_tables_are_computed_in_the_page(client, context, live_server, tmp_path):
    ours = module_tables(client, tmp_path, [INPUT])[INPUT]
    for slug in SLUGS:
        figs, errors = page_figures(context, f"{live_server}/topics/{slug}?input={INPUT}")
        assert not errors, errors
        assert figs and figs == shown_tables(ours[slug]), slug


def test_the_page_computed_mask_says_the_models_weights(context, live_server, client):
    doc = client.get(f"/api/trace?input={INPUT}").json()
    r = forward(client.app.state.service.translator.model, doc)
    figs, _ = page_figures(context, f"{live_server}/topics/causal-masking?input={INPUT}")
    w, m = r["dec_self_w"][0], len(r["tgt"])
    want = [
        [f"row {i + 1}: {t}", *(w[i, j] if j <= i else "masked" for j in range(m)), 1.0] for i, t in enumerate(r["tgt"])
    ]
    check(figs["decoder-mask"], want, ["text"] + ["fixed3"] * (m + 1))


def test_without_javascript_the_default_input_shows_its_numbers_and_another_says_it_needs_it(browser, live_server):
    ctx = browser.new_context(java_script_enabled=False)
    try:
        page = ctx.new_page()
        page.goto(f"{live_server}/topics/attention")
        figs = figures_of(page.inner_html("section.deeper"))
        assert figs["attention-row"]["rows"] and figs["attention-row"]["rows"][-1][0] == "sum"
        assert figs["attention-row"]["rows"][-1][3] in ("1.000", "0.999", "1.001")
        page.goto(f"{live_server}/topics/attention?input={INPUT}")
        assert not figures_of(page.inner_html("section.deeper"))
        assert "need JavaScript" in page.inner_text("[data-needs-js]")
    finally:
        ctx.close()


def test_the_served_default_page_is_the_static_builds_source(live_server):
    """The static build renders its pages through the app: the default input's page carries its tables."""
    text = httpx.get(f"{live_server}/topics/rnns", timeout=60).text
    assert 'data-state="rendered"' in text and figures_of(text)["path-lengths"]["rows"]
