"""The classroom's presenter mode and embed view, in Chromium: one page in presenter mode, measured at two
projector sizes (1280×720 and 1920×1080: the title, the key sentence, the worked row and the explained cell
in large type, the stage filling the rest; screenshots under CLASSROOM_SHOTS or the test's tmp folder, to
look at), turned by Space, the arrows and the buttons, left by Esc at the same step; the Copy embed code
button by keyboard; and a page of another origin framing /embed (it draws the address's state) and /
(refused). axe-core finds nothing serious or critical in presenter mode or in the embed view. The server
half (headers per route, the key sentences) is tests/service/test_classroom_routes.py.

On a 1920×1080 projector, presenter mode on the lecture path (content/lecture.yaml; its data:
tests/service/test_lecture.py): the address opens it at the next stop, Space walks the stops, each with its own
key line, question and minutes; at every stop the stage's own label boxes and token names are at least 18 px
type (before: 13 px names, labels down to 13 px) and no two of its labels overlap; L leaves the path."""

from __future__ import annotations

import os
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from tests.browser import open_stage_page, until

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
SIZES = [(1280, 720), (1920, 1080)]
# text heights as shares of the projector's height (font size times zoom, in CSS pixels): 5 % is about
# 36 px on a 720-line projector, the size of a slide's title; 3 % a slide's body; 1.9 % the smallest
# numbers a back row should read (the worked row's, the panel's)
TITLE, SENTENCE, NUMBERS = 0.05, 0.03, 0.019

SIZES_JS = """() => {
  const px = (sel) => { const e = document.querySelector(sel); if (!e) return null;
    return parseFloat(getComputedStyle(e).fontSize) * (e.currentCSSZoom || 1); };
  const box = (sel) => { const r = document.querySelector(sel)?.getBoundingClientRect();
    return r && {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; };
  const t = document.querySelector('.present-title');
  return {title: px('.present-title'), key: px('.present-key'), worked: px('.stage-worked .wk-n'),
    panel: px('.explain-panel .explain-check'), panelTitle: px('.explain-panel .explain-title'),
    bar: box('.present-bar'), stage: box('#stage'), titleCut: t.scrollWidth > t.clientWidth + 1,
    article: getComputedStyle(document.getElementById('article')).display,
    step: anatomy.step, stageStep: anatomyStage.stage.stepNo,
    shown: document.querySelector('.present-bar')?.dataset.step,
    titleText: t.textContent, keyText: document.querySelector('.present-key').textContent, url: location.href};
}"""


def key_sentence(page, step: int) -> str:
    """The article's own key sentence of a step, as the section shows it (citations dropped)."""
    return page.evaluate(
        """(n) => { const k = document.querySelector(`#step-${n} .key-sentence`).cloneNode(true);
        for (const c of k.querySelectorAll('a.cite')) c.remove(); return k.textContent; }""",
        step,
    )


def shot_dir(tmp_path: Path) -> Path:
    d = Path(os.environ.get("CLASSROOM_SHOTS") or tmp_path)
    d.mkdir(parents=True, exist_ok=True)
    return d


def press(page, key: str, step: int) -> dict:
    page.keyboard.press(key)
    page.wait_for_function(
        "(n) => anatomy.step === n && anatomyStage.stage.stepNo === n"
        " && document.querySelector('.present-bar')?.dataset.step === String(n)",
        arg=step,
    )
    return page.evaluate(SIZES_JS)


# the words of every step in the bar, one after another (the stage follows them, undrawn in between)
EVERY_STEP_JS = """() => {
  const p = anatomy.present, out = [], here = anatomy.step;
  while (anatomy.step !== 1) p.move(-1);
  for (;;) {
    const b = document.querySelector('.present-bar'), t = b.querySelector('.present-title');
    const f = b.querySelector('.present-formula'), wide = (e) => e.scrollWidth > e.clientWidth + 1;
    out.push({step: anatomy.step, height: b.getBoundingClientRect().height, cut: wide(t) || (!f.hidden && wide(f)),
      key: b.querySelector('.present-key').textContent.length});
    if (anatomy.step === 29) break;
    p.move(1);
  }
  while (anatomy.step !== here) p.move(-1);
  return out;
}"""


