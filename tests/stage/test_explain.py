"""Ask any cell where it came from, in a real browser (Playwright + Debian Chromium).

Each test states one claim: the page's generic per-op evaluator (static/stage/explain.js) recomputes
every kind of cell to 1e-5 and names exactly the input cells that tests/onnx_deps.py finds from the
same graph; clicking and the keyboard open a panel that says what explain() says and lights exactly
those cells; the panel walks back from a logit to the source tokens' embedding rows; compare mode
draws trace A − trace B and marks the rows only A has; a link restores the picture; CSV, PNG and ONNX
exports hold the trace's data, the stage's pixels and the trace's graph; bad links leave a working page
and a message.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import math
import random
import re
import struct
from pathlib import Path

import httpx
import numpy as np
import pytest

from tests.browser import has_chromium, open_stage_page, until
from tests.in_page import page_parts
from tests.onnx_deps import deps
from tests.onnx_numpy import as_array, evaluate

playwright_sync = pytest.importorskip("playwright.sync_api")

VIEWPORT = {"width": 1000, "height": 640}
SMALL = {"width": 800, "height": 480}  # above the phone layout (≤ 760 px)
INPUTS = ("0", "42", "777777")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

pytestmark = pytest.mark.skipif(not has_chromium(), reason="Debian chromium is not installed")


# ---- data, independent of the browser ---------------------------------------------------------


def written(tensor: dict) -> np.ndarray:
    """A tensor of the API (trace node or parameter) with its numbers as the JSON form writes them (float32's
    shortest decimal, read as float64; null meaning −∞), ids and booleans in their own dtype."""
    dtype = tensor.get("dtype", "float32")
    if dtype.startswith("float"):
        data = [-math.inf if v is None else v for v in tensor["data"]]
        return np.array(data, dtype=np.float64).reshape(tensor["shape"])
    return as_array(tensor)


def exact(tensor: dict) -> np.ndarray:
    """A tensor of the API as the browser holds it: each float32 value the very float32 the JSON's digits
    stand for (static/js/compact.js, static/stage/data.js), widened to float64; ids and booleans as they are."""
    values = written(tensor)
    return values.astype(np.float32).astype(np.float64) if values.dtype == np.float64 else values


@pytest.fixture(scope="module")
def weights(live_server: str) -> dict[str, np.ndarray]:
    doc = httpx.get(f"{live_server}/api/weights", timeout=60).json()
    return {p["id"]: exact(p) for p in doc["parameters"]}


@pytest.fixture(scope="module")
def traces(live_server: str) -> dict[str, dict]:
    """Each input's trace as the page holds it: the served tensors with the page's figures and scene."""
    inputs = (*INPUTS, "24")
    with httpx.Client(base_url=live_server, timeout=60) as c:
        return {
            i: {**p["trace"], "derived": p["derived"], "scene": p["scene"]}
            for i, p in zip(inputs, page_parts(c, list(inputs)), strict=True)
        }


def values_of(trace: dict, weights: dict) -> dict[str, np.ndarray]:
    out = dict(weights)
    for n in trace["nodes"]:
        out[n["id"]] = exact(n)
    return out


def sample_cells(trace: dict, weights: dict, per_op: int, seed: int) -> list[tuple[str, int, int]]:
    """per_op random cells of each op kind (random nodes of that op), parameters included."""
    rng = random.Random(seed)
    by_op: dict[str, list[dict]] = {}
    for n in trace["nodes"]:
        by_op.setdefault(n["op"], []).append(n)
    by_op["Parameter"] = [{"id": k, "shape": list(v.shape)} for k, v in weights.items()]
    cells = []
    for nodes in by_op.values():
        for _ in range(per_op):
            n = rng.choice(nodes)
            shape = n["shape"]
            if len(shape) == 0:
                cells.append((n["id"], 0, 0))
            elif len(shape) == 1:
                cells.append((n["id"], 0, rng.randrange(shape[0])))  # explain() reads (0, k) and (k, 0) alike
            else:
                cells.append((n["id"], rng.randrange(shape[0]), rng.randrange(shape[1])))
    return cells


def index_of(shape: list[int], row: int, col: int) -> tuple[int, ...]:
    return () if not shape else (max(row, col),) if len(shape) == 1 else (row, col)


def test_the_dependency_function_names_every_element_a_cell_reads(traces, weights):
    """onnx_deps is itself checked: scrambling every input element outside a cell's dependency set leaves
    the numpy ONNX evaluator's value of that cell unchanged, and scrambling the elements inside it that one
    input contributes (for the ops that read every element they get) changes the value."""
    trace = traces["42"]
    values = values_of(trace, weights)
    rng = np.random.default_rng(3)
    nodes = {n["id"]: n for n in trace["nodes"]}
    for nid, r, c in sample_cells(trace, weights, 4, seed=5):
        node = nodes.get(nid)
        if node is None or node["op"] == "Constant":
            continue
        idx = index_of(node["shape"], r, c)
        got = deps(node, values, idx)
        want = evaluate(node, values)[idx]
        scrambled = dict(values)
        for i in node["inputs"]:
            keep = np.zeros(np.shape(values[i]), dtype=bool)
            for j, at in got:
                if j == i:
                    keep[at] = True
            noise = (
                rng.normal(size=np.shape(values[i])).astype(values[i].dtype)
                if values[i].dtype.kind == "f"
                else rng.integers(0, 2, size=np.shape(values[i])).astype(values[i].dtype)
            )
            scrambled[i] = np.where(keep, values[i], noise)
            if values[i].ndim == 0:
                scrambled[i] = values[i] if keep else noise
        again = evaluate(node, scrambled)[idx]
        assert again == want or (np.isfinite(want) and abs(again - want) <= 1e-6 * max(1, abs(want))), (nid, idx)
        if node["op"] in (
            "Gemm",
            "MatMul",
            "Add",
            "Mul",
            "LayerNormalization",
            "Softmax",
            "Transpose",
            "Slice",
            "Concat",
        ):
            for i in {j for j, _ in got}:
                bumped = dict(values)
                bumped[i] = np.array(values[i], dtype=np.float64, copy=True)
                for j, at in got:
                    if j == i and np.isfinite(bumped[i][at]):
                        bumped[i][at] += rng.normal() * 3
                if np.isfinite(want) and want != 0:  # a masked weight stays 0 whatever its row holds
                    assert evaluate(node, bumped)[idx] != want, (nid, idx, i)


# ---- the browser ----------------------------------------------------------------------------------


def open_page(browser, url: str, viewport: dict = VIEWPORT, **context):
    """The stage page, with downloads and the clipboard allowed (the exports)."""
    return open_stage_page(
        browser, url, viewport, ("clipboard-read", "clipboard-write"), accept_downloads=True, **context
    )


@pytest.fixture(scope="module")
def page(browser, live_server):
    pg = open_page(browser, f"{live_server}/?input=42#step-6")
    yield pg
    pg.context.close()


def show(page, text: str) -> None:
    """The page's input becomes `text` (typed and run, as a reader would)."""
    page.fill("#number-input", text)
    page.press("#number-input", "Enter")
    page.wait_for_function(
        "t => anatomyStage.input && String(anatomyStage.input.number) === t", arg=text, timeout=60_000
    )
    page.evaluate("anatomyStage.idle()")


