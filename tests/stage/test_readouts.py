"""Readouts on the stage, measured in Chromium.

Names: for every step at 1440×900, inputs 42 and 777 777, every row and column of the step's subject that
stands for a token (an activation block with a row or column axis; rows beside an ids column are named by
the scene's own token labels) carries the scene's word for that token (scene.axes, which are the trace's
tokens; a token that repeats with its position, "nine·4", or "nine₄" where a band is narrow, the bare word
where even that does not fit: tests/stage/test_head_and_token_names.py asks the positions at steps 7 and
16): text at least 11 px, inside the stage, overlapping no other name, label, overlay or switch. At
390×844 the same holds (at 9 px) for the part of the subject the phone's stage frames (tour.js stepView):
at steps 7–9 the worked head's blocks (at 9, where they fit, over a window of V: the head's own columns of
it), at 12 and 18–20 a window of the wide blocks' columns whose label says
which (scene/windows.py); the table is test-artifacts/readouts-table.md (step × viewport × input: blocks,
names shown, min px, failures).

Numbers: at steps 7–9, 15 and 16 (both viewports; on a phone, of the part framed) every weight of the
subject is printed on its cell and equals the trace's value at the printed precision (two decimals); every
other number printed does too (at the decimals that give its block's largest |value| two significant
digits); a −∞ prints nothing. N and the stage's button turn the numbers off and on, and the PNG export
draws what is shown.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tests.browser import open_stage_page, show_input
from tests.stage.test_head_and_token_names import named_as, positioned
from tests.stage.test_stage import pytestmark  # noqa: F401  (skip without Chromium)

playwright_sync = pytest.importorskip("playwright.sync_api")

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
VIEWPORTS = {"1440×900": ({"width": 1440, "height": 900}, 11.0), "390×844": ({"width": 390, "height": 844}, 9.0)}
INPUTS = ["42", "777777"]
NUMBER_STEPS = [7, 8, 9, 15, 16]
WINDOWED = {12, 18, 19, 20}  # 390×844: the steps whose wide blocks a phone frames by a window of columns
TOL = 0.5  # px: boxes that merely touch do not overlap

MEASURE = """async (numberSteps) => {
  const s = anatomyStage.stage, out = [], near = 0.5;
  const rel = (r, box) => ({x0: r.left - box.left, y0: r.top - box.top,
                            x1: r.right - box.left, y1: r.bottom - box.top});
  const hit = (a, b) => a.x0 < b.x1 - near && b.x0 < a.x1 - near && a.y0 < b.y1 - near && b.y0 < a.y1 - near;
  for (const st of anatomyStage.steps()) {
    anatomyStage.step(st.step); await anatomyStage.idle();
    const box = s.el.getBoundingClientRect();
    const {blocks: framed, window: win} = anatomyStage.framed();  // a phone's stage frames a part of the subject
    const subject = framed.map(id => s.blockById.get(id)).filter(Boolean), windowed = new Set(s.windowed || []);
    const ids = subject.filter(b => b.kind === 'ids'), lit = new Set(st.lit);  // ids columns whose labels name rows
    const blocks = subject.filter(b => !b.param && b.kind !== 'ids' && (b.row_axis || b.col_axis))
      .map(b => ({id: b.id, row_axis: b.row_axis, col_axis: b.col_axis, rows: b.rows, cols: b.cols,
                  ids_rows: ids.some(i => i.station === b.station && i.y === b.y && i.rows === b.rows)
                    || (!!b.rows_named_by && lit.has(b.rows_named_by)),
                  window: win && windowed.has(b.id) ? win.cols : null}));
    const names = [...s.el.querySelectorAll('.readout-name:not([hidden])')].map(e => ({
      text: e.textContent, axis: e.dataset.axis, index: Number(e.dataset.index), blocks: e.dataset.blocks.split(' '),
      px: parseFloat(getComputedStyle(e).fontSize), rect: rel(e.getBoundingClientRect(), box)}));
    const {labels, overlays} = s.readouts.obstacles();
    const onLabels = names.filter(n => labels.some(l => hit(n.rect, l))).map(n => n.text);
    const label = [...s.el.querySelectorAll('.readout-window:not([hidden])')].map(e => ({
      text: e.textContent, px: parseFloat(getComputedStyle(e).fontSize), rect: rel(e.getBoundingClientRect(), box)}));
    const row = {step: st.step, W: box.width, H: box.height, blocks, names, overlays, onLabels, framed,
                 window: win, windowLabel: label[0] || null,
                 labelOnLabels: label.some(x => labels.some(l => hit(x.rect, l)))};
    if (numberSteps.includes(st.step)) {
      row.values = [...s.el.querySelectorAll('.readout-value')].filter(e => e.checkVisibility()).map(e => ({
        block: e.dataset.block, r: Number(e.dataset.r), c: Number(e.dataset.c), text: e.textContent,
        px: parseFloat(e.style.fontSize)}));
      row.kinds = Object.fromEntries(framed.map(id => [id, s.blockById.get(id)?.kind]));
      row.veiled = anatomy.stores.veiledCells.get();  // an open exercise's cells print nothing until answered
    }
    out.push(row);
  }
  const trace = {source: anatomy.trace.source_tokens, target: anatomy.trace.target_tokens};
  return {rows: out, axes: s.scene.axes, trace, worked: s.scene.worked};
}"""
NODES = """() => Object.fromEntries(anatomy.trace.nodes.filter(n => n.shape.length === 2)
  .map(n => [n.id, {shape: n.shape, data: n.data}]))"""


@pytest.fixture(scope="module")
def page(browser, live_server):
    """One page for the module: each viewport and input in turn (the stage follows a resize)."""
    pg = open_stage_page(
        browser, f"{live_server}/?input={INPUTS[0]}#step-7", VIEWPORTS["1440×900"][0], reduced_motion="reduce"
    )
    yield pg
    pg.context.close()


@pytest.fixture(scope="module")
def measured(page):
    """{(viewport, input): {rows, axes, trace, nodes}} for every step."""
    out = {}
    for vp, (viewport, _) in VIEWPORTS.items():
        page.set_viewport_size(viewport)
        page.wait_for_timeout(300)  # the stage's ResizeObserver
        for text in INPUTS:
            show_input(page, text)
            got = page.evaluate(MEASURE, NUMBER_STEPS)
            got["nodes"] = page.evaluate(NODES)
            got["errors"] = list(page.errors)
            out[vp, text] = got
    page.set_viewport_size(VIEWPORTS["1440×900"][0])
    write_table(out)
    return out


def overlap(a: dict, b: dict) -> bool:
    return a["x0"] < b["x1"] - TOL and b["x0"] < a["x1"] - TOL and a["y0"] < b["y1"] - TOL and b["y0"] < a["y1"] - TOL


def name_failures(row: dict, axes: dict, min_px: float) -> list[str]:
    """What the names' rule above asks and this step's view does not give."""
    fails, names = [], row["names"]
    for b in row["blocks"]:
        cols = range(b["window"][0], b["window"][1] + 1) if b["window"] else range(b["cols"])  # a window's only
        for axis, name, indices in (("row", b["row_axis"], range(b["rows"])), ("col", b["col_axis"], cols)):
            if not name or (axis == "row" and b["ids_rows"]):  # the ids column beside it names these rows
                continue
            for i in indices:
                mine = [x for x in names if x["axis"] == axis and x["index"] == i and b["id"] in x["blocks"]]
                if not mine:
                    fails.append(f"{b['id']} {axis} {i} unnamed")
                elif not named_as(mine[0]["text"], axes[name], i) and mine[0]["text"] != axes[name][i]:
                    fails.append(f"{b['id']} {axis} {i}: {mine[0]['text']!r} is not {positioned(axes[name])[i]!r}")
    for x in names:
        r = x["rect"]
        if x["px"] < min_px:
            fails.append(f"{x['text']!r} at {x['px']} px")
        if r["x0"] < -TOL or r["y0"] < -TOL or r["x1"] > row["W"] + TOL or r["y1"] > row["H"] + TOL:
            fails.append(f"{x['text']!r} outside the stage")
        if any(overlap(r, o) for o in row["overlays"]):
            fails.append(f"{x['text']!r} under an overlay or switch")
    fails += [f"{t!r} on a label" for t in row["onLabels"]]
    fails += window_failures(row, min_px)
    for i, a in enumerate(names):
        fails += [f"{a['text']!r} overlaps {b['text']!r}" for b in names[i + 1 :] if overlap(a["rect"], b["rect"])]
    return fails


def window_failures(row: dict, min_px: float) -> list[str]:
    """A window of wide blocks (scene/windows.py) says on the stage which columns it shows: its label, the
    scene's words, legible, inside the stage, on no name, label or overlay."""
    if not any(b["window"] for b in row["blocks"]):
        return []
    label = row["windowLabel"]
    if not label:
        return [f"the window's label {row['window']['label']!r} is not shown"]
    r, fails = label["rect"], []
    if label["text"] != row["window"]["label"]:
        fails.append(f"the window's label reads {label['text']!r}, not {row['window']['label']!r}")
    if label["px"] < min_px:
        fails.append(f"the window's label at {label['px']} px")
    if r["x0"] < -TOL or r["y0"] < -TOL or r["x1"] > row["W"] + TOL or r["y1"] > row["H"] + TOL:
        fails.append("the window's label outside the stage")
    if any(overlap(r, o) for o in row["overlays"]) or row["labelOnLabels"]:
        fails.append("the window's label under an overlay, a switch or a label")
    fails += [f"the window's label overlaps {x['text']!r}" for x in row["names"] if overlap(r, x["rect"])]
    return fails


