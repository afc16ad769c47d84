"""Every attention block in view names its head, every row and column its token, every weight is legible.

At steps 7 (encoder 1's self-attention: scores and softmax) and 16 (decoder 2's cross-attention), for a 2-word
input (42) and a 10-token one (999 999: "nine hundred ninety nine thousand nine hundred ninety nine </s>"),
at 1440×900 and 390×844, read from the stage's own boxes (its labels as the label shader draws them, the
readouts' names, head tags and printed values, the blocks' cells projected):

- every head's block of the step's subject that is in view (at least half its cells' rectangle on the
  stage, static/stage/headnames.js IN_VIEW) carries its head's name: the scene's own "head N" label drawn
  whole over its columns, or the readouts' tag over them ("decoder 2 · cross-attention · head 1" or
  "head 1"), naming that head and no other;
- every row and column of the blocks the view frames carries its token's name, with its position counted from
  1 where the token repeats in its sequence ("nine·1", "nine·4"; static/stage/axisnames.js positioned), so that
  no two names of one axis read the same;
- every weight printed (a softmax block's values) is at least 9 px, every other value printed too, and each
  framed block of weights prints its weights (the rule is "printed at 9 px or more, or the view changes":
  here the views print them).

Also: the worked row's card and the inspector count rows from 1 (addresses and code ids keep the tensor's
0-based index). Before this test: 42 and 999 999 printed weights at 8 px at step 7
on a phone and 999 999 at 8 px on a desktop; no phone view of step 7 or 16 named its head; 999 999 named four
rows "nine".
"""

from __future__ import annotations

import re

import pytest

from tests.browser import open_stage_page, show_input
from tests.stage.test_stage import pytestmark  # noqa: F401  (skip without Chromium)

playwright_sync = pytest.importorskip("playwright.sync_api")

VIEWPORTS = {"1440×900": {"width": 1440, "height": 900}, "390×844": {"width": 390, "height": 844}}
INPUTS = ["42", "999999"]
STEPS = [7, 16]
MIN_WEIGHT_PX = 9.0
IN_VIEW = 0.5  # static/stage/headnames.js IN_VIEW
HEAD = re.compile(r"\bhead (\d+)\b")

MEASURE = """async (step) => {
  anatomyStage.step(step); await anatomyStage.idle();
  const s = anatomyStage.stage, box = s.el.getBoundingClientRect(), W = box.width, H = box.height;
  const rel = (r) => ({x0: r.left - box.left, y0: r.top - box.top, x1: r.right - box.left, y1: r.bottom - box.top});
  // a block's cells on the stage: its corner cells' centres, half a cell's pitch beyond them
  const rectOf = (b) => {
    const at = (r, c) => { const p = b.transposed ? anatomyStage.project(b.id, c, r) : anatomyStage.project(b.id, r, c);
                           return [p.x - box.left, p.y - box.top]; };
    const a = at(0, 0), z = at(b.rows - 1, b.cols - 1);
    const px = b.cols > 1 ? Math.abs(z[0] - a[0]) / (b.cols - 1) : 0,
      py = b.rows > 1 ? Math.abs(z[1] - a[1]) / (b.rows - 1) : px;
    const hx = (px || py) / 2, hy = (py || px) / 2;
    return {x0: Math.min(a[0], z[0]) - hx, x1: Math.max(a[0], z[0]) + hx,
            y0: Math.min(a[1], z[1]) - hy, y1: Math.max(a[1], z[1]) + hy};
  };
  const heads = new Set(s.scene.switches.filter(x => x.kind === 'head').map(x => x.name));
  const blocks = s.step.subject.map(id => s.blockById.get(id)).filter(b => b && heads.has(b.name))
    .map(b => ({id: b.id, name: b.name, kind: b.kind, rows: b.rows, cols: b.cols, row_axis: b.row_axis,
                col_axis: b.col_axis, rect: rectOf(b)}));
  const labels = anatomyStage.labels().filter(l => !l.cut).map(l => ({text: l.text, rect: rel(l)}));
  const tags = [...s.el.querySelectorAll('.readout-head:not([hidden])')].map(e => ({
    text: e.textContent, px: parseFloat(getComputedStyle(e).fontSize), rect: rel(e.getBoundingClientRect())}));
  const names = [...s.el.querySelectorAll('.readout-name:not([hidden])')].map(e => ({
    text: e.textContent, axis: e.dataset.axis, index: Number(e.dataset.index), blocks: e.dataset.blocks.split(' ')}));
  const values = [...s.el.querySelectorAll('.readout-value')].filter(e => e.checkVisibility()).map(e => ({
    block: e.dataset.block, text: e.textContent, px: parseFloat(e.style.fontSize)}));
  return {step, W, H, blocks, labels, tags, names, values, framed: anatomyStage.framed().blocks, axes: s.scene.axes};
}"""


