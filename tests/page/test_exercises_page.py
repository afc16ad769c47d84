"""Predict, then reveal, in Chromium, on one page: for three inputs, every exercise is given one wrong and one
right answer through its own controls (a cell from the list, or on the stage once armed; an option; a typed
number), and the page's verdict agrees with the answer recomputed from the served trace (tests/
test_exercises.py's `recompute`), says why, lights the evidence cell on the stage (the explanation's panel
closed, not to cover the verdict) and keeps the progress in localStorage; then one exercise of each kind is
answered with the keyboard alone, and axe-core finds no serious or critical violation in the answered boxes."""

from pathlib import Path

import pytest

from tests.browser import open_stage_page
from tests.page.test_exercises import INPUTS, recompute
from tests.page.test_prose_claims import traced_many

AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"

# In the page: answer one exercise through its controls, then report the verdict and what the stage lights.
ANSWER = """([id, value, how]) => {
  const el = document.getElementById(`exercise-${id}`), kind = el.dataset.kind;
  if (how === 'stage') { el.querySelector('.exercise-arm').click(); anatomyStage.select(...value); }
  else if (kind === 'choice') el.querySelector(`.exercise-choices button[data-value="${value}"]`).click();
  else {
    const form = el.querySelector('form'), control = form.querySelector('select, input');
    control.value = value;
    form.requestSubmit();
  }
  const lit = anatomyStage.lit().target, out = {verdict: el.dataset.verdict || null,
    text: el.querySelector('.exercise-verdict').textContent, lit: lit && [lit.id, lit.row, lit.col],
    progress: JSON.parse(localStorage.getItem('anatomy-exercises') || '{}')[id] || [],
    panel: !!document.querySelector('.explain-panel:not([hidden])')};
  el.querySelector('.exercise-again').click();
  return out;
}"""


@pytest.fixture(scope="module")
def served(client) -> dict:
    """Per input: the served trace (read as recompute() reads it) and the exercises the page's code computes
    for it (tests/in_page.py: the same code the page in Chromium runs, over the same documents)."""
    return {n: (t, d["exercises"]) for n, (t, d) in zip(INPUTS, traced_many(client, list(INPUTS)), strict=True)}


def typed(x: float) -> str:
    """A number as a reader types it: two decimals, the minus sign as printed; a count with a thin space."""
    if float(x).is_integer() and abs(x) >= 1000:
        return f"{int(x):,}".replace(",", "\u2009")
    return f"{x:.2f}".replace("-", "\u2212")


def right_and_wrong(ex: dict, want: dict) -> tuple[str, str]:
    if "answer" in want:
        return typed(want["answer"]), typed(want["answer"] + 10 * ex["tolerance"] + 1)
    wrong = next(c["value"] for c in ex["choices"] if c["value"] not in want["right"])
    return sorted(want["right"])[0], wrong


@pytest.fixture(scope="module")
def page(browser, live_server):
    p = open_stage_page(browser, live_server + f"/?input={INPUTS[0]}#step-16", {"width": 1280, "height": 800})
    p.evaluate("localStorage.removeItem('anatomy-exercises')")
    yield p
    p.context.close()


def show_input(page, number: int) -> None:
    if page.evaluate("anatomy.trace.input.number") != number:
        page.fill("#number-input", str(number))
        page.press("#number-input", "Enter")
    page.wait_for_function(f"anatomy.exercises().length >= 12 && anatomy.exercises()[0].input === '{number}'")