def clickable(page, node_id: str, cells: list[tuple[int, int]]) -> tuple[int, int, dict]:
    """The first of the cells whose centre is on screen with nothing of the page over it (the page may lay
    its own furniture over the stage): its row, column and client position."""
    for r, c in cells:
        pt = page.evaluate(
            "([i, r, c]) => { const p = anatomyStage.project(i, r, c); return {...p,"
            " free: p.visible && document.elementFromPoint(p.x, p.y)?.tagName === 'CANVAS'}; }",
            [node_id, r, c],
        )
        if pt["free"]:
            return r, c, pt
    raise AssertionError(f"no cell of {node_id} among {cells} can be clicked")


def panel(page) -> dict:
    return page.eval_on_selector(".explain-panel", "el => ({...el.dataset, hidden: el.hidden, text: el.textContent})")


def drawn_id(scene: dict, node_id: str, row: int, col: int) -> tuple[str, int, int]:
    """A head slice's cell as the cell of the block it is drawn in."""
    s = next((s for s in scene["slices"] if s["id"] == node_id), None)
    return (s["of"], row, col + s["col_offset"]) if s else (node_id, row, col)


EXPLAIN_MANY = """cells => cells.map(([i, r, c]) => { const e = anatomyStage.explain(i, r, c);
  return e.error ? {error: e.error} : {op: e.op, value: e.value === -Infinity ? '-inf' : e.value,
    recomputed: e.recomputed === -Infinity ? '-inf' : e.recomputed, formula: e.formula,
    inputs: e.inputs.map(x => [x.id, x.index, x.row, x.col, x.value === -Infinity ? '-inf' : x.value])}; })"""


def num(v) -> float:
    return -math.inf if v in ("-inf", None) else float(v)