SUBSCRIPT = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def positioned(words: list[str], compact: bool = False) -> list[str]:
    """A word with its position counted from 1 where it repeats (static/stage/axisnames.js positioned): "nine·4",
    or in subscript, "nine₄", where a band is too narrow for the first."""
    at = (lambda n: str(n).translate(SUBSCRIPT)) if compact else (lambda n: f"·{n}")
    return [f"{w}{at(i + 1)}" if words.count(w) > 1 else w for i, w in enumerate(words)]


def named_as(text: str | None, words: list[str], i: int) -> bool:
    """Whether a name reads as the i-th word of an axis, with its position where it repeats (either form)."""
    return text in (positioned(words)[i], positioned(words, True)[i])


@pytest.fixture(scope="module")
def page(browser, live_server):
    pg = open_stage_page(
        browser, f"{live_server}/?input={INPUTS[0]}#step-7", VIEWPORTS["1440×900"], reduced_motion="reduce"
    )
    yield pg
    pg.context.close()


@pytest.fixture(scope="module")
def measured(page):
    """{(viewport, input, step): what the stage shows}."""
    out = {}
    for vp, size in VIEWPORTS.items():
        page.set_viewport_size(size)
        page.wait_for_timeout(300)  # the stage's ResizeObserver
        for text in INPUTS:
            show_input(page, text)
            for step in STEPS:
                out[vp, text, step] = page.evaluate(MEASURE, step)
    page.set_viewport_size(VIEWPORTS["1440×900"])
    return out


def inside(r: dict, W: float, H: float) -> float:
    """The share of a rectangle on the stage."""
    area = (r["x1"] - r["x0"]) * (r["y1"] - r["y0"])
    w = max(0.0, min(r["x1"], W) - max(r["x0"], 0.0))
    h = max(0.0, min(r["y1"], H) - max(r["y0"], 0.0))
    return w * h / area if area > 0 else 0.0


def on_stage(r: dict, W: float, H: float) -> bool:
    return r["x0"] >= -0.5 and r["y0"] >= -0.5 and r["x1"] <= W + 0.5 and r["y1"] <= H + 0.5


def head_failures(got: dict) -> tuple[list[str], int]:
    """Each head's block in view without its head's name over its columns; and how many blocks were in view."""
    W, H = got["W"], got["H"]
    shown = [x for x in got["labels"] if HEAD.fullmatch(x["text"])] + got["tags"]
    fails, seen = [], 0
    for b in got["blocks"]:
        if inside(b["rect"], W, H) < IN_VIEW:
            continue
        seen += 1
        want = HEAD.search(b["name"]).group(1)
        x0, x1 = max(0.0, b["rect"]["x0"]), min(W, b["rect"]["x1"])
        over = [x for x in shown if x0 <= (x["rect"]["x0"] + x["rect"]["x1"]) / 2 <= x1 and on_stage(x["rect"], W, H)]
        mine = [x for x in over if HEAD.search(x["text"]).group(1) == want]
        if not mine:
            fails.append(f"{b['id']} ({b['name']}) carries no head name (over it: {[x['text'] for x in over]})")
        for x in mine:
            if x["text"] not in (f"head {want}", b["name"]):
                fails.append(f"{b['id']}: its name reads {x['text']!r}")
    return fails, seen


def token_failures(got: dict) -> list[str]:
    """Each row and column of a framed attention block without its token's name (with its position where the
    token repeats), and two names of one axis of a block that read the same."""
    fails = []
    for b in got["blocks"]:
        if b["id"] not in got["framed"]:
            continue
        for axis, name, n in (("row", b["row_axis"], b["rows"]), ("col", b["col_axis"], b["cols"])):
            if not name:
                continue
            want = positioned(got["axes"][name])
            mine = {x["index"]: x["text"] for x in got["names"] if x["axis"] == axis and b["id"] in x["blocks"]}
            for i in range(n):
                if not named_as(mine.get(i), got["axes"][name], i):
                    fails.append(f"{b['id']} {axis} {i + 1}: {mine.get(i)!r}, not {want[i]!r}")
            if len(set(mine.values())) != len(mine):
                fails.append(f"{b['id']}: two {axis}s read the same ({sorted(mine.values())})")
    return fails