def assert_readable(page, size: tuple[int, int], step: int) -> dict:
    w, h = size
    m = page.evaluate(SIZES_JS)
    assert m["article"] == "none" and m["step"] == m["stageStep"] == step and m["shown"] == str(step)
    assert m["titleText"] == page.evaluate(f"document.getElementById('step-{step}-title').textContent.trim()")
    assert m["keyText"].strip() == key_sentence(page, step).strip() and len(m["keyText"]) > 10
    assert m["title"] >= TITLE * h and m["key"] >= SENTENCE * h, m
    assert not m["titleCut"]
    # the stage fills the projector under the words: full width, from the bar's foot to the bottom
    assert abs(m["stage"]["top"] - m["bar"]["bottom"]) <= 1 and m["stage"]["bottom"] == h and m["stage"]["right"] == w
    assert m["bar"]["bottom"] <= 0.4 * h, m
    return m


def test_presenter_mode_at_two_projector_sizes(browser, live_server, tmp_path):
    w, h = SIZES[0]
    page = open_stage_page(
        browser,
        f"{live_server}/?input=305&present=1#step-7",
        {"width": w, "height": h},
        ("clipboard-read", "clipboard-write"),
        reduced_motion="reduce",
    )  # no animations to wait for
    shots, measured = shot_dir(tmp_path), {}
    assert page.evaluate("document.body.classList.contains('presenting')")
    assert_readable(page, SIZES[0], 7)
    # the keys and the buttons turn the steps, the stage and the words follow; the address keeps the flag
    m = press(page, "Space", 8)
    assert "present=1" in m["url"] and m["url"].endswith("#step-8")
    press(page, "ArrowLeft", 7)
    page.focus("#stage")  # the stage focused: the arrows left and right still turn the steps
    press(page, "ArrowRight", 8)
    page.click(".present-previous")
    press(page, "PageUp", 6)
    page.click(".present-next")
    page.wait_for_function("anatomy.step === 7 && anatomyStage.stage.stepNo === 7")
    for size in SIZES:
        page.set_viewport_size({"width": size[0], "height": size[1]})
        page.evaluate("anatomyStage.close()")
        page.wait_for_function(
            "([w, h]) => { const r = document.getElementById('stage').getBoundingClientRect();"
            " return r.bottom === h && r.right === w; }",
            arg=list(size),
        )
        assert_readable(page, size, 7)
        page.wait_for_timeout(100)  # two frames: the view is framed again for the stage's new size
        page.evaluate("anatomyStage.idle()")
        framing = page.evaluate("anatomyStage.framing()")
        # the step's subject whole on screen, its cells large enough to read from the back (the worked card
        # covers the stage's foot, and the view keeps clear of it)
        assert not framing["clipped"] and framing["medianCellPx"] >= 0.02 * size[1], framing
        if size == SIZES[0]:  # every step's words fit above the stage, nothing cut (the bar is sized in vh:
            words = page.evaluate(EVERY_STEP_JS)  # the larger projector is the same picture, scaled)
            assert [w["step"] for w in words] == list(range(1, 30)) and page.evaluate("anatomy.step") == 7
            assert [w for w in words if w["cut"] or w["height"] > 0.4 * size[1] or w["key"] < 10] == []
        # the explained cell, large: the panel takes a column at the right, the stage gives it the room
        page.evaluate("anatomyStage.select('enc.0.self.h3.weights', 3, 2)")
        page.wait_for_function("document.body.classList.contains('present-explaining')")
        page.evaluate("anatomyStage.idle()")
        m = measured[size] = page.evaluate(SIZES_JS)
        panel = page.evaluate(
            "(() => { const r = document.querySelector('.explain-panel').getBoundingClientRect();"
            " return {left: r.left, right: r.right, top: r.top}; })()"
        )
        assert abs(panel["left"] - m["stage"]["right"]) <= 2 and abs(panel["right"] - size[0]) <= 1, (panel, m)
        assert panel["top"] >= m["bar"]["bottom"] - 1
        assert m["worked"] >= NUMBERS * size[1] and m["panel"] >= NUMBERS * size[1], m
        assert m["panelTitle"] >= 0.022 * size[1], m
        # the explained cell is on screen beside its panel
        cell = page.evaluate("anatomyStage.project('enc.0.self.h3.weights', 3, 2)")
        assert cell["visible"] and cell["x"] < panel["left"], cell
        page.screenshot(path=str(shots / f"present-step7-{size[0]}x{size[1]}.png"))
    print(
        "presenter text sizes (px):",
        {
            f"{w}x{h}": {k: round(v[k], 1) for k in ("title", "key", "worked", "panel")}
            for (w, h), v in measured.items()
        },
    )
    # axe: nothing serious or critical in presenter mode, the panel open (the article itself: test_hands_on)
    page.add_script_tag(path=str(AXE))
    assert serious(page, "{include: [['.present-bar'], ['#stage'], ['.explain-panel']]}") == []
    # Esc closes the panel first, then leaves: the article again, at the same step, the flag gone
    page.keyboard.press("Escape")
    page.wait_for_function("!anatomyStage.stage.explained && document.body.classList.contains('presenting')")
    page.keyboard.press("Escape")
    page.wait_for_function("!document.body.classList.contains('presenting') && !location.search.includes('present')")
    top = page.evaluate("document.getElementById('step-7').getBoundingClientRect().top")
    assert page.evaluate("anatomy.step") == 7 and 0 <= top <= 120, top  # just under the top bar (scroll-padding)
    assert page.evaluate("location.hash") == "#step-7"
    # the Copy embed code button, by keyboard: an iframe of /embed for this state
    page.focus(".embed-copy")
    page.keyboard.press("Enter")
    page.wait_for_function("document.querySelector('.classroom-tools').dataset.code")
    code = page.evaluate("navigator.clipboard.readText()")
    src = re.search(r'<iframe src="([^"]+)"', code).group(1)
    assert src == f"{live_server}/embed?input=305&amp;step=7", code
    said = page.evaluate("document.querySelector('.classroom-tools [role=status]').textContent")
    assert said.startswith("Embed code copied")
    # and Present, by keyboard, opens presenter mode again at that step
    page.focus(".present-open")
    page.keyboard.press("Enter")
    page.wait_for_function("document.querySelector('.present-bar')?.dataset.step === '7'")
    assert page.errors == []
    page.context.close()