def write_table(out: dict) -> None:
    lines = [
        "# Token names on the stage (tests/stage/test_readouts.py)",
        "",
        "Per step, viewport and input: the subject's activation blocks with token axes, the names shown, "
        "the smallest name in CSS px, and what the names' rule asks that the view does not give.",
        "",
        "| step | viewport | input | blocks | names shown | min px | failures |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for (vp, text), got in out.items():
        min_px = VIEWPORTS[vp][1]
        for row in got["rows"]:
            if not row["blocks"]:
                continue
            fails = name_failures(row, got["axes"], min_px)
            px = min((x["px"] for x in row["names"]), default=0)
            lines.append(
                f"| {row['step']} | {vp} | {text} | {len(row['blocks'])} | {len(row['names'])} | {px:g} | "
                f"{'none' if not fails else f'{len(fails)}: ' + '; '.join(fails[:3])} |"
            )
    steps_without = sorted({r["step"] for got in out.values() for r in got["rows"] if not r["blocks"]})
    lines += ["", f"Steps whose subject has no activation with a token axis (nothing to name): {steps_without}."]
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "readouts-table.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize("text", INPUTS)
def test_every_token_axis_of_the_subject_is_named_on_the_desktop(measured, text):
    got = measured["1440×900", text]
    assert not got["errors"], got["errors"]
    assert got["axes"]["source"] == got["trace"]["source"] and got["axes"]["target"] == got["trace"]["target"]
    named = [r for r in got["rows"] if r["blocks"]]
    assert len(named) >= 8, "steps 7-9, 15, 16 and 18 at least have token axes in their subject"
    fails = {r["step"]: f for r in named if (f := name_failures(r, got["axes"], VIEWPORTS["1440×900"][1]))}
    assert not fails, {k: v[:4] for k, v in fails.items()}


@pytest.mark.parametrize("text", INPUTS)
def test_every_token_axis_of_the_part_a_phone_frames_is_named(measured, text):
    """At 390×844 the stage frames a part of a step's subject where the whole would draw its cells under
    scene.camera.part_cell_px (one head, one block, a window of a wide block's columns: scene/views.py
    _parts, scene/windows.py); the names' rule holds whole for what it frames, at every step. Steps 7–9 frame the
    head the worked row is in (the text's and the card's), steps 12 and 18–20 a window."""
    got = measured["390×844", text]
    named = [r for r in got["rows"] if r["blocks"]]
    assert len(named) >= 8
    fails = {r["step"]: f for r in named if (f := name_failures(r, got["axes"], VIEWPORTS["390×844"][1]))}
    assert not fails, {k: v[:4] for k, v in fails.items()}
    w = got["worked"]
    for r in (r for r in named if r["step"] in (7, 8, 9)):  # step 9's may hold the head's columns of V too
        head = {w["scores"], w["weights"], w["out"]} | ({w["v_full"]} if r["step"] == 9 else set())
        assert r["framed"] and set(r["framed"]) <= head, (r["step"], r["framed"])
    windowed = {r["step"] for r in named if r["window"]}
    assert windowed - {9} == WINDOWED and (
        9 not in windowed or w["v_full"] in next(r["framed"] for r in named if r["step"] == 9)
    ), windowed


def tensor_value(node: dict, r: int, c: int) -> float:
    v = node["data"][r * node["shape"][1] + c]
    return -math.inf if v is None or v == "-Infinity" else float(v)


def printed_unit(kind: str, text: str, block: list[float]) -> float:
    """Half a unit in the last place printed: a weight at two decimals (1 standing for .995 or more), any other
    value at the decimals that give its block's largest |value| two significant digits."""
    if kind == "bar":
        return 0.005
    top = max(abs(v) for v in block if math.isfinite(v))
    return 0.5 * 10 ** -max(0, 1 - math.floor(math.log10(float(f"{top:.2g}"))))


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
@pytest.mark.parametrize("text", INPUTS)
def test_values_printed_on_the_cells_equal_the_trace(measured, text, viewport):
    """Every weight of what the view frames (on a phone: the part, scene/views.py _parts) is printed, but those an
    open exercise veils until it is answered (tests/page/test_exercises_page.py)."""
    got = measured[viewport, text]
    for row in (r for r in got["rows"] if r["step"] in NUMBER_STEPS):
        printed = {(v["block"], v["r"], v["c"]): v for v in row["values"]}
        assert printed, f"step {row['step']}: no numbers printed"
        for (bid, r, c), v in printed.items():
            node = got["nodes"][bid]
            x = tensor_value(node, r, c)
            assert math.isfinite(x), f"step {row['step']}: {bid}[{r}, {c}] is −∞ and prints {v['text']!r}"
            values = [tensor_value(node, i, j) for i in range(node["shape"][0]) for j in range(node["shape"][1])]
            unit = printed_unit(row["kinds"][bid], v["text"], values)
            assert abs(float(v["text"]) - x) <= unit + 1e-7, f"step {row['step']}: {bid}[{r}, {c}] = {x}: {v['text']}"
            assert v["px"] >= 7
        for bid, kind in row["kinds"].items():
            if kind != "bar":
                continue
            node = got["nodes"][bid]
            veiled = [v for v in row["veiled"] if v["id"] == bid]

            def hidden(r: int, c: int, veiled: list = veiled) -> bool:
                return any(v["rows"][0] <= r <= v["rows"][1] and v["cols"][0] <= c <= v["cols"][1] for v in veiled)

            missing = [
                (r, c)
                for r in range(node["shape"][0])
                for c in range(node["shape"][1])
                if math.isfinite(tensor_value(node, r, c)) and (bid, r, c) not in printed and not hidden(r, c)
            ]
            assert not any(hidden(r, c) for b, r, c in printed if b == bid), (
                f"step {row['step']}: a veiled weight printed"
            )
            assert not missing, f"step {row['step']}: {bid} has {len(missing)} weights unprinted"


def test_numbers_toggle_with_the_button_and_n(page, measured):
    page.evaluate("document.activeElement?.blur()")  # N typed into the input bar is the reader's text, not a key
    shown = """() => [...anatomyStage.stage.el.querySelectorAll('.readout-value')]
                 .filter(e => e.checkVisibility()).length"""
    page.evaluate("anatomyStage.step(7)")
    page.evaluate("anatomyStage.idle()")
    button = page.locator("#stage .stage-tools .stage-numbers")
    box = button.bounding_box()

    def after(act) -> tuple[int, str]:
        act()
        page.evaluate("anatomyStage.idle()")
        return page.evaluate(shown), button.get_attribute("aria-pressed")

    assert page.evaluate(shown) > 0 and button.get_attribute("aria-pressed") == "true"
    assert "N numbers" in page.locator("#stage .stage-help").inner_text()
    with_numbers = page.evaluate("anatomyStage.png()")
    assert after(lambda: page.keyboard.press("n")) == (0, "false")
    assert page.evaluate("anatomyStage.png()") != with_numbers, "the PNG draws the numbers shown"

    n, pressed = after(lambda: page.keyboard.press("n"))
    assert n > 0 and pressed == "true"
    click = lambda: page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)  # noqa: E731
    assert after(click) == (0, "false")
    n, pressed = after(click)
    assert n > 0 and pressed == "true" and not page.errors


def test_a_weight_of_one_is_printed_as_1_which_cannot_read_as_10():
    """A small "1.0" loses its point and reads as 10: a weight that rounds to one is printed 1, the others at
    two decimals without the leading zero."""
    import json
    import subprocess

    script = (
        'import { formatWeight } from "./static/stage/cellvalues.js";'
        "console.log(JSON.stringify([0.994, 0.995, 0.999, 1, 0.4, 0.004, 0].map(formatWeight)));"
    )
    run = subprocess.run(["node", "--input-type=module", "-e", script], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == [".99", "1", "1", "1", ".40", ".00", ".00"]