@pytest.mark.parametrize("text", INPUTS)
def test_every_op_kind_is_recomputed_and_its_inputs_are_the_dependency_set(page, traces, weights, text):
    show(page, text)
    trace = traces[text]
    values = values_of(trace, weights)
    nodes = {n["id"]: n for n in trace["nodes"]}
    cells = sample_cells(trace, weights, 6, seed=int(text) + 1)
    answers = page.evaluate(EXPLAIN_MANY, cells)
    ops = set()
    for (nid, r, c), got in zip(cells, answers):
        assert "error" not in got, (nid, r, c, got)
        node = nodes.get(nid, {"op": "Parameter", "inputs": []})
        idx = index_of(list(np.shape(values[nid])), r, c)
        ops.add(got["op"])
        assert got["op"] == node["op"]
        want = float(values[nid][idx])
        assert num(got["value"]) == want, (nid, idx)
        rec = num(got["recomputed"])
        assert rec == want or abs(rec - want) <= 1e-5 * max(1.0, abs(want)), (nid, idx, rec, want)
        expected = set() if node["op"] == "Parameter" else deps(node, values, idx)
        named = {(i, tuple(at)) for i, at, *_ in got["inputs"]}
        assert named == expected, (nid, idx, sorted(named ^ expected)[:6])
        for i, at, row, col, v in got["inputs"]:
            assert num(v) == float(values[i][tuple(at)]), (nid, i, at)
            if len(at) == 2:
                assert (row, col) == tuple(at)
        assert got["formula"].startswith("\\begin{aligned}")
    assert ops == {n["op"] for n in trace["nodes"]} | {"Parameter"}, "every op kind of the trace is explained"


def test_clicking_a_cell_opens_the_panel_with_explains_answer_and_lights_exactly_its_inputs(page, traces):
    show(page, "42")
    page.evaluate("anatomyStage.step(6)")
    page.evaluate("anatomyStage.idle()")
    scene = traces["42"]["scene"]
    spread = [(r, c) for c in (5, 29, 17, 2) for r in (1, 2, 0, 7)]
    for nid in ("enc.0.self.q", "enc.0.self.W_q"):
        r, c, pt = clickable(page, nid, spread)
        page.mouse.click(pt["x"], pt["y"])
        page.wait_for_function(
            "([i, r, c]) => { const d = document.querySelector('.explain-panel').dataset;"
            " return d.id === i && d.row === String(r) && d.col === String(c); }",
            arg=[nid, r, c],
        )
        ex = page.evaluate("([i, r, c]) => anatomyStage.explain(i, r, c)", [nid, r, c])
        shown = panel(page)
        assert not shown["hidden"]
        assert shown["op"] == ex["op"]
        assert (float(shown["value"]), float(shown["recomputed"])) == (ex["value"], ex["recomputed"])
        lit = page.evaluate("anatomyStage.lit()")
        assert not [x for x in lit["cells"] if x.get("all")], "every block is dimmed or focused"
        assert {(x["id"], x["row"], x["col"]) for x in lit["cells"]} == {
            drawn_id(scene, x["id"], x["row"], x["col"]) for x in ex["inputs"]
        }
        assert (lit["target"]["id"], lit["target"]["row"], lit["target"]["col"]) == (nid, r, c)
    assert "parameter" in panel(page)["text"]
    assert page.get_attribute(".explain-live", "aria-live") == "polite"
    assert page.errors == []


def test_the_lit_cells_are_exactly_the_inputs_for_every_op_kind(page, traces, weights):
    show(page, "42")
    trace, scene = traces["42"], traces["42"]["scene"]
    firsts = {}
    for n in trace["nodes"]:
        firsts.setdefault(n["op"], n)
    rng = random.Random(11)
    for op, n in firsts.items():
        shape = n["shape"]
        r = rng.randrange(shape[0]) if shape else 0
        c = rng.randrange(shape[1]) if len(shape) == 2 else 0
        ex = page.evaluate("([i, r, c]) => anatomyStage.select(i, r, c)", [n["id"], r, c])
        assert panel(page)["id"] == n["id"], op
        lit = page.evaluate("anatomyStage.lit()")
        assert {(x["id"], x["row"], x["col"]) for x in lit["cells"]} == {
            drawn_id(scene, x["id"], x["row"], x["col"]) for x in ex["inputs"]
        }, op
        assert (lit["target"]["id"], lit["target"]["row"], lit["target"]["col"]) == drawn_id(scene, n["id"], r, c)
    page.evaluate("anatomyStage.close()")
    assert panel(page)["hidden"] and page.evaluate("anatomyStage.lit().target") is None


