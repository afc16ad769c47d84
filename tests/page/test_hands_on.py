"""The article's hands-on parts and who can use them: the paper's Figure 1 redrawn (every box a link to
the step the tour assigns it, the current step's boxes marked, a click moving the stage), attention
by word (the drawn weights are the trace's, the same rows lit on the stage, following the input), the
page read with JavaScript off (the research desk's tables, the training log, the ledger, a topic page),
and axe-core on /, /ledger, /about and a topic page: no serious or critical violation, colour
contrast included. Browser tests run Debian's Chromium; axe-core is the npm package pinned in
package.json, injected from node_modules with Playwright's add_script_tag."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from article import figure1
from tests.in_page import page_parts
from tests.page.test_page import Page

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
BOX = re.compile(
    r'<a class="fig1-box[^"]*" href="#step-(\d+)" data-goto-step="(\d+)" data-steps="([\d ]*)" '
    r'data-box="([a-z-]+)"'
)


# ---- Figure 1 on the server: every box, its steps from the tour ----------------------------------


@pytest.fixture(scope="module")
def index_html(client) -> str:
    return client.get("/").text


def scene_of(client):
    """The structure of 7's scene (Figure 1's boxes are placed on blocks and steps, which no input changes)."""
    from recorder import trace
    from scene import structure_of

    svc = client.app.state.service
    model = svc.translator.model
    return structure_of(trace(model, 7, svc.params, svc.version), model.cfg, svc.params, svc.tour)


def test_figure_1_has_every_part_of_the_papers_diagram_twice(index_html):
    overview = re.search(r'<svg class="fig1-svg fig1-overview".*?</svg>', index_html, re.S).group(0)
    assert overview in index_html.split('<section id="step-1"', 1)[1].split("</section>", 1)[0], "in step 1"
    dock = re.search(r'<nav class="fig1-dock".*?</nav>', index_html, re.S).group(0)
    for svg in (overview, dock):
        labels = [re.sub(r"<[^>]+>", " ", t).split() for t in re.findall(r"<a class=\"fig1-box.*?</a>", svg, re.S)]
        text = [" ".join(w for w in label if w) for label in labels]
        for part in (
            "Input Embedding",
            "Output Embedding",
            "Positional Encoding",
            "Multi-Head Attention",
            "Masked Multi-Head Attention",
            "Feed Forward",
            "Linear",
            "Softmax",
        ):
            assert any(part in t for t in text), part
        assert sum("Add &amp; Norm" in t for t in text) == 5  # two per encoder layer, three per decoder layer
        assert svg.count('class="fig1-n"') == 2 and "2×" in svg  # the N× of each stack, N from the model


def test_every_box_links_to_an_existing_step_that_the_tour_assigns_it(client, index_html):
    steps = {s.number for s in client.app.state.content.steps}
    scene = scene_of(client)
    subjects = {s.step: set(s.subject) for s in scene.steps}
    ids = [b.id for b in scene.blocks]
    found = BOX.findall(index_html)
    assert len(found) == 2 * len(figure1.BOXES)
    for href, goto, listed, box_id in found:
        box = next(b for b in figure1.BOXES if b.id == box_id)
        mine = figure1.members(box, ids)
        assert mine, box_id
        expected = [n for n in sorted(subjects) if mine & subjects[n]]
        assert [int(s) for s in listed.split()] == expected, box_id
        assert href == goto == str(expected[0]) and int(href) in steps


def test_the_boxes_steps_are_not_written_in_the_template():
    text = (ROOT / "templates" / "figure1.html").read_text()
    assert not re.search(r"#step-\d|data-goto-step=\"\d|data-steps=\"\d", text)


# ---- in the browser ------------------------------------------------------------------------------


def camera(page):
    return page.evaluate("() => window.anatomyStage.camera()")


def test_clicking_a_box_goes_to_its_step_and_moves_the_stage(browser, live_server):
    tab = Page(browser, 1280, 800)
    page = tab.open(live_server + "/?input=42#step-1")
    page.wait_for_function("() => window.anatomyStage && window.anatomyStage.ready", timeout=60_000)
    before = camera(page)
    box = page.locator('.fig1-overview a.fig1-box[data-box="enc-ffn"]')
    box.scroll_into_view_if_needed()
    box.click()
    page.wait_for_function("() => window.anatomy.step === 12 && window.anatomyStage.stage.step.step === 12")
    page.wait_for_function(
        "t => JSON.stringify(window.anatomyStage.camera().target) !== JSON.stringify(t)", arg=before["target"]
    )
    assert camera(page)["target"] != before["target"], "the stage's camera moved"
    page.wait_for_function("() => location.hash === '#step-12'")
    assert page.text_content(".fig1-dock summary") == "Map · encoder · feed-forward", "the map says where the reader is"
    # by keyboard: unfold the map, focus its cross-attention box and press Enter
    page.locator(".fig1-dock summary").focus()
    page.keyboard.press("Enter")
    assert page.get_attribute(".fig1-dock details", "open") is not None
    page.locator('.fig1-dock a.fig1-box[data-box="dec-cross"]').focus()
    says = page.text_content(".fig1-dock [data-fig1-says]")
    assert "Cross-attention" in says and "Step 16" in says, says
    page.keyboard.press("Enter")
    page.wait_for_function("() => window.anatomy.step === 16 && window.anatomyStage.stage.step.step === 16")
    assert tab.errors == []
    page.close()


def marked(page) -> list[str]:
    return page.evaluate("""() => [...document.querySelectorAll('.fig1-dock a.fig1-box[aria-current="step"]')]
                            .map(a => a.dataset.box)""")


def test_the_current_steps_box_is_marked_while_scrolling(browser, live_server):
    tab = Page(browser, 1280, 800)
    page = tab.open(live_server + "/")  # no #step-N: a linked step is held in place while the page settles
    for step, box in ((5, "positional-encoding"), (15, "dec-masked"), (18, "linear")):
        page.evaluate(f"() => document.getElementById('step-{step}').scrollIntoView()")
        page.wait_for_function(f"() => window.anatomy.step === {step}")
        page.wait_for_timeout(100)
        boxes = marked(page)
        assert box in boxes, (step, boxes)
        for b in boxes:  # and only boxes that list the step
            steps = page.get_attribute(f'.fig1-dock a.fig1-box[data-box="{b}"]', "data-steps").split()
            assert str(step) in steps
    page.evaluate("() => document.getElementById('step-2').scrollIntoView()")
    page.wait_for_function("() => window.anatomy.step === 2")
    page.wait_for_timeout(100)
    assert marked(page) == [], "step 2 (the task) is no box"
    assert tab.errors == []
    page.close()


def drawn_weights(page) -> list[dict]:
    return page.evaluate("""() => [...document.querySelectorAll('.aw-panels svg.aw-head')].map(svg => ({
        block: svg.dataset.block, row: Number(svg.dataset.row),
        weights: [...svg.querySelectorAll('line.aw-line')].map(l => Number(l.dataset.weight)),
        widths: [...svg.querySelectorAll('line.aw-line')].map(l => Number(l.getAttribute('stroke-width'))),
        keys: [...svg.querySelectorAll('text.aw-key')].map(t => t.textContent) }))""")


TRACES: dict[int, dict] = {}  # each input's trace with the page's scene, once (the model runs in this process)


def check_against_trace(client, page, number: int, axis: str, row: int):
    if number not in TRACES:
        page_doc = page_parts(client, [str(number)])[0]
        TRACES[number] = {**page_doc["trace"], "scene": page_doc["scene"]}
    t = TRACES[number]
    nodes = {n["id"]: n for n in t["nodes"]}
    blocks = [
        b
        for b in t["scene"]["blocks"]
        if b["op"] == "Softmax" and b["row_axis"] == axis and b["col_axis"] in ("source", "target")
    ]
    drawn = drawn_weights(page)
    assert sorted(d["block"] for d in drawn) == sorted(b["id"] for b in blocks)
    for d in drawn:
        node, block = nodes[d["block"]], next(b for b in blocks if b["id"] == d["block"])
        cols = node["shape"][-1]
        assert d["row"] == row and d["keys"] == t["scene"]["axes"][block["col_axis"]]
        assert d["weights"] == pytest.approx(node["data"][row * cols : (row + 1) * cols], abs=1e-7)
        assert d["widths"] == pytest.approx([8 * w for w in d["weights"]], abs=1e-6), "width ∝ weight"
    lit = page.evaluate(
        "ids => ids.map(id => window.anatomyStage.stage.cells.get(id, 'focusOn'))", [b["id"] for b in blocks]
    )
    assert lit == [1] * len(blocks), "the same rows are lit on the stage"


def test_attention_by_word_draws_the_traces_weights_and_follows_the_input(browser, live_server, client):
    tab = Page(browser, 1280, 800)
    page = tab.open(live_server + "/?input=731942#step-16")
    page.wait_for_function("() => window.anatomyStage && window.anatomyStage.ready", timeout=60_000)
    # the widget is depth, folded beneath step 16: a reader opens its fold first
    page.locator("#step-16 details:has(.aw-word) > summary").first.click()
    word = page.locator('.aw-word[data-axis="target"][data-index="3"]')
    word.click()
    assert word.get_attribute("aria-pressed") == "true"
    check_against_trace(client, page, 731942, "target", 3)
    page.locator('.aw-word[data-axis="source"][data-index="2"]').focus()
    page.keyboard.press("Enter")  # by keyboard: an English word
    check_against_trace(client, page, 731942, "source", 2)
    page.fill("#number-input", "42")
    page.press("#number-input", "Enter")
    page.wait_for_function("() => window.anatomy.trace.input.number === 42")
    page.wait_for_timeout(300)
    words = page.evaluate("() => [...document.querySelectorAll('.aw-word[data-axis=source]')].map(b => b.textContent)")
    assert words == ["forty", "two", "</s>"]
    check_against_trace(client, page, 42, "source", 2)  # the chosen position is kept where it exists
    assert tab.errors == []
    page.close()


# ---- the input bar ---------------------------------------------------------------------------------

BAR_LAYOUT = """() => {
  const rect = (e) => { const r = e.getBoundingClientRect();
    return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; };
  const form = document.getElementById('input-form'), error = document.getElementById('input-error');
  const controls = [...form.children].filter((e) => e.id !== 'input-error' && e.type !== 'hidden'
    && e.getClientRects().length && e.getBoundingClientRect().width > 2);
  return {bar: rect(document.querySelector('.topbar')), nav: rect(document.querySelector('.site-nav')),
          controls: controls.map((e) => ({what: e.id || e.className || e.tagName, ...rect(e)})),
          error: error.textContent ? rect(error) : null};
}"""


BAR_HEIGHT = 480  # the bar's row is laid out across; a lower window draws fewer of the stage's pixels


def check_one_row_in_the_bar(page, width: int) -> dict:
    page.set_viewport_size({"width": width, "height": BAR_HEIGHT})
    r = page.evaluate(BAR_LAYOUT)
    bar, controls = r["bar"], r["controls"]
    assert len(controls) >= 3, (width, controls)  # the input, Run and Pin at least, visible
    for c in controls:
        assert bar["top"] - 0.5 <= c["top"] and c["bottom"] <= bar["bottom"] + 0.5, (width, c, bar)
        assert c["right"] <= r["nav"]["left"], (width, c, r["nav"])  # never under the site's links
    middles = [(c["top"] + c["bottom"]) / 2 for c in controls]
    assert max(middles) - min(middles) < 12, (width, controls)  # one row
    return r


@pytest.mark.parametrize("query", ["", "&model=modern"])
def test_the_input_bar_is_one_row_inside_the_top_bar_at_every_width_above_a_phones(browser, live_server, query):
    """From 761 px (above the phone layout) up, the input, its buttons and the model's badge sit in the top
    bar in one row, left of the site's links: the input narrows and the words around it go first. A bad
    input's message takes a row of its own beneath them, inside the grown bar."""
    ctx = browser.new_context(viewport={"width": 1440, "height": BAR_HEIGHT}, bypass_csp=True)
    page = ctx.new_page()
    page.goto(f"{live_server}/?input=731015{query}", wait_until="domcontentloaded")  # six digits: the widest pin
    for width in (1440, 1200, 1100, 1024, 900, 800, 761):
        check_one_row_in_the_bar(page, width)
    page.set_viewport_size({"width": 1440, "height": BAR_HEIGHT})
    page.wait_for_function("window.anatomy && window.anatomy.ready", timeout=30_000)
    page.click("#pin-input")  # a pinned input names itself on the button
    page.wait_for_function("document.getElementById('pin-input').textContent.includes('✕')")
    for width in (1440, 1024, 800, 761):
        check_one_row_in_the_bar(page, width)
    page.click("#pin-input")
    page.fill("#number-input", "a million and three")
    page.press("#number-input", "Enter")
    page.wait_for_function("document.getElementById('input-error').textContent.length > 0")
    for width in (1440, 1024, 900, 761):
        r = check_one_row_in_the_bar(page, width)
        assert r["error"]["top"] >= max(c["bottom"] for c in r["controls"]) - 0.5, (width, r)
        assert r["error"]["bottom"] <= r["bar"]["bottom"] + 0.5, (width, r)
    ctx.close()


