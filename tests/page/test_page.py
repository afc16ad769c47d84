"""The page shell: the article's 29 steps rendered from content/, the ledger and about pages, local
assets only; and in a real browser (Debian's Chromium via Playwright): no console errors, a typed
number updates the live values and the URL, a bad input shows the server's message."""

from __future__ import annotations

import re
import time

import pytest

from app.documents.content import CONTENT, read_tsv
from tests.in_page import page_parts

SECTION = re.compile(r'<section id="step-(\d+)" class="step" data-step="(\d+)"')


@pytest.fixture(scope="module")
def index_html(client) -> str:
    r = client.get("/")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    return r.text


# ---- the server-rendered article ----------------------------------------------------------------


def test_the_article_has_29_steps_in_order(index_html):
    steps = SECTION.findall(index_html)
    assert [int(s[0]) for s in steps] == list(range(1, 30))
    for number, data_step in steps:
        assert number == data_step


def test_each_step_has_a_section_label_a_title_and_a_go_deeper_link(index_html):
    bodies = re.split(r'<section id="step-\d+"', index_html)[1:]
    for i, body in enumerate(bodies, start=1):
        body = body.split("</section>")[0]
        assert re.search(r'<p class="step-section"><span class="step-number">\d+</span> \S', body), i
        assert re.search(rf'<h2 id="step-{i}-title">.+</h2>', body), i
        assert re.search(r"<a href=\"/topics/[a-z0-9-]+\?input=\d+\">Go deeper", body), i


def test_the_page_has_the_input_bar_the_stage_and_the_scripts(index_html):
    assert '<form id="input-form"' in index_html and 'id="number-input" name="input"' in index_html
    assert '<output id="input-error" role="alert"' in index_html
    assert '<div id="stage" tabindex="0" aria-label="3D view of the model"></div>' in index_html
    assert '<script type="module" src="/bundle/stage/main.js"></script>' in index_html
    assert '<script type="module" src="/bundle/js/page.js"></script>' in index_html


def test_every_asset_is_served_locally(client, index_html):
    urls = re.findall(r'(?:src|href)="([^"#]+)"', index_html)
    assert urls and not [u for u in urls if re.match(r"^(https?:)?//", u)], "no CDN, no external asset"
    for u in [u for u in urls if u.startswith(("/static/", "/vendor/"))]:
        assert client.get(u).status_code == 200, u
    for u in (
        "/vendor/three/build/three.module.js",
        "/vendor/katex/contrib/auto-render.min.js",
        "/vendor/swagger-ui/swagger-ui-bundle.js",
    ):
        r = client.get(u)
        assert r.status_code == 200 and "javascript" in r.headers["content-type"], u


def test_every_live_slot_has_a_value_from_the_model_or_the_trace(client, index_html):
    keys = set(re.findall(r'data-live="([^"]+)"', index_html))
    figures = client.get("/api/model").json()["figures"]
    derived = page_parts(client, ["42"])[0]["derived"]  # the input's figures, as the page computes them
    assert keys and keys <= set(figures) | set(derived), keys - set(figures) - set(derived)
    assert re.search(r'data-live="param_count" data-format="int">61\u2009472</span>', index_html)
    assert re.search(r'data-live="german">zweiundvierzig</span>', index_html)


def test_a_linked_input_waits_for_the_page_and_says_so_without_scripts(client):
    """The server renders the default input's numbers (computed by the page's code ahead, app/prerender.py);
    for another input they stay hidden until the page has computed that input's, and a reader without
    JavaScript is told the numbers are 42's (static/css/nojs.css shows them)."""
    html = client.get("/", params={"input": "731 015"}).text
    assert 'value="731 015"' in html and 'class="article-page live-pending"' in html
    assert 'data-live="german">zweiundvierzig</span>' in html
    assert "The article's numbers are those of 42" in html.split("<noscript>", 2)[2]
    plain = client.get("/").text
    assert "live-pending" not in plain.split("<body", 1)[1].split(">", 1)[0]


def test_a_bad_linked_input_shows_the_message_and_the_default(client):
    html = client.get("/", params={"input": "-3"}).text
    assert re.search(r'<output id="input-error" role="alert" for="number-input">[^<]*negative', html)
    assert 'data-live="german">zweiundvierzig</span>' in html