def serious(frame, context: str = "document") -> list:
    found = frame.evaluate(
        """async () => (await axe.run(CONTEXT, {resultTypes: ['violations']})).violations
        .map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))""".replace(
            "CONTEXT", context
        )
    )
    return [v for v in found if v["impact"] in ("serious", "critical")]


@pytest.fixture
def other_origin(live_server):
    """A course page on another origin (localhost and another port, where the app is 127.0.0.1) that frames
    the embed view for one state, and the article."""
    embed = f"{live_server}/embed?input=305&step=16&cell=dec.1.cross.h3.weights:1:2&compare=42&ablate=dec.1.cross.h0"
    html = (
        f'<!doctype html><html lang="en"><title>A course page</title><h1>Week 3</h1>'
        f'<iframe id="embed" title="the embed view" width="900" height="560" src="{embed}"></iframe>'
        f'<iframe id="article" title="the article" width="400" height="300" src="{live_server}/?input=305">'
        "</iframe>"
    )

    class Course(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("content-type", "text/html; charset=utf-8")
            self.end_headers()
            self.wfile.write(html.encode())

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Course)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://localhost:{server.server_port}/"
    server.shutdown()


def test_another_origin_may_frame_the_embed_view_and_not_the_article(browser, live_server, other_origin):
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})  # the site's policies enforced
    page = ctx.new_page()
    refused = []
    page.on("console", lambda m: "frame-ancestors" in m.text and refused.append(m.text))
    page.goto(other_origin)
    embed = page.frame(url=lambda u: "/embed?" in u)
    assert embed is not None, f"the embed view was refused: {refused}"
    # wait_for_function would evaluate its predicate with eval(), which the view's policy refuses: poll
    deadline = time.monotonic() + 90
    while not embed.evaluate(
        "!!(window.anatomyStage && anatomyStage.ready && anatomyStage.stage.explained && anatomyStage.stage.comparing)"
    ):
        assert time.monotonic() < deadline, "the embed view did not draw its state"
        page.wait_for_timeout(100)
    state = embed.evaluate("""({input: anatomy.trace.input.number, step: anatomyStage.stage.stepNo,
        ablation: anatomyStage.stage.trace.ablation,
        cell: ['id', 'row', 'col'].map(k => anatomyStage.stage.explained[k]),
        compare: anatomyStage.stage.compareTrace.input.number,
        drawn: anatomyStage.stats.cellsDrawn, caption: document.querySelector('.embed-caption').textContent})""")
    assert state["input"] == 305 and state["step"] == 16 and state["ablation"] == ["dec.1.cross.h0"]
    assert state["cell"] == ["dec.1.cross.h3.weights", 1, 2] and state["compare"] == 42 and state["drawn"] > 0
    assert state["caption"].startswith("Step 16")
    # the article is refused: the frame holds the browser's error page, never the article's scripts
    article = next(f for f in page.frames if f not in (page.main_frame, embed))
    assert not article.url.startswith(live_server) and article.evaluate("typeof window.anatomy") == "undefined"
    assert any("frame-ancestors 'none'" in m for m in refused), refused
    # axe on the embed view (evaluated, as the view's policy refuses an added script tag)
    embed.evaluate(AXE.read_text(encoding="utf-8"))
    assert serious(embed) == []
    ctx.close()