def test_the_keyboard_opens_walks_and_closes_the_panel(page):
    show(page, "42")
    page.evaluate("anatomyStage.step(6)")
    page.evaluate("anatomyStage.idle()")
    page.evaluate("anatomyStage.inspect('enc.0.self.q', 2, 7)")  # the cell cursor, as the arrow keys move it
    page.focus("#stage")
    page.keyboard.press("Enter")
    page.wait_for_function("document.querySelector('.explain-panel').dataset.id === 'enc.0.self.q'")
    shown = panel(page)
    ex = page.evaluate("anatomyStage.explain('enc.0.self.q', 2, 7)")
    assert (shown["row"], shown["col"], float(shown["recomputed"])) == ("2", "7", ex["recomputed"])
    assert page.evaluate("document.activeElement.classList.contains('explain-title')"), "focus moves to the panel"
    for _ in range(40):  # Tab through the panel to its first input cell, and Enter on it
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('explain-cell')"):
            break
    target = page.evaluate("({...document.activeElement.dataset})")
    page.keyboard.press("Enter")
    page.wait_for_function("t => document.querySelector('.explain-panel').dataset.id === t.id", arg=target)
    shown = panel(page)
    assert (shown["row"], shown["col"]) == (target["row"], target["col"])
    assert page.locator(".explain-trail li").count() == 2
    page.keyboard.press("Escape")
    assert panel(page)["hidden"]
    assert page.evaluate("document.activeElement.id") == "stage"


def hops_to(trace: dict, goal: str) -> dict[str, float]:
    """Each tensor's number of op steps back to `goal` through its inputs (inf: it does not lead there)."""
    inputs = {n["id"]: n["inputs"] for n in trace["nodes"]}
    memo: dict[str, float] = {}

    def d(i: str) -> float:
        if i == goal:
            return 0
        if i not in memo:
            memo[i] = math.inf
            memo[i] = 1 + min((d(j) for j in inputs.get(i, [])), default=math.inf)
        return memo[i]

    for i in inputs:
        d(i)
    return memo | {goal: 0}


def test_walking_back_from_a_logit_reaches_the_source_tokens_embedding_rows(page, traces):
    show(page, "42")
    trace = traces["42"]
    gather = next(
        n for n in trace["nodes"] if n["op"] == "Gather" and n["inputs"][0] == "E" and n["id"].startswith("src.")
    )
    hops = hops_to(trace, gather["id"])
    ids = next(n for n in trace["nodes"] if n["id"] == gather["inputs"][1])["data"]
    row = 1
    chosen = next(n for n in trace["nodes"] if n["op"] == "ArgMax")["data"][row]
    for j, token in enumerate(trace["source_tokens"]):
        ui = j == len(trace["source_tokens"]) - 1  # the last token through the panel's buttons, others by explain()
        cell = ("out.logits", row, chosen)
        if ui:
            page.evaluate("([i, r, c]) => anatomyStage.select(i, r, c)", list(cell))
        for _ in range(60):
            if cell[0] == gather["id"]:
                break
            ex = page.evaluate("([i, r, c]) => anatomyStage.explain(i, r, c)", list(cell))
            best = min(ex["inputs"], key=lambda x: (hops.get(x["id"], math.inf), x["index"][:1] != [j]))
            assert hops.get(best["id"], math.inf) < math.inf, (cell, "no input leads back to the source")
            cell = (best["id"], best["row"], best["col"])
            if ui:
                page.click(f'.explain-cell[data-id="{cell[0]}"][data-row="{cell[1]}"][data-col="{cell[2]}"] >> nth=0')
                page.wait_for_function(
                    "([i, r, c]) => { const d = document.querySelector('.explain-panel').dataset;"
                    " return d.id === i && d.row === String(r) && d.col === String(c); }",
                    arg=list(cell),
                )
        assert cell[0] == gather["id"] and cell[1] == j
        ex = page.evaluate("([i, r, c]) => anatomyStage.explain(i, r, c)", list(cell))
        e_cell = next(x for x in ex["inputs"] if x["id"] == "E")
        assert e_cell["row"] == ids[j], "the embedding row of the source token"
        if ui:
            page.click(f'.explain-cell[data-id="E"][data-row="{ids[j]}"] >> nth=0')
            page.wait_for_function("document.querySelector('.explain-panel').dataset.id === 'E'")
            assert f"the token “{token}”" in panel(page)["text"]
            crumbs = page.locator(".explain-trail li")
            assert crumbs.count() > 10
            page.locator(".explain-trail li button").first.click()  # all the way back to the logit
            page.wait_for_function("document.querySelector('.explain-panel').dataset.id === 'out.logits'")
            assert page.locator(".explain-trail li").count() == crumbs.count()
    assert page.errors == []