def test_every_marked_literature_number_is_in_the_ledger(index_html):
    ids = {r["id"] for r in read_tsv(CONTENT / "facts.tsv")}
    used = set(re.findall(r'data-fact="([^"]+)"', index_html))
    assert used and used <= ids, f"not in content/facts.tsv: {sorted(used - ids)}"


def test_every_citation_has_its_reference(index_html):
    cited = set(re.findall(r'class="cite" href="#ref-(\d+)"', index_html))
    listed = set(re.findall(r'<li id="ref-(\d+)"', index_html))
    assert cited and cited <= listed, sorted(cited - listed)


def test_the_ledger_page_lists_every_fact(client):
    html = client.get("/ledger").text
    for row in read_tsv(CONTENT / "facts.tsv"):
        assert f'<tr id="fact-{row["id"]}">' in html


def test_the_about_page_says_how_to_reproduce(client):
    html = client.get("/about").text
    assert client.app.state.service.version in html
    for command in ("python -m model train", "python -m model eval", "python -m recorder 42"):
        assert command in html


def test_topic_pages(client):
    topics = sorted(p.stem for p in (CONTENT / "topics").glob("*.md"))
    for slug in topics:
        assert client.get(f"/topics/{slug}").status_code == 200, slug
    assert client.get("/topics/no-such-topic").status_code == 404
    assert client.get("/topics/..%2F..%2Fmodel%2Fparse").status_code == 404


# ---- in the browser ---------------------------------------------------------------------------


class Page:
    """A browser page that records console errors and uncaught exceptions."""

    def __init__(self, browser, width: int = 960, height: int = 640):
        self.page = browser.new_page(viewport={"width": width, "height": height})
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"uncaught: {e}"))

    def open(self, url: str):
        self.page.goto(url)
        self.page.wait_for_function("() => window.anatomy && window.anatomy.ready === true", timeout=30_000)
        return self.page

    def live(self, key: str) -> str:
        return self.page.text_content(f'.step [data-live="{key}"]')


@pytest.fixture
def tab(browser):
    t = Page(browser)
    yield t
    t.page.close()


def test_the_page_loads_with_no_console_errors(tab, live_server):
    page = tab.open(live_server + "/")
    page.wait_for_timeout(500)  # let the stage draw
    assert tab.errors == []
    assert page.evaluate("() => window.anatomy.trace.input.number") == 42
    assert tab.live("german") == "zweiundvierzig"
    assert "input=42" in page.url
    assert page.locator(".katex").count() > 0, "formulas are typeset"


def test_typing_a_number_updates_the_live_values_and_the_url(tab, live_server):
    page = tab.open(live_server + "/#step-2")
    page.evaluate("() => { window.traces = 0; anatomy.stores.shownTrace.subscribe(() => window.traces++); }")
    page.fill("#number-input", "731 015")
    with page.expect_response(lambda r: "/api/trace" in r.url) as answered:
        page.press("#number-input", "Enter")
    page.wait_for_function("() => window.anatomy.trace.input.number === 731015")
    # the page asks for the trace's compact form, and gets it (app/serving/trace_bytes.py, static/js/compact.js)
    assert answered.value.request.headers["accept"] == "application/vnd.anatomy.trace"
    assert answered.value.headers["content-type"] == "application/vnd.anatomy.trace"
    assert tab.live("german") == "siebenhunderteinunddreißigtausendfünfzehn"
    assert tab.live("english") == "seven hundred thirty one thousand fifteen"
    assert re.search(r"\?input=731015#step-\d+$", page.url)
    assert page.get_attribute(".go-deeper a", "href").endswith("?input=731015")  # a topic page computes for it
    assert page.evaluate("() => window.traces") == 1
    assert page.text_content("#input-error") == ""
    assert tab.errors == []


def test_a_refused_link_says_which_input_the_page_shows(tab, live_server):
    """?input=-5: the field keeps -5 to be mended, the message says why, and that the stage and the article show
    the default input meanwhile, which the article names."""
    page = tab.open(live_server + "/?input=-5#step-2")
    page.wait_for_function("() => document.getElementById('input-error').textContent.length > 0")
    message = page.text_content("#input-error")
    assert "negative" in message and message.endswith(" — the stage and the article show 42")
    assert tab.live("number") == "42" and page.input_value("#number-input") == "-5"


