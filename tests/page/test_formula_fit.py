"""Every display formula fits its column: at 1440, 1024 and 390 px wide viewports no
`.katex-display` runs past the text column and none scrolls sideways. The long ones are broken into
lines in content/steps/*.md; static/js/math.js scales down what is still too wide for a narrow column.
One page, resized; the stage's module is not loaded (the formulas do not need it)."""

from __future__ import annotations

import pytest

from tests.stage.test_stage import pytestmark  # noqa: F401  (skip without Chromium)

playwright_sync = pytest.importorskip("playwright.sync_api")

WIDTHS = [(1440, 900), (1024, 768), (390, 844)]

MEASURE = """() => [...document.querySelectorAll('.katex-display')].map(d => {
  const box = d.closest('.arithmatex'), column = d.closest('.step-body, .article').getBoundingClientRect();
  const f = d.querySelector('.katex-html').getBoundingClientRect();
  return {step: d.closest('section')?.id || '', scroll: box.scrollWidth - box.clientWidth,
          past: Math.max(f.right - column.right, column.left - f.left), scale: d.style.fontSize || '100%'};
})"""


@pytest.fixture(scope="module")
def widths(browser, live_server):
    ctx = browser.new_context(viewport={"width": 1440, "height": 900}, bypass_csp=True)
    page = ctx.new_page()
    page.route("**/bundle/stage/main.js", lambda r: r.fulfill(body="", content_type="text/javascript"))
    page.goto(f"{live_server}/?input=42")
    page.wait_for_function("document.querySelectorAll('.katex-display').length >= 15")
    page.evaluate("document.fonts.ready")
    out = {}
    for w, h in WIDTHS:
        page.set_viewport_size({"width": w, "height": h})
        page.wait_for_timeout(400)  # the column's resize, then a frame to fit
        out[w] = page.evaluate(MEASURE)
    ctx.close()
    return out


@pytest.mark.parametrize("width", [w for w, _ in WIDTHS])
def test_every_display_formula_fits_its_column(widths, width):
    rows = widths[width]
    assert len(rows) >= 15
    bad = [r for r in rows if r["scroll"] > 1 or r["past"] > 1]
    assert not bad, f"at {width} px these formulas run past their column: {bad}"


def test_at_1440_the_formulas_keep_their_size(widths):
    """Broken into lines, every formula fits the desktop's column without shrinking."""
    assert [r for r in widths[1440] if r["scale"] != "100%"] == []