def block_values(page, ids: list[str]) -> dict[str, list[float]]:
    """The values the GPU draws (the instanced attribute), per block, in drawn order."""
    return page.evaluate(
        """ids => { const f = anatomyStage.stage.cells, a = f.mesh.geometry.getAttribute('aVal').array;
      const out = {}; for (const id of ids) { const e = f.entry(id); if (!e) continue;
        out[id] = Array.from({length: e.count}, (_, k) => a[2 * (e.start + k)]); } return out; }""",
        ids,
    )


def test_compare_mode_draws_a_minus_b_for_shared_rows_and_marks_the_others_absent(page, traces, weights, live_server):
    show(page, "42")
    page.click("#pin-input")
    page.wait_for_function("document.getElementById('pin-input').getAttribute('aria-pressed') === 'true'")
    long = httpx.get(f"{live_server}/api/trace", params={"input": "731015"}, timeout=60).json()
    show(page, "731015")
    assert "compare=42" in page.url
    page.wait_for_function("!document.querySelector('.stage-banner').hidden")
    assert "731015 − 42" in page.text_content(".stage-banner")
    a = {n["id"]: n for n in long["nodes"] if n["op"] != "Slice"}
    b = {n["id"]: n for n in traces["42"]["nodes"]}
    drawn = block_values(page, [*a, "E", "enc.0.ffn.W_2"])
    absent = shared = 0
    for nid, na in a.items():
        va, vb = exact(na).astype(np.float64), exact(b[nid]).astype(np.float64)
        got = np.array(drawn[nid]).reshape(va.shape) if va.ndim else np.array(drawn[nid][0])
        for idx in np.ndindex(va.shape):
            inside = all(i < n for i, n in zip(idx, vb.shape))
            if not inside:
                assert got[idx] >= 1e29, (nid, idx, "a row only A has is marked absent, not zero")
                absent += 1
            elif not (np.isfinite(va[idx]) and np.isfinite(vb[idx])):
                assert got[idx] <= -1e29, (nid, idx)
            else:
                assert got[idx] == pytest.approx(va[idx] - vb[idx], rel=1e-5, abs=1e-6), (nid, idx)
                shared += 1
    assert absent > 500 and shared > 5000
    for pid in ("E", "enc.0.ffn.W_2"):  # parameters stay as they are (W_2 is drawn transposed)
        w = weights[pid].T if pid.endswith("W_2") else weights[pid]
        assert np.allclose(drawn[pid], w.ravel())
    info = page.evaluate("anatomyStage.inspect('src.x0', 1, 3)")
    shown = page.eval_on_selector(".stage-inspector", "el => ({...el.dataset, text: el.textContent})")
    want_b = exact(b["src.x0"])[1, 3]
    assert float(shown["compareValue"]) == pytest.approx(want_b)
    assert float(shown["value"]) == pytest.approx(info["value"])
    assert "input 731015" in shown["text"] and "input 42" in shown["text"]
    page.evaluate("anatomyStage.inspect('src.x0', 5, 3)")
    assert page.eval_on_selector(".stage-inspector", "el => el.dataset.compareValue") == "absent"
    assert page.errors == []