def test_a_bad_input_shows_the_servers_message_and_keeps_the_last_good_one(tab, live_server):
    page = tab.open(live_server + "/?input=300")
    url = page.url
    page.fill("#number-input", "forty banana")
    page.press("#number-input", "Enter")
    page.wait_for_function("() => document.getElementById('input-error').textContent.length > 0")
    message = page.text_content("#input-error")
    assert "banana" in message and "a whole number from 0 to 999 999" in message
    assert message.endswith(" — the stage and the article show 300")  # the field keeps "forty banana"
    assert page.get_attribute("#number-input", "aria-invalid") == "true"
    assert page.evaluate("() => window.anatomy.trace.input.number") == 300
    assert tab.live("german") == "dreihundert"
    assert page.url == url
    page.fill("#number-input", "7")  # and a good one clears the message
    page.press("#number-input", "Enter")
    page.wait_for_function("() => window.anatomy.trace.input.number === 7")
    assert page.text_content("#input-error") == ""
    assert [e for e in tab.errors if "422" not in e] == []  # the 422 itself is logged by Chromium


@pytest.mark.parametrize(
    "query, said", [("model=gpt", "unknown model 'gpt'"), ("input=42&model=modern&checkpoint=0", "checkpoint")]
)
def test_the_servers_message_about_the_address_stays_once_the_trace_loads(tab, live_server, query, said):
    page = tab.open(live_server + "/?" + query)
    page.wait_for_function("() => window.anatomy.trace && window.anatomy.trace.input.number === 42")
    page.wait_for_timeout(300)  # the page's own runs are done: the message must still be there
    assert said in page.text_content("#input-error")
    page.fill("#number-input", "7")  # a new input is the reader's: it clears the message
    page.press("#number-input", "Enter")
    page.wait_for_function("() => window.anatomy.trace.input.number === 7")
    assert page.text_content("#input-error") == ""


def test_a_link_restores_input_and_step_and_arrows_move_between_steps(tab, live_server):
    page = tab.open(live_server + "/?input=12#step-7")
    page.wait_for_function("() => window.anatomy.step === 7")
    assert tab.live("german") == "zwölf"
    page.evaluate(
        "() => { window.steps = []; anatomy.stores.stepInView.subscribe((detail) => window.steps.push(detail)); }"
    )
    page.focus("#article")
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => window.anatomy.step === 8")
    detail = page.evaluate("() => window.steps[0]")
    assert detail == {"step": 8}  # what the stage shows for step 8 is the scene's, not the page's
    page.wait_for_function("() => location.hash === '#step-8'")
    page.keyboard.press("ArrowLeft")
    page.wait_for_function("() => window.anatomy.step === 7")
    page.focus("#number-input")  # arrows inside the input edit the text instead
    page.keyboard.press("ArrowRight")
    page.wait_for_timeout(300)
    assert page.evaluate("() => window.anatomy.step") == 7
    # ↑ and ↓ step a number in digits by one, the stage following; keys pressed faster than inputs are drawn
    # are not queued: the latest is drawn once the one before is on show (five keys in one task: 13 runs, then 15)
    page.evaluate(
        "() => { window.shown = []; anatomy.stores.shownTrace.subscribe((t) => shown.push(t.input.number)); }"
    )
    page.evaluate(
        """() => { const field = document.getElementById('number-input');
        for (const key of ['ArrowUp', 'ArrowUp', 'ArrowUp', 'ArrowUp', 'ArrowDown'])
          field.dispatchEvent(new KeyboardEvent('keydown', {key, bubbles: true, cancelable: true})); }"""
    )
    assert page.input_value("#number-input") == "15"
    page.wait_for_function("() => window.anatomy.trace.input.number === 15 && shown.at(-1) === 15")
    assert set(page.evaluate("() => window.shown")) == {13, 15}
    assert tab.live("german") == "fünfzehn" and page.evaluate("() => window.anatomy.step") == 7
    page.keyboard.press("ArrowDown")  # a key as the reader presses it
    page.wait_for_function("() => window.anatomy.trace.input.number === 14")
    page.fill("#number-input", "twelve")  # words: the arrows move the caret
    page.keyboard.press("ArrowUp")
    assert page.input_value("#number-input") == "twelve"