def test_each_exercise_a_wrong_and_a_right_answer_for_three_inputs(page, served):
    for number in INPUTS:
        show_input(page, number)
        t, shipped = served[number]
        want = recompute(t)
        assert [e["id"] for e in page.evaluate("anatomy.exercises()")] == [e["id"] for e in shipped]
        for ex in shipped:
            right, wrong = right_and_wrong(ex, want[ex["id"]])
            ev = [ex["evidence"]["id"], ex["evidence"]["row"], ex["evidence"]["col"]]
            got = page.evaluate(ANSWER, [ex["id"], wrong, "ui"])
            assert got["verdict"] == "wrong" and got["text"].startswith("Not this time"), (number, ex["id"], got)
            assert ex["why"] in got["text"] and got["lit"] == ev and not got["panel"], (number, ex["id"], got)
            got = page.evaluate(ANSWER, [ex["id"], right, "ui"])
            assert got["verdict"] == "right" and got["text"] == f"Right. {ex['why']}", (number, ex["id"], got)
            assert got["lit"] == ev and str(number) in got["progress"], (number, ex["id"], got)
        # a cell clicked on the stage answers a cell question once "Answer on the stage" is pressed; before,
        # a click only explains the cell, as anywhere
        cross = next(e for e in shipped if e["id"] == "step-16-cross")
        r, c = map(int, sorted(want["step-16-cross"]["right"])[0].split(":"))
        page.evaluate(f"anatomyStage.select('{cross['block']}', {r}, {c})")
        assert page.get_attribute("#exercise-step-16-cross", "data-verdict") is None
        assert page.locator(".explain-panel").is_visible()
        got = page.evaluate(ANSWER, ["step-16-cross", [cross["block"], r, c], "stage"])
        ev = [cross["evidence"]["id"], cross["evidence"]["row"], cross["evidence"]["col"]]
        assert got["verdict"] == "right" and got["lit"] == ev and not got["panel"], (number, got)


def test_the_keyboard_alone_answers_each_kind_and_the_verdict_is_announced(page, served):
    show_input(page, INPUTS[1])
    _, shipped = served[INPUTS[1]]
    ex = {e["id"]: e for e in shipped}
    box = lambda i: f"#exercise-{i}"  # noqa: E731
    # a cell, from the list: the first option is "choose", so ArrowDown n+1 times reaches column n
    cross = ex["step-16-cross"]
    page.focus(f"{box('step-16-cross')} select")
    col = int(cross["right"][0].split(":")[1])
    for _ in range(col + 1):
        page.keyboard.press("ArrowDown")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    assert page.get_attribute(box("step-16-cross"), "data-verdict") == "right"
    assert page.evaluate("document.activeElement.textContent") == "Check"  # focus stays where the reader is
    page.focus(f"{box('step-16-cross')} .exercise-explain")  # the evidence's panel, on request
    page.keyboard.press("Enter")
    assert page.locator(".explain-panel").is_visible()
    # a typed number, and Enter
    page.focus(f"{box('step-19-turns')} input")
    page.keyboard.type(str(int(ex["step-19-turns"]["answer"]) + 1))
    page.keyboard.press("Enter")
    assert page.get_attribute(box("step-19-turns"), "data-verdict") == "wrong"
    status = page.locator(f"{box('step-19-turns')} [role=status]")
    assert status.text_content().startswith("Not this time")
    # an option: Tab to the right one, Space
    loss = ex["step-20-loss"]
    order = [c["value"] for c in loss["choices"]]
    page.focus(f"{box('step-20-loss')} .exercise-choices button")
    for _ in range(order.index(loss["right"][0])):
        page.keyboard.press("Tab")
    page.keyboard.press("Space")
    assert page.get_attribute(box("step-20-loss"), "data-verdict") == "right"
    # a cell reached with the stage's own cursor: Tab walks the blocks, the arrows the cells, Enter explains
    query = ex["step-6-query"]
    page.evaluate("anatomy.goTo(6)")
    page.wait_for_function("anatomy.step === 6")
    page.evaluate("anatomyStage.idle()")  # the step's animation done: it moves the cursor too
    page.focus(f"{box('step-6-query')} .exercise-arm")
    page.keyboard.press("Enter")
    assert page.get_attribute(f"{box('step-6-query')} .exercise-arm", "aria-pressed") == "true"
    page.focus("#stage")
    cursor, order = "anatomyStage.stage.pointer.cursor", page.evaluate("[...anatomyStage.stage.blockById.keys()]")
    for _ in range(40):  # the step's animation may have left the cursor on a block: Tab or Shift+Tab from there
        at = page.evaluate(f"{cursor} && {cursor}.id")
        if at == query["block"]:
            break
        page.keyboard.press("Shift+Tab" if at and order.index(at) > order.index(query["block"]) else "Tab")
    page.keyboard.press("Home")  # the block's first cell, then down and right to the answer
    r, c = map(int, query["right"][0].split(":"))
    for key, axis, target in (("ArrowDown", "r", r), ("ArrowRight", "c", c)):
        for _ in range(40):
            if page.evaluate(f"{cursor}.{axis}") >= target:
                break
            page.keyboard.press(key)
    assert page.evaluate(f"[{cursor}.id, {cursor}.r, {cursor}.c]") == [query["block"], r, c]
    page.keyboard.press("Enter")
    assert page.get_attribute(box("step-6-query"), "data-verdict") == "right"
    # Try again, by keyboard, clears the verdict
    page.focus(f"{box('step-20-loss')} .exercise-again")
    page.keyboard.press("Enter")
    assert page.get_attribute(box("step-20-loss"), "data-verdict") is None