def test_a_link_restores_input_step_cell_and_comparison(page, browser, traces):
    show(page, "24")  # compare 24 − 42 (pinned by the previous test, or pinned here)
    if page.get_attribute("#pin-input", "aria-pressed") != "true":
        show(page, "42")
        page.click("#pin-input")
        show(page, "24")
    # the reader scrolls to step 16 (a wheel first: the page holds its place after a run until the reader scrolls)
    page.evaluate("window.dispatchEvent(new WheelEvent('wheel', {deltaY: 1}))")
    page.evaluate("document.querySelector('#step-16').scrollIntoView()")
    page.wait_for_function("window.anatomy.step === 16")
    page.wait_for_timeout(400)
    page.evaluate("anatomyStage.idle()")
    nid = traces["24"]["scene"]["steps"][15]["subject"][-1]
    _, _, pt = clickable(page, nid, [(2, 1), (3, 2), (1, 0), (0, 1)])
    page.mouse.click(pt["x"], pt["y"])
    page.wait_for_function("i => document.querySelector('.explain-panel').dataset.id === i", arg=nid)
    page.wait_for_function("() => location.search.includes('cell=')")
    url = page.url
    assert re.search(r"input=24&compare=42&cell=[^#]+#step-16$", url), url
    before = {
        "panel": panel(page),
        "camera": page.evaluate("anatomyStage.camera()"),
        "lit": page.evaluate("anatomyStage.lit()"),
        "drawn": block_values(page, [nid]),
    }
    other = open_page(browser, url)
    try:
        other.wait_for_function(
            "i => document.querySelector('.explain-panel').dataset.id === i", arg=nid, timeout=30_000
        )
        other.wait_for_function("() => !document.querySelector('.stage-banner').hidden")
        other.evaluate("anatomyStage.idle()")
        after = {
            "panel": panel(other),
            "camera": other.evaluate("anatomyStage.camera()"),
            "lit": other.evaluate("anatomyStage.lit()"),
            "drawn": block_values(other, [nid]),
        }
        assert other.evaluate("window.anatomy.step") == 16
        assert after["panel"] == before["panel"]
        assert after["lit"] == before["lit"]
        assert after["drawn"] == before["drawn"]
        for k in ("azimuth", "elevation", "distance"):
            assert after["camera"][k] == pytest.approx(before["camera"][k], rel=1e-6)
        assert after["camera"]["target"] == pytest.approx(before["camera"]["target"])
        assert other.url == url
        assert other.errors == []
    finally:
        other.context.close()
    page.click("#pin-input")  # unpin: compare mode off, the URL forgets it
    page.wait_for_function("() => !location.search.includes('compare=')")
    assert page.evaluate("anatomyStage.stage.comparing") is False


def shortest(values: np.ndarray) -> list[float]:
    """Each value's float32 in its shortest digits (what the JSON form writes), read back as float64."""
    return [float(str(v)) for v in np.asarray(values).astype(np.float32).ravel()]


def test_csv_of_a_block_is_the_traces_data_with_labels(page, traces, weights):
    """The CSV holds the block's float32s in the JSON form's digits (not the float64 expansion the page
    holds them as), −∞ as -Infinity, rows and columns labelled."""
    show(page, "42")
    trace = traces["42"]
    page.evaluate("anatomyStage.select('enc.0.self.h1.weights', 1, 2)")
    with page.expect_download() as dl:
        page.click(".explain-csv")
    text = Path(dl.value.path()).read_text()
    assert dl.value.suggested_filename == "anatomy-42-enc.0.self.h1.weights.csv"
    rows = list(csv.reader(io.StringIO(text)))
    node = exact(next(n for n in trace["nodes"] if n["id"] == "enc.0.self.h1.weights"))
    tokens = trace["source_tokens"]
    assert rows[0] == ["enc.0.self.h1.weights", *(f"{j} {t}" for j, t in enumerate(tokens))]
    assert [r[0] for r in rows[1:]] == [f"{i} {t}" for i, t in enumerate(tokens)]
    assert (
        [float(x) for r in rows[1:] for x in r[1:]]
        == shortest(node)
        == written(next(n for n in trace["nodes"] if n["id"] == "enc.0.self.h1.weights")).ravel().tolist()
    )
    for bid, want in [
        ("enc.0.ffn.W_2", weights["enc.0.ffn.W_2"]),
        ("dec.0.self.h0.masked", None),
        ("tgt.ids", None),
        ("enc.0.self.b_q", weights["enc.0.self.b_q"]),
    ]:
        got = page.evaluate("i => anatomyStage.csv(i)", bid)
        rows = list(csv.reader(io.StringIO(got)))
        data = np.array([[float(x) for x in r[1:]] for r in rows[1:]])
        if want is None:
            want = exact(next(n for n in trace["nodes"] if n["id"] == bid))
        assert data.ravel().tolist() == shortest(want), bid  # W_2 as (d_ff, d_model)
    assert rows[0] == ["enc.0.self.b_q", *map(str, range(32))]


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_png_of_the_stage_is_a_nonempty_image_of_its_size(page):
    size = page.evaluate(
        "(() => { const c = document.querySelector('#stage canvas');"
        " return [c.width, c.height, document.getElementById('stage').clientWidth,"
        " document.getElementById('stage').clientHeight]; })()"
    )
    assert size[:2] == size[2:]  # device pixel ratio 1: the canvas is the stage's size
    url = page.evaluate("anatomyStage.png()")
    data = base64.b64decode(url.split(",", 1)[1])
    assert png_size(data) == tuple(size[:2])
    colours = page.evaluate(
        """async url => { const img = new Image(); img.src = url; await img.decode();
      const c = document.createElement('canvas'); c.width = img.width; c.height = img.height;
      const g = c.getContext('2d'); g.drawImage(img, 0, 0); const d = g.getImageData(0, 0, c.width, c.height).data;
      const seen = new Set();
      for (let i = 0; i < d.length; i += 4 * 97) seen.add(d[i] << 16 | d[i + 1] << 8 | d[i + 2]);
      return seen.size; }""",
        url,
    )
    assert colours > 50, "the image holds the drawing, not a blank canvas"
    with page.expect_download() as dl:
        page.click(".stage-png")
    assert png_size(Path(dl.value.path()).read_bytes()) == tuple(size[:2])


