"""An input of the shape on show is drawn in place (static/stage/cells.js `update`, stage.js `rebuildDecor`): no
new cell buffers, the labels' atlas kept where the words are the same, and after 50 such inputs the buffers hold
exactly what a fresh layout of the last one holds, and the numbers printed on the cells are the server's."""

from __future__ import annotations

import math

import httpx
import pytest

from tests.browser import open_stage_page
from tests.stage.test_readouts import printed_unit, tensor_value
from tests.stage.test_stage import pytestmark  # noqa: F401  (skip without Chromium)

pytest.importorskip("playwright.sync_api")

SHAPE = "() => anatomyStage.stage.scene.blocks.map((b) => `${b.id}:${b.rows}x${b.cols}`).join(',')"
LOAD = "async (n) => { if (!(await anatomyStage.load(n))) throw new Error('refused: ' + n); }"

# What the GPU holds for the cells: each value now, the row maxima, each block's scale; then the same for a fresh
# layout of the same trace (the path a new shape takes), for comparison.
BUFFERS = """() => {
  const s = anatomyStage.stage, c = s.cells, g = () => c.mesh.geometry;
  const held = () => ({
    values: Array.from(g().getAttribute('aVal').array.filter((_, i) => i % 2 === 0)),
    marks: Array.from(g().getAttribute('aMark').array),
    scales: [...c.index.values()].map((e) => e.scale),
    ids: [...c.index.keys()],
  });
  const inPlace = held();
  c.layout = null;  // forget the layout: the next build lays the cells out anew
  s.buildCells();
  return {inPlace, fresh: held()};
}"""

PRINTED = """async () => {
  anatomyStage.step(7); await anatomyStage.idle();
  return [...anatomyStage.stage.el.querySelectorAll('.readout-value')].filter((e) => e.checkVisibility())
    .map((e) => ({block: e.dataset.block, r: Number(e.dataset.r), c: Number(e.dataset.c), text: e.textContent,
                  kind: anatomyStage.stage.blockById.get(e.dataset.block)?.kind}));
}"""


@pytest.fixture(scope="module")
def page(browser, live_server):
    pg = open_stage_page(
        browser, f"{live_server}/?input=21#step-7", {"width": 1280, "height": 800}, reduced_motion="reduce"
    )
    yield pg
    pg.context.close()


def counts(page) -> tuple[int, int]:
    return tuple(page.evaluate("() => [anatomyStage.stats.cellLayouts, anatomyStage.stats.labelAtlases]"))


def test_fifty_inputs_of_one_shape_are_written_in_place_and_end_as_a_fresh_layout(page, live_server):
    page.evaluate(LOAD, 21)
    shape = page.evaluate(SHAPE)
    layouts, atlases = counts(page)
    drawn = []
    for n in [*range(22, 100), *range(21, 100)]:
        if len(drawn) == 50:
            break
        page.evaluate(LOAD, n)
        if page.evaluate(SHAPE) != shape:  # a number of another shape (a decade's one word): laid out anew
            page.evaluate(LOAD, 21)
            layouts = counts(page)[0]
            continue
        drawn.append(n)
        assert counts(page)[0] == layouts, f"{n}: the cells were laid out anew for an input of the same shape"
    assert len(drawn) == 50
    assert counts(page)[1] > atlases  # their words differ: the atlas is drawn for them
    held = page.evaluate(BUFFERS)
    assert held["inPlace"]["ids"] == held["fresh"]["ids"]
    for key in ("values", "marks", "scales"):
        assert held["inPlace"][key] == held["fresh"][key], key
    # the numbers printed on the cells at step 7 are the server's trace of the last input
    trace = httpx.get(f"{live_server}/api/trace", params={"input": drawn[-1]}, timeout=60).json()
    nodes = {n["id"]: {"shape": n["shape"], "data": list(flat(n["data"]))} for n in trace["nodes"]}
    printed = [v for v in page.evaluate(PRINTED) if len(nodes[v["block"]]["shape"]) == 2]
    assert len(printed) > 50  # step 7: the heads' scores and weights
    for v in printed:
        node = nodes[v["block"]]
        x = tensor_value(node, v["r"], v["c"])
        assert math.isfinite(x), v
        unit = printed_unit(v["kind"], v["text"], [y for y in map(float_or_inf, node["data"])])
        assert abs(float(v["text"]) - x) <= unit + 1e-7, (v, x)


def flat(data):
    for v in data:
        if isinstance(v, list):
            yield from flat(v)
        else:
            yield v


def float_or_inf(v) -> float:
    return -math.inf if v is None else float(v)


def test_the_same_words_keep_the_atlas_and_a_new_shape_lays_the_cells_out(page):
    page.evaluate(LOAD, 21)
    layouts, atlases = counts(page)
    page.evaluate(LOAD, "twenty one")  # the same tokens: the same labels
    assert counts(page) == (layouts, atlases)
    page.evaluate(LOAD, 777777)
    assert counts(page) == (layouts + 1, atlases + 1)