def test_axe_finds_nothing_serious_in_answered_exercises(page):
    assert AXE.is_file()
    page.evaluate("document.querySelector('#exercise-step-8-unscaled .exercise-choices button').click()")
    page.add_script_tag(path=str(AXE))
    violations = page.evaluate("""async () => (await axe.run({include: [['.exercise']]},
        {resultTypes: ['violations']})).violations.map(v => ({id: v.id, impact: v.impact,
        nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))""")
    assert [v for v in violations if v["impact"] in ("serious", "critical")] == []


def test_an_open_question_veils_its_cells_on_the_stage_until_it_is_answered(page):
    """At step 7 the question asks which key row 0 of a head's weights rests on most: until it is answered the
    stage draws that row veiled (no value printed, no colour, no outline: the drawn aMark 2), and answering it
    shows the row again; other rows of the block keep their numbers throughout."""
    show_input(page, INPUTS[0])
    ex = next(e for e in page.evaluate("anatomy.trace.derived.exercises") if e["id"] == "step-7-weights")
    block = ex["block"]
    # the row's drawn marks and the numbers printed on the block, read once the stage is still
    state = f"""async () => {{ await anatomyStage.idle(); const s = anatomyStage.stage, e = s.cells.entry('{block}'),
      marks = s.cells.mesh.geometry.getAttribute('aMark').array, b = e.block;
      return {{ step: anatomy.step, veiled: anatomy.stores.veiledCells.get(),
        marks: Array.from({{length: b.cols}}, (_, c) => marks[e.start + c]),
        printed: s.readouts.shown.numbers.filter((n) => n.id === '{block}').map((n) => [n.r, n.c]) }}; }}"""

    def at_step_7(check) -> dict:
        """The state at step 7 once `check` holds of it (the article may settle on another step meanwhile)."""
        for _ in range(20):
            page.evaluate("anatomy.step === 7 || anatomy.goTo(7)")
            got = page.evaluate(state)
            if got["step"] == 7 and check(got):
                return got
            page.wait_for_timeout(250)
        raise AssertionError(got)

    veiled = at_step_7(lambda g: [v["id"] for v in g["veiled"]] == [block])
    (rect,) = veiled["veiled"]
    assert rect["rows"] == [0, 0] and rect["cols"] == [0, len(ex["choices"]) - 1]
    assert veiled["marks"] == [2] * len(ex["choices"])
    assert veiled["printed"] and all(r != 0 for r, _ in veiled["printed"])  # the other rows keep their numbers
    page.evaluate(
        ANSWER.replace("el.querySelector('.exercise-again').click();", ""), ["step-7-weights", ex["right"][0], "list"]
    )
    shown = at_step_7(lambda g: g["veiled"] == [])
    assert 2 not in shown["marks"] and 1 in shown["marks"]  # the row's largest weight outlined again
    assert any(r == 0 for r, _ in shown["printed"])
    page.evaluate("document.querySelector('#exercise-step-7-weights .exercise-again').click()")
    at_step_7(lambda g: [v["id"] for v in g["veiled"]] == [block])  # asked again: veiled again