def test_onnx_button_downloads_the_trace_on_the_stage_as_a_checked_onnx_model(page, traces, live_server):
    onnx = pytest.importorskip("onnx")
    show(page, "42")
    with page.expect_download() as dl:
        page.click(".stage-onnx")
    assert dl.value.suggested_filename == "anatomy-42.onnx"
    model = onnx.load_from_string(Path(dl.value.path()).read_bytes())
    onnx.checker.check_model(model, full_check=True)
    assert [o.name for o in model.graph.output] == [n["id"] for n in traces["42"]["nodes"]]
    # the address carries what the stage shows: parts switched off, the snapshot, the model
    url = page.evaluate("""import('/static/stage/export.js').then(m => m.onnxUrl(
      { input: { number: 7 }, ablation: ['enc.0.ffn', 'dec.1.cross.h3'], checkpoint: 1000 }, 'modern'))""")
    assert url == "/api/trace.onnx?input=7&ablate=enc.0.ffn%2Cdec.1.cross.h3&checkpoint=1000&model=modern"
    url = page.evaluate("""import('/static/stage/export.js').then(m => m.onnxUrl(
      { input: { number: 7 }, ablation: ['enc.0.ffn', 'dec.1.cross.h3'], checkpoint: 1000 }))""")
    r = httpx.get(live_server + url, timeout=60)
    assert (
        r.status_code == 200
        and 'filename="anatomy-7-enc.0.ffn-dec.1.cross.h3-c1000.onnx"' in r.headers["content-disposition"]
    )


def test_the_formula_is_copied_as_latex(page):
    ex = page.evaluate("anatomyStage.select('enc.0.self.ln', 1, 4)")
    page.click(".explain-copy")
    page.wait_for_function("document.querySelector('.explain-copy').dataset.done === 'true'")
    assert page.evaluate("navigator.clipboard.readText()") == ex["formula"]
    assert "\\frac" in ex["formula"] and "\\gamma" in ex["formula"]
    assert page.locator(".explain-formula .katex").count() == 1, "typeset with KaTeX"


@pytest.mark.parametrize(
    "query, says",
    [
        ("cell=nope.x:0:0", "no tensor “nope.x”"),
        ("cell=enc.0.self.q:99:0", "row 99 is out of range"),
        ("cell=garbage", "whole numbers ≥ 0"),
        ("compare=banana", "Cannot compare with “banana”"),
    ],
)
def test_a_bad_link_gives_a_clear_message_and_a_working_page(browser, live_server, query, says):
    pg = open_page(browser, f"{live_server}/?input=42&{query}#step-6", SMALL)  # nothing measured on screen
    try:
        where = "#input-error" if query.startswith("compare") else ".stage-message"
        pg.wait_for_function(
            "([w, s]) => (document.querySelector(w).textContent || '').includes(s)", arg=[where, says], timeout=30_000
        )
        assert panel(pg)["hidden"]
        assert "cell=" not in pg.url and "compare=" not in pg.url
        ex = pg.evaluate("anatomyStage.select('src.x0', 0, 1)")  # and the page works
        assert panel(pg)["id"] == "src.x0" and ex["op"] == "Add"
        bad = pg.evaluate("anatomyStage.explain('src.x0', 0, 99)")
        assert bad["error"].endswith("column 99 is out of range (0…31)")
        assert pg.errors == []
    finally:
        pg.context.close()


def test_the_articles_compare_link_applies_in_place(page):
    show(page, "731015")
    page.evaluate("window.dispatchEvent(new WheelEvent('wheel', {deltaY: 1}))")  # the reader scrolls: the page lets go
    page.evaluate("document.querySelector('#step-5').scrollIntoView()")
    link = page.locator('#step-5 a[href*="compare=24"]')
    assert link.count() == 1
    loads = page.evaluate("performance.getEntriesByType('navigation').length")
    link.click()
    page.wait_for_function("() => anatomyStage.stage.comparing && anatomyStage.input.number === 42")
    assert page.evaluate("anatomyStage.stage.compareTrace.input.number") == 24
    assert "input=42&compare=24" in page.url
    assert page.evaluate("performance.getEntriesByType('navigation').length") == loads  # no reload
    page.click("#pin-input")
    page.wait_for_function("() => !anatomyStage.stage.comparing")