# ---- the lecture path, on a 1920×1080 projector ----

PROJECTOR = {"width": 1920, "height": 1080}
LEAST_TEXT_PX = 18  # the stage's names' least type size at 1080 lines (a slide's smallest readable text)

# at a step: the stage's own label boxes (anatomyStage.labels(): each as the shader grows it, its type size)
# anchored in or beside the step's view (as tests/stage/test_stage_labels.py picks them), drawn whole on the
# stage; the token names the readouts place (their type size); pairs of those labels that overlap
STAGE_TEXT = """async () => {
  await anatomyStage.idle();
  const s = anatomyStage.stage, st = anatomyStage.steps().find(x => x.step === s.stepNo), near = 3;
  const r = s.renderer.domElement.getBoundingClientRect(), [x0, x1, y0, y1] = st.view.box;
  const own = new Set(s.scene.labels.map((l, i) => [l, i])
    .filter(([l]) => l.x >= x0 - near && l.x <= x1 + near && l.y >= y0 - near && l.y <= y1 + near).map(([, i]) => i));
  const labels = anatomyStage.labels().filter(l => own.has(l.i) && !l.cut
    && l.left >= r.left && l.right <= r.right && l.top >= r.top && l.bottom <= r.bottom);
  const names = [...document.querySelectorAll('.stage-readouts .readout-name')].filter(e => e.getClientRects().length)
    .map(e => ({text: e.textContent, font: parseFloat(getComputedStyle(e).fontSize)}));
  const hit = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  const over = [];
  labels.forEach((a, i) => labels.slice(i + 1).forEach(b => { if (hit(a, b)) over.push(a.text + ' / ' + b.text); }));
  return {step: s.stepNo, labels: labels.map(l => ({text: l.text, font: l.font})), names, over};
}"""