# ---- without JavaScript --------------------------------------------------------------------------


def test_with_javascript_off_the_research_tables_and_the_training_log_are_there(browser, live_server):
    ctx = browser.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 800})
    page = ctx.new_page()
    page.goto(live_server + "/")
    for step in (26, 27, 28, 29):
        rows = page.locator(f"#step-{step} figure table tbody tr").count()
        cells = page.locator(f"#step-{step} figure table tbody td").all_text_contents()
        assert rows > 0 and any(re.search(r"\d", c) for c in cells), step
    assert page.locator("#step-28 .head-card").count() == 24
    log = page.locator("#step-21 table[data-training-log] tbody tr").count()
    assert log == len(__import__("article.figures", fromlist=["x"]).training_curves()["step"])
    assert page.locator("#step-25 figure table tbody tr").count() > 5  # the parameter count
    assert page.locator("#step-19 .beam-step").count() > 0  # the beam search of the page's input
    page.goto(live_server + "/ledger")
    assert page.locator("table.ledger tbody tr").count() > 100
    page.goto(live_server + "/topics/adam")
    assert "Adam" in page.text_content("main h1") and page.locator("main .references li").count() >= 3
    ctx.close()


# ---- accessibility: axe-core --------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/ledger",
        "/about",
        "/topics/attention",
        "/topics/causal-masking?input=731015",
        "/topics/rnns?input=forty+banana",
    ],
)
def test_axe_finds_no_serious_or_critical_violation(browser, live_server, path):
    assert AXE.is_file(), "npm ci installs axe-core (package.json devDependencies)"
    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, bypass_csp=True)  # the tag is inline
    page = ctx.new_page()
    page.goto(live_server + path)
    page.wait_for_load_state("networkidle")
    if path == "/":  # everything drawn that scripts add: figures, a chosen word, the folded tables open
        page.wait_for_function("() => window.anatomy && window.anatomy.ready", timeout=30_000)
        page.evaluate(
            "() => { for (const f of document.querySelectorAll('figure[data-figure]')) window.anatomyFigures.draw(f); }"
        )
        page.wait_for_function(
            "() => [...document.querySelectorAll('figure[data-figure]:not([data-figure=beam])')]"
            ".every(f => f.dataset.drawn === 'true')",
            timeout=30_000,
        )
        page.evaluate(
            "() => { document.querySelector('.aw-word').click();"
            " for (const d of document.querySelectorAll('details')) d.open = true; }"
        )
        page.wait_for_timeout(500)
        page.evaluate("() => window.anatomyScrollRegions.check()")
    page.add_script_tag(path=str(AXE))
    violations = page.evaluate("""async () => (await axe.run(document, {resultTypes: ['violations']})).violations
        .map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))""")
    assert "color-contrast" in page.evaluate("() => axe.getRules().map(r => r.ruleId)")
    assert [v for v in violations if v["impact"] in ("serious", "critical")] == []
    ctx.close()


def test_with_the_modern_model_the_live_numbers_are_its_own(browser, live_server):
    """The live numbers follow the model on show: the modern model's d_ff and parameter count, and a dash
    where a figure is of a block it has not (LayerNorm's β); each step's note on the modern model shows."""
    from tests.browser import until

    ctx = browser.new_context(viewport={"width": 1000, "height": 700})
    page = ctx.new_page()
    page.goto(f"{live_server}/?input=713&model=modern#step-12")
    until(page, "window.anatomy && window.anatomy.trace && window.anatomy.trace.input.number === 713")
    until(page, "!document.body.classList.contains('live-pending')")
    live = page.evaluate(
        """() => Object.fromEntries(['d_ff', 'param_count', 'ln_row_mean'].map((k) =>
             [k, [...document.querySelectorAll(`[data-live="${k}"]`)].map((e) => e.textContent)]))"""
    )
    assert set(live["d_ff"]) == {"84"} and set(live["param_count"]) == {"61\u2009376"}, live
    assert set(live["ln_row_mean"]) == {"–"}, live
    assert page.evaluate("[...document.querySelectorAll('.model-step-note')].every((n) => !n.hidden)")
    ctx.close()