def value_failures(got: dict) -> list[str]:
    """A value printed under 9 px, or a framed block of weights that prints none of them."""
    fails = [f"{v['block']} prints {v['text']!r} at {v['px']} px" for v in got["values"] if v["px"] < MIN_WEIGHT_PX]
    for b in got["blocks"]:
        if b["kind"] == "bar" and b["id"] in got["framed"] and not any(v["block"] == b["id"] for v in got["values"]):
            fails.append(f"{b['id']}: framed, and none of its weights printed")
    return fails


CASES = [(vp, text, step) for vp in VIEWPORTS for text in INPUTS for step in STEPS]


@pytest.mark.parametrize(("viewport", "text", "step"), CASES)
def test_every_head_row_column_and_weight_in_view_is_named_and_legible(measured, viewport, text, step):
    got = measured[viewport, text, step]
    heads, seen = head_failures(got)
    assert seen >= 1, "no attention block in view"
    assert not heads, heads
    tokens = token_failures(got)
    assert not tokens, tokens[:6]
    values = value_failures(got)
    assert not values, values[:6]
    assert any(v["block"] in got["framed"] for v in got["values"]), "no weight printed"


def test_a_10_token_input_names_its_four_nines_by_position(measured):
    got = measured["1440×900", "999999", 7]
    rows = sorted(
        {(x["index"], x["text"]) for x in got["names"] if x["axis"] == "row" and re.match(r"nine\b", x["text"])}
    )
    assert [t for _, t in rows] == ["nine·1", "nine·4", "nine·6", "nine·9"], rows


def test_the_check_fails_an_unnamed_head_a_bare_repeated_token_and_a_small_weight():
    """The rules above can fail: a head with no name over it, "nine" twice, a weight at 8 px."""
    block = {
        "id": "x.h2.weights",
        "name": "decoder 2 · cross-attention · head 3",
        "kind": "bar",
        "rows": 2,
        "cols": 2,
        "row_axis": "source",
        "col_axis": None,
        "rect": {"x0": 10, "x1": 50, "y0": 10, "y1": 50},
    }
    got = {
        "W": 100,
        "H": 100,
        "blocks": [block],
        "labels": [],
        "tags": [],
        "framed": [block["id"]],
        "axes": {"source": ["nine", "nine"]},
        "values": [{"block": block["id"], "text": ".40", "px": 8}],
        "names": [{"text": "nine", "axis": "row", "index": i, "blocks": [block["id"]]} for i in range(2)],
    }
    assert head_failures(got)[0] and token_failures(got) and value_failures(got)
    got["tags"] = [{"text": "head 4", "rect": {"x0": 10, "x1": 40, "y0": 0, "y1": 9}}]  # another head's name
    assert head_failures(got)[0]
    got["tags"] = [{"text": "head 3", "rect": {"x0": 10, "x1": 40, "y0": 0, "y1": 9}}]
    got["names"] = [{"text": f"nine·{i + 1}", "axis": "row", "index": i, "blocks": [block["id"]]} for i in range(2)]
    got["values"][0]["px"] = 9
    assert not head_failures(got)[0] and not token_failures(got) and not value_failures(got)


def test_the_card_and_the_inspector_count_rows_from_1(page):
    show_input(page, "999999")
    page.evaluate("anatomyStage.step(7)")
    page.evaluate("anatomyStage.idle()")
    w = page.evaluate("anatomyStage.stage.scene.worked")
    title = page.evaluate("document.querySelector('#stage .stage-worked .wk-title').textContent")
    assert f"head {w['head']} · row {w['row'] + 1} (" in title, title
    options = page.evaluate(
        "[...document.querySelectorAll('#stage .stage-worked select[data-choose=row] option')].map(o => o.textContent)"
    )
    assert options[0] == "row 1 (nine)" and options[-1] == "row 10 (</s>)", options
    text = page.evaluate(f"anatomyStage.inspect('{w['weights']}', 0, 1).text")
    assert "row 1, column 2" in text, text
    assert page.errors == []