BAR = """() => { const b = document.querySelector('.present-bar');
  return {step: anatomy.step, stop: b.dataset.stop, count: b.querySelector('.present-count').textContent,
    key: b.querySelector('.present-key').textContent, ask: b.querySelector('.present-ask').textContent,
    bottom: b.getBoundingClientRect().bottom, next: b.querySelector('.present-next').disabled,
    previous: b.querySelector('.present-previous').disabled, url: location.href}; }"""


def test_presenter_walks_the_lecture_path_with_names_large_enough_to_read(browser, live_server, tmp_path):
    from article.lecture import load_lecture

    stops = load_lecture().stops
    page = open_stage_page(
        browser, f"{live_server}/?input=86&present=lecture#step-3", PROJECTOR, reduced_motion="reduce"
    )
    # the address opens presenter mode on the path; off its steps, at the next stop
    until(page, f"anatomy.step === {stops[1].step} && anatomyStage.stage.stepNo === {stops[1].step}")
    seen, small, overlapping = [], [], []
    for i, stop in enumerate(stops[1:], 1):
        bar = page.evaluate(BAR)
        assert bar["step"] == stop.step and bar["stop"] == str(i + 1), bar
        # the stop's own key line and question, its place and minutes; the previous/next buttons at the ends
        assert bar["key"] == stop.key and bar["ask"] == f"Ask the room: {stop.ask}"
        assert bar["count"].startswith(f"Lecture {i + 1} of {len(stops)} · {stop.minutes} min"), bar["count"]
        assert "present=lecture" in bar["url"] and bar["bottom"] <= 0.4 * PROJECTOR["height"]
        assert bar["next"] == (i == len(stops) - 1)
        m = page.evaluate(STAGE_TEXT)
        # each stop's view names its blocks and its tokens (a band of names that cannot be placed at the larger
        # size is not shown: none is lost)
        assert m["step"] == stop.step and m["labels"] and m["names"], m
        seen.append((stop.step, min(x["font"] for x in m["labels"] + m["names"])))
        small += [
            (stop.step, x["text"], round(x["font"], 1))
            for x in m["labels"] + m["names"]
            if x["font"] < LEAST_TEXT_PX - 0.5
        ]
        overlapping += [(stop.step, o) for o in m["over"]]
        if stop.step == 7:
            page.screenshot(path=str(shot_dir(tmp_path) / "present-lecture-step7-1920x1080.png"))
        if i < len(stops) - 1:
            page.keyboard.press("Space")
            nxt = stops[i + 1].step
            until(page, f"anatomy.step === {nxt} && anatomyStage.stage.stepNo === {nxt}")
    print("presenter: least type size on the stage per stop (px):", [(n, round(px, 1)) for n, px in seen])
    assert small == [], f"stage text under {LEAST_TEXT_PX} px at 1920×1080: {small}"
    assert overlapping == [], overlapping
    # back along the path, then L leaves it: every step again, the article's own key sentence
    page.keyboard.press("ArrowLeft")
    until(page, f"anatomy.step === {stops[-2].step}")
    page.keyboard.press("l")
    until(page, "!anatomy.present.onPath() && location.search.includes('present=1')")
    bar = page.evaluate(BAR)
    assert bar["key"].strip() == key_sentence(page, stops[-2].step).strip() and bar["ask"] == ""
    page.keyboard.press("ArrowRight")
    until(page, f"anatomy.step === {stops[-2].step + 1}")
    # leaving presenter mode gives the stage its own sizes back
    page.keyboard.press("Escape")
    until(page, "!document.body.classList.contains('presenting')")
    assert page.evaluate("anatomy.stores.stageTextFloor.get()") == 0
    assert page.errors == []
    page.context.close()