def test_a_model_of_another_shape_is_explained_unchanged(page, live_server):
    """The research variants' scenes draw; their cells are explained by the same evaluators: every
    op kind recomputes to 1e-5 and names its dependency set (learned positions gather P; one head; d_k 4).
    On the module's page; the served model and input 42 are drawn again afterwards."""
    from tests.stage.test_stage import variant_documents

    pg = page
    # as JSON text, parsed by the page (the same numbers; Playwright's own argument encoding is slow for the
    # weights' numbers)
    draw = "([t, w]) => anatomyStage.drawModel(JSON.parse(t), JSON.parse(w))"
    try:
        for name in ("learned_positions", "heads_1", "d_k_4"):
            doc, wdoc = variant_documents(name)
            assert pg.evaluate(draw, [json.dumps(doc), json.dumps(wdoc)])
            values = values_of(doc, {p["id"]: exact(p) for p in wdoc["parameters"]})
            nodes = {n["id"]: n for n in doc["nodes"]}
            cells = sample_cells(doc, {p["id"]: values[p["id"]] for p in wdoc["parameters"]}, 3, seed=len(name))
            for (nid, r, c), got in zip(cells, pg.evaluate(EXPLAIN_MANY, cells)):
                assert "error" not in got, (name, nid, got)
                idx = index_of(list(np.shape(values[nid])), r, c)
                want = float(values[nid][idx])
                rec = num(got["recomputed"])
                assert rec == want or abs(rec - want) <= 1e-5 * max(1.0, abs(want)), (name, nid, idx)
                node = nodes.get(nid)
                expected = deps(node, values, idx) if node else set()
                assert {(i, tuple(at)) for i, at, *_ in got["inputs"]} == expected, (name, nid, idx)
        assert pg.errors == []
    finally:
        with httpx.Client(base_url=live_server, timeout=60) as c:  # 42 as the served page holds it
            shown = page_parts(c, ["42"])[0]
            served = [json.dumps({**shown["trace"], "scene": shown["scene"]}), c.get("/api/weights").text]
        assert pg.evaluate(draw, served)
        assert pg.evaluate("anatomyStage.explain('enc.0.self.q', 1, 5).recomputed") == pytest.approx(
            pg.evaluate("anatomyStage.explain('enc.0.self.q', 1, 5).value"), abs=1e-5
        )


def test_a_tap_on_a_phone_explains_a_cell_and_screenshots_of_the_panel_and_of_compare_mode(browser, live_server):
    """A click on the desktop, a tap on the phone opens the panel, under the site's Content-Security-Policy
    (no console error); looked at by a person: test-artifacts/explain-*.png (desktop and phone)."""
    ARTIFACTS.mkdir(exist_ok=True)
    for w, h in ((1440, 900), (390, 844)):
        phone = w < 700
        ctx = browser.new_context(viewport={"width": w, "height": h}, has_touch=phone, is_mobile=phone)
        pg = ctx.new_page()
        errors = []
        pg.on("console", lambda m, errors=errors: m.type == "error" and errors.append(m.text))
        pg.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
        try:
            pg.goto(f"{live_server}/?input=42#step-6")
            until(pg, "window.anatomyStage && anatomyStage.ready")
            pg.evaluate("anatomyStage.idle()")
            r, c, pt = clickable(pg, "enc.0.self.q", [(1, 5), (1, 29), (2, 17), (0, 20)])
            if phone:
                pg.touchscreen.tap(pt["x"], pt["y"])
            else:
                pg.mouse.click(pt["x"], pt["y"])
            pg.wait_for_selector(".explain-panel:not([hidden])", timeout=10_000)
            assert (panel(pg)["id"], panel(pg)["row"], panel(pg)["col"]) == ("enc.0.self.q", str(r), str(c))
            pg.evaluate("anatomyStage.idle()")
            pg.screenshot(path=str(ARTIFACTS / f"explain-panel-{w}.png"))
            pg.goto(f"{live_server}/?input=731015&compare=42#step-16")
            pg.wait_for_selector(".stage-banner:not([hidden])", timeout=60_000)
            until(pg, "window.anatomyStage && anatomyStage.ready && anatomyStage.stage.comparing")
            pg.evaluate("anatomyStage.idle()")
            pg.screenshot(path=str(ARTIFACTS / f"explain-compare-{w}.png"))
            assert errors == []
        finally:
            ctx.close()
