"""Steps 18–20 show what they say, in Chromium: the piece greedy decoding picks is marked
in every row of the probability block, at the trace's argmax, inside the step's view on a desktop and a
phone, by one mark (the white outline of its row's largest probability: no ring on it too, as there was
until the outline and the ring met on the same cell); and step 20's loss table holds the smoothed targets
and losses that numpy recomputes from the trace's probabilities, for inputs whose output is the reference
and for a snapshot whose output leaves it, and rings each training row's reference piece, nothing else."""

import json
import urllib.request

import numpy as np
import pytest

from model.vocab import VOCAB
from tests.browser import open_stage_page
from tests.onnx_numpy import as_array

EPS = 0.1  # ε_ls of the recipe (tests/page/test_loss_view.py checks the code uses it)
CASES = ["input=305", "input=777777", "input=305&checkpoint=100"]  # the snapshot writes "fünf und fünfzig"
SIZES = [{"width": 1440, "height": 900}, {"width": 390, "height": 844}]

IN_VIEW = """() => {
  const stage = document.querySelector('#stage').getBoundingClientRect();
  const covers = [...document.querySelectorAll('[data-covers-stage], .stage-tools')]
    .filter(e => !e.hidden && e.offsetParent).map(e => e.getBoundingClientRect());
  return anatomyStage.outlined('out.probs').map(m => {
    const p = anatomyStage.project('out.probs', m.row, m.col);
    const under = covers.some(r => p.x >= r.left && p.x <= r.right && p.y >= r.top && p.y <= r.bottom);
    return { row: m.row, inside: p.visible && p.x > stage.left + 4 && p.x < stage.right - 4 && p.y > stage.top + 4
      && p.y < stage.bottom - 4 && !under };
  });
}"""


def probs_of(base: str, query: str) -> tuple[dict, np.ndarray]:
    with urllib.request.urlopen(f"{base}/api/trace?{query}", timeout=120) as r:
        t = json.load(r)
    return t, as_array(next(n for n in t["nodes"] if n["id"] == "out.probs")).astype(np.float64)


@pytest.fixture(scope="module")
def pages(browser, live_server):
    opened = []

    def open_(query: str, step: int, size: dict):
        page = open_stage_page(browser, f"{live_server}/?{query}#step-{step}", size)
        opened.append(page)
        return page

    yield open_
    for p in opened:
        p.context.close()


@pytest.mark.parametrize("query", CASES)
def test_the_chosen_piece_is_outlined_at_each_row_s_argmax_and_step_20_draws_the_loss(pages, live_server, query):
    t, probs = probs_of(live_server, query)
    page = pages(query, 18, SIZES[0])
    argmax = {r: int(c) for r, c in enumerate(probs.argmax(axis=1))}
    assert t["output_tokens"][: len(argmax)] == VOCAB.tokens_of(list(argmax.values()))[: len(t["output_tokens"])]
    for step in (18, 19):
        page.evaluate(f"async () => {{ anatomyStage.step({step}); await anatomyStage.idle(); }}")
        outlined = {m["row"]: m["col"] for m in page.evaluate("anatomyStage.outlined('out.probs')")}
        assert outlined == argmax, step
        assert page.evaluate("anatomyStage.marked()") == [], f"step {step}: a ring on top of the outline"
    page.evaluate("async () => { anatomyStage.step(18); await anatomyStage.idle(); }")
    assert all(x["inside"] for x in page.evaluate(IN_VIEW))
    page.evaluate("anatomyStage.step(20)")
    page.evaluate("anatomyStage.idle()")
    drawn = page.evaluate("""() => { const el = document.querySelector('.stage-loss');
      const rows = [...el.querySelectorAll('tr[data-row]')];
      return { hidden: el.hidden, total: {...el.dataset},
        rows: rows.map(tr => ({...tr.dataset, cells: [...tr.children].map(td => td.textContent)})),
        rings: anatomyStage.marked().filter(m => m.kind === 'reference') }; }""")
    assert not drawn["hidden"]
    reference, out, V = VOCAB.target_tokens(t["input"]["number"]), t["output_tokens"], probs.shape[1]
    forced = [r for r in range(len(out)) if r < len(reference) and out[:r] == reference[:r]]
    assert [int(x["row"]) for x in drawn["rows"]] == forced
    assert ("checkpoint" in query) == (len(forced) < len(out))
    losses, plain = [], []
    for x in drawn["rows"]:
        r, y = int(x["row"]), VOCAB.ids([reference[int(x["row"])]])[0]
        q = np.full(V, EPS / V)
        q[y] += 1 - EPS
        losses.append(-(q * np.log(probs[r])).sum())
        plain.append(-np.log(probs[r, y]))
        assert x["reference"] == reference[r] and float(x["pReference"]) == pytest.approx(probs[r, y], rel=1e-6)
        assert float(x["loss"]) == pytest.approx(losses[-1], rel=1e-6)
        assert x["cells"][3] == f"{q[y]:.4f}"  # what the reader reads: q(y), the smoothed and the plain loss
        assert x["cells"][6] == f"{losses[-1]:.3f}" and x["cells"][7] == f"{plain[-1]:.3f}"
    assert float(drawn["total"]["sum"]) == pytest.approx(sum(losses), rel=1e-6)
    assert float(drawn["total"]["plainMean"]) == pytest.approx(np.mean(plain), rel=1e-6)
    assert float(drawn["total"]["qOther"]) == pytest.approx(EPS / V)
    # the reference piece ringed on the block, one ring per training row, and no other ring
    assert {m["row"]: m["col"] for m in drawn["rings"]} == {r: VOCAB.ids([reference[r]])[0] for r in forced}
    assert len(drawn["rings"]) == len(forced) == len(page.evaluate("anatomyStage.marked()"))


@pytest.mark.parametrize("query", CASES[:2])
def test_on_a_phone_every_chosen_piece_is_inside_the_step_18_view(pages, query):
    """A phone frames a window of the 65 columns around the pieces written (static/compute/windows.js); a piece the
    window cannot hold as well (the last row's </s>, far to the left) is named in the window's label."""
    page = pages(query, 18, SIZES[1])
    inside = page.evaluate(IN_VIEW)
    window = (page.evaluate("anatomyStage.framed()") or {}).get("window")
    label = window["label"] if window else ""
    outlined = {m["row"]: m["col"] for m in page.evaluate("anatomyStage.outlined('out.probs')")}
    out = [x["row"] for x in inside if not x["inside"]]
    assert inside and len(out) < len(inside), inside
    for r in out:
        c = outlined[r]
        assert window and not window["cols"][0] <= c <= window["cols"][1], (r, c, window)
        assert f"row {r + 1}'s {VOCAB.tokens[c]}: column {c + 1}" in label, label
    # the pointer finds a cell inside the window and none among the columns not drawn
    c0, c1 = window["cols"]
    hits = page.evaluate(
        """(cols) => cols.map(c => { const p = anatomyStage.project('out.probs', 0, c);
      return anatomyStage.stage.pointer.hitTest(p.x, p.y); })""",
        [c0, c1, c0 - 1] if c0 else [c0, c1, c1 + 1],
    )
    assert [h and (h["id"], h["c"]) for h in hits[:2]] == [("out.probs", c0), ("out.probs", c1)], hits
    assert hits[2] is None or hits[2]["id"] != "out.probs", hits
