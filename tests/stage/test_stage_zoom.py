"""Wheel zoom is bounded: in Chromium at 1440×900, step 9, twelve notches of the wheel
in leave the camera no nearer than 0.45 of the step's view distance with cells still under the stage's
middle (six notches used to fly into the blocks and leave the stage empty), and twenty notches out no
further than four times it; after three and six notches in (at step 9, then at step 17), every switch shown (some
at three) sits on its label's line (it used to keep the scene's point while the label, grown on screen,
moved off it). One page."""

from __future__ import annotations

import pytest

from tests.browser import open_stage_page
from tests.stage.test_stage import pytestmark  # noqa: F401  (skip without Chromium)

playwright_sync = pytest.importorskip("playwright.sync_api")

# cells hit on a 5 × 5 grid over the stage's middle half
HITS = """() => { const s = anatomyStage.stage, r = s.renderer.domElement.getBoundingClientRect(); let n = 0;
  for (let i = 0; i < 5; i++) for (let j = 0; j < 5; j++)
    if (s.hitTest(r.left + r.width * (0.25 + i / 8), r.top + r.height * (0.25 + j / 8))) n++;
  return n; }"""


# each switch shown: how far its middle is from its label's middle, in CSS pixels (vertically)
APART = """() => { const ls = new Map(anatomyStage.labels().map(l => [l.i, l]));
  return anatomyStage.switches().filter(s => s.label !== null).map(s => {
    const l = ls.get(s.label);
    return [s.part, l ? Math.abs((s.top + s.bottom) / 2 - (l.top + l.bottom) / 2) : null]; }); }"""


@pytest.fixture(scope="module")
def zoomed(browser, live_server):
    page = open_stage_page(
        browser, f"{live_server}/?input=305#step-9", {"width": 1440, "height": 900}, reduced_motion="reduce"
    )
    page.evaluate("anatomyStage.step(9)")
    page.evaluate("anatomyStage.idle()")
    view = page.evaluate("anatomyStage.camera().distance")
    box = page.locator("#stage canvas").bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    out = {"view": view, "hits_view": page.evaluate(HITS), "apart": {}}
    for notches in (3, 6):
        for _ in range(3):
            page.mouse.wheel(0, -120)
            page.wait_for_timeout(60)
        page.evaluate("anatomyStage.idle()")
        out["apart"][notches] = page.evaluate(APART)
    for _ in range(12 - 6):
        page.mouse.wheel(0, -120)
        page.wait_for_timeout(60)
    page.evaluate("anatomyStage.idle()")
    out["in"], out["hits_in"] = page.evaluate("anatomyStage.camera().distance"), page.evaluate(HITS)
    for _ in range(20 + 12):
        page.mouse.wheel(0, 120)
        page.wait_for_timeout(30)
    out["out"] = page.evaluate("anatomyStage.camera().distance")
    # step 9's head switches sit near the stage's top (its worked card keeps the foot): three notches take
    # them out of view, so the switches are also read at step 17, where the sub-layers' stay in view
    page.evaluate("anatomyStage.step(17)")
    page.evaluate("anatomyStage.idle()")
    for notches in (3, 6):
        for _ in range(3):
            page.mouse.wheel(0, -120)
            page.wait_for_timeout(60)
        page.evaluate("anatomyStage.idle()")
        out["apart"][notches] += page.evaluate(APART)
    out["errors"] = page.errors
    page.context.close()
    print(out)
    return out


def test_wheel_in_stops_before_the_blocks(zoomed):
    assert zoomed["in"] >= 0.45 * zoomed["view"] * 0.999
    assert zoomed["in"] < zoomed["view"], "the wheel still zooms in"
    assert zoomed["hits_in"] >= 5, f"the stage went (nearly) empty: {zoomed}"


def test_wheel_out_stops_at_four_times_the_view(zoomed):
    assert zoomed["view"] * 2 < zoomed["out"] <= 4 * zoomed["view"] * 1.001
    assert not zoomed["errors"]


def test_the_switches_stay_beside_their_labels_as_the_wheel_zooms(zoomed):
    assert zoomed["apart"][3], "no switch shown after three notches"
    for notches, rows in zoomed["apart"].items():
        far = [(part, d) for part, d in rows if d is None or d > 4]
        assert not far, f"after {notches} notches these switches sit apart from their labels: {far}"
