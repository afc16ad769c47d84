"""Every step frames its subject: measured in Chromium for all 29 steps, at 1440×900 and
390×844, for a short and a long input (42 and 777 777).

For each step whose subject includes activations: the subject's on-screen bounding box covers at
least 25 % of the stage's area, or 60 % of its width or of its height; and its median cell is at
least 12 px on the desktop, 6 px on the phone. Where the subject is wider (or taller) in cells than
the stage can show at that size — the FFN's hidden layer is 128 cells wide, the output layer's rows
are the 65-token vocabulary (65 cells at 6 px is the phone's whole 390 px) — the target cannot be
met with the subject's edges in view; there the test asks that the view makes the cells as large as
the stage allows (at least 90 % of stage pixels / subject cells along the tighter side, less the 3 %
margin) and the table says so. Where the stage frames a part of the subject instead (a phone: one
head, one block, scene/views.py _parts, because the whole would draw cells under
scene.camera.part_cell_px), the part must be inside the stage, whole, with cells of part_cell_px or more;
a window of wide blocks (static/compute/windows.js: a run of their columns) is measured by the columns it shows.
The table lands in test-artifacts/framing.md.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser import open_stage_page, show_input
from tests.stage.test_stage import pytestmark  # noqa: F401  (skip without Chromium)

playwright_sync = pytest.importorskip("playwright.sync_api")

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
VIEWPORTS = {"desktop": ({"width": 1440, "height": 900}, 12.0), "phone": ({"width": 390, "height": 844}, 6.0)}
INPUTS = ["42", "777777"]

MEASURE = """async () => {
  const out = [], s = anatomyStage.stage;
  for (const st of anatomyStage.steps()) {
    anatomyStage.step(st.step); await anatomyStage.idle();
    const blocks = st.subject.map(id => s.blockById.get(id));
    const activations = blocks.some(b => !b.param);
    const framed = anatomyStage.framed(), part = framed.blocks.length < st.subject.length || !!framed.window;
    const [x0, x1, y0, y1] = st.view.box;
    out.push({step: st.step, title: st.title, subject: st.subject.length, activations, part,
              partCellPx: s.scene.camera.part_cell_px, boxCells: [x1 - x0, y1 - y0], margin: st.view.margin,
              ...anatomyStage.framing(part ? framed.blocks : undefined)});
  }
  return out;
}"""


@pytest.fixture(scope="module")
def measurements(browser, live_server):
    """One page, each viewport and input in turn (the stage follows a resize)."""
    rows = {}
    page = open_stage_page(
        browser, f"{live_server}/?input={INPUTS[0]}", VIEWPORTS["desktop"][0], reduced_motion="reduce"
    )
    try:
        for vp_name, (viewport, _) in VIEWPORTS.items():
            page.set_viewport_size(viewport)
            page.wait_for_timeout(300)  # the stage's ResizeObserver
            for text in INPUTS:
                show_input(page, text)
                rows[vp_name, text] = page.evaluate(MEASURE)
    finally:
        page.context.close()
    write_table(rows)
    return rows


def best_possible(r: dict) -> float:
    """The largest cell a view could give this subject: stage pixels over the subject's cells (its label
    line included), keeping the 3 % margin every view keeps so that the subject's edges show, and in
    height only the band the stage's overlays leave free (views keep clear of them: `covered`)."""
    w, h = r["boxCells"]
    return min(r["stageWidth"] / w, r["stageHeight"] * (1 - r["covered"]) / h) / r["margin"]


def verdict(r: dict, need: float) -> str:
    if not r["subject"]:
        return "overview"
    if not r["activations"]:
        return "parameters only"
    if r["part"]:
        return "part framed, whole" if not r["clipped"] and r["medianCellPx"] >= r["partCellPx"] else "part: FAILS"
    if best_possible(r) < need:
        return f"target impossible: at most {best_possible(r):.1f} px"
    return "ok" if framed(r) and r["medianCellPx"] >= need else "FAILS"


def framed(r: dict) -> bool:
    return r["areaShare"] >= 0.25 or r["widthShare"] >= 0.6 or r["heightShare"] >= 0.6


def write_table(rows: dict) -> None:
    lines = ["| step | " + " | ".join(f"{vp} {t}" for vp, t in rows) + " |", "| --- |" + " --- |" * len(rows)]
    first = next(iter(rows.values()))
    for i, r0 in enumerate(first):
        cells = []
        for (vp, _), rs in rows.items():
            r, need = rs[i], VIEWPORTS[vp][1]
            v = verdict(r, need)
            cells.append(
                v
                if v in ("overview", "parameters only")
                else f"{100 * r['areaShare']:.0f}% area, {100 * r['widthShare']:.0f}% w, "
                f"{100 * r['heightShare']:.0f}% h, {r['medianCellPx']:.1f} px ({v})"
            )
        lines.append(f"| {r0['step']} {r0['title']} | " + " | ".join(cells) + " |")
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "framing.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n" + "\n".join(lines))


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
@pytest.mark.parametrize("text", INPUTS)
def test_every_step_frames_its_subject(measurements, viewport, text):
    need = VIEWPORTS[viewport][1]
    rows = measurements[viewport, text]
    assert [r["step"] for r in rows] == list(range(1, 30))
    failures = []
    for r in rows:
        if not r["subject"] or not r["activations"]:
            continue
        if r["part"]:  # the stage frames a part of the subject, whole, for cells the whole cannot give
            ok = not r["clipped"] and r["medianCellPx"] >= min(r["partCellPx"], 0.9 * best_possible(r))
        elif best_possible(r) >= need:
            ok = framed(r) and r["medianCellPx"] >= need
        else:  # no camera reaches the target: the view must still fill the stage with the subject
            ok = framed(r) and r["medianCellPx"] >= 0.9 * best_possible(r)
        if not ok:
            failures.append(
                (
                    r["step"],
                    round(r["medianCellPx"], 1),
                    round(r["areaShare"], 2),
                    round(r["widthShare"], 2),
                    round(r["heightShare"], 2),
                )
            )
    assert failures == []


def test_most_steps_with_activations_meet_the_target_outright(measurements):
    """The exemption above is for arithmetic, not for convenience: it covers at most 4 steps, and on a phone
    step 9 for a long input: its subject is the four heads standing over V (scene/layout.py), 4n + 9 rows and
    their label line, with the names' room 57 units for 777 777's ten tokens, where a phone's stage has
    about 300 px of height (5 px cells); there the phone frames a part (the head's weights), as before."""
    impossible = {
        (vp, r["step"])
        for (vp, _), rs in measurements.items()
        for r in rs
        if r["subject"] and r["activations"] and best_possible(r) < VIEWPORTS[vp][1]
    }
    assert {step for _, step in impossible} - {9} <= {12, 18, 19, 20}, impossible
    assert ("desktop", 9) not in impossible, impossible