def test_changing_only_the_hash_goes_to_that_step_on_the_page_and_the_stage(tab, live_server):
    """#step-7 → #step-16 in the address bar (or back and forward) reloads nothing: the page goes to step 16,
    and the stage to step 16's view, as a link to it would."""
    page = tab.open(live_server + "/?input=34#step-7")
    page.wait_for_function("() => window.anatomy.step === 7 && window.anatomyStage && anatomyStage.ready")
    page.evaluate("() => { location.hash = '#step-16'; }")
    page.wait_for_function("() => window.anatomy.step === 16 && anatomyStage.stage.stepNo === 16", timeout=30_000)
    # and it stays there: the linked step 7 was still held while the page settled (steps resizing as they
    # come into view), and the hold pulled the page back to step 7 once the sections around 16 were laid out
    page.wait_for_timeout(2500)
    top = page.evaluate("() => document.querySelector('[data-step=\"16\"]').getBoundingClientRect().top")
    assert page.evaluate("() => [window.anatomy.step, location.hash]") == [16, "#step-16"]
    assert -5 < top < page.viewport_size["height"] / 2, top  # the step is scrolled into view
    page.go_back()
    page.wait_for_function("() => window.anatomy.step === 7 && anatomyStage.stage.stepNo === 7", timeout=30_000)
    assert tab.errors == []


def test_on_a_phone_the_stage_and_the_text_do_not_overlap(browser, live_server):
    tab = Page(browser, 390, 780)
    page = tab.open(live_server + "/#step-5")
    stage = page.locator("#stage").bounding_box()
    article = page.locator("#article").bounding_box()
    assert stage["height"] > 150 and article["height"] > 150
    assert stage["y"] + stage["height"] <= article["y"] + 1 or article["y"] + article["height"] <= stage["y"] + 1
    assert page.evaluate("() => document.documentElement.scrollHeight <= innerHeight + 1"), "only the article scrolls"
    assert tab.errors == []
    tab.page.close()


@pytest.mark.parametrize("path", ["/ledger", "/about", "/docs"])
def test_other_pages_load_with_no_console_errors(browser, live_server, path):
    tab = Page(browser)
    tab.page.goto(live_server + path)
    tab.page.wait_for_load_state("networkidle")
    if path == "/docs":
        tab.page.wait_for_selector(".opblock", timeout=15_000)
    assert tab.errors == []
    tab.page.close()


@pytest.mark.parametrize("n", [6, 19, 26])
def test_a_deep_link_lands_on_its_step_even_when_the_figures_above_arrive_late(browser, live_server, n):
    """#step-N puts step N's heading at the top of the article pane and makes it the current step,
    and it stays there while the figures above it are drawn (here each answered a second late)."""
    tab = Page(browser, 1280, 800)

    def late(route):
        time.sleep(1.0)
        route.continue_()

    tab.page.route("**/api/figures/**", late)
    page = tab.open(f"{live_server}/?input=42#step-{n}")
    page.wait_for_timeout(5000)
    where = page.evaluate(
        """n => {
        const pane = Math.max(document.getElementById('article').getBoundingClientRect().top,
                              document.querySelector('.topbar').getBoundingClientRect().bottom);
        return {step: window.anatomy.step, label: document.getElementById('progress-step').textContent,
                offset: document.getElementById('step-' + n).getBoundingClientRect().top - pane};
    }""",
        n,
    )
    assert where["step"] == n and where["label"] == str(n), where
    assert 0 <= where["offset"] <= 120, where
    assert page.evaluate("location.hash") == f"#step-{n}"
    page.wait_for_function("() => window.anatomyStage && window.anatomyStage.ready", timeout=60_000)
    assert page.evaluate("() => window.anatomyStage.stage.step.step") == n, "the stage follows the link"
    assert tab.errors == []
    tab.page.close()
