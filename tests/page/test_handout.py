"""The printable handout, for a classroom. One page: "Print a handout", pressed from the keyboard, puts a
picture of the stage at every step for the input into that step's section and opens the print (stubbed
here); then the page prints to PDF in Chromium. The PDF has a page per step or a little more, every
step's heading in order, each on a page of its own with the stage's picture on the same page; each picture is
a real drawing (not blank, each step's own); the navigation, the stage and the controls do not print; the
live numbers print filled; and at A4's printable width no display formula, at its natural size, runs past
the page or scrolls. The PDF is read with pypdf.

On the same page, "Print the lecture's handout" prints the lecture path's stops only (content/lecture.yaml):
4 to 6 A4 pages (two stops a page, measured 4; the whole handout is about 50), each stop's step and title in
order with its key line and a picture of the stage, on a light background (the pages under print media, the
pictures too: the dark stage made light); a plain print after it leaves them out. The teacher's lesson plan
(/lesson) prints on one light page."""

from __future__ import annotations

import base64
import io
import unicodedata

import pytest

from article.lecture import load_lecture
from tests.browser import open_stage_page, until
from tests.stage.test_stage import pytestmark  # noqa: F401  (skip without Chromium)

pypdf = pytest.importorskip("pypdf")

INPUT = 305
# the desktop layout's smallest, at half a CSS pixel per device pixel: software WebGL draws the 29 views of
# a 232 × 224 canvas in about half the time of 463 × 448 (measured: 12 s against 25 s on a busy 2-core box)
VIEWPORT = {"width": 800, "height": 500}
SCALE = 0.5
PRINT_WIDTH = round((210 - 2 * 15) / 25.4 * 96)  # CSS px: A4 less print.css's 15 mm margins

PICTURES = """() => [...document.querySelectorAll('section.step')].map(sec => {
  const fig = sec.querySelector('figure.handout-picture'), img = fig?.querySelector('img');
  if (!img) return {step: +sec.dataset.step, picture: false};
  const c = Object.assign(document.createElement('canvas'), {width: 96, height: 96}), g = c.getContext('2d');
  g.drawImage(img, 0, 0, 96, 96);
  const px = g.getImageData(0, 0, 96, 96).data, lum = [];
  for (let i = 0; i < px.length; i += 4) lum.push(0.2126 * px[i] + 0.7152 * px[i + 1] + 0.0722 * px[i + 2]);
  const mean = lum.reduce((a, b) => a + b, 0) / lum.length;
  const sd = Math.sqrt(lum.reduce((a, b) => a + (b - mean) ** 2, 0) / lum.length);
  return {step: +sec.dataset.step, picture: true, underHeading: fig.previousElementSibling === sec.querySelector('h2'),
          width: img.naturalWidth, height: img.naturalHeight, sd, digest: c.toDataURL().slice(-200),
          caption: fig.querySelector('figcaption').textContent,
          cards: fig.querySelectorAll('.handout-cards > *').length};
})"""

# in print media, each formula at its natural size: the largest a screen gives it (math.js only shrinks one
# for a narrow column) and the size it prints at, since a print runs no scripts to fit it again (set and
# measured in one task, before math.js's refit could run)
FORMULAS = """() => {
  const ds = [...document.querySelectorAll('.katex-display')];
  for (const d of ds) d.style.fontSize = '';
  return ds.map(d => {
    const box = d.closest('.arithmatex'), f = d.querySelector('.katex-html').getBoundingClientRect();
    return {step: d.closest('section')?.id || '', left: f.left, right: f.right,
            scroll: box.scrollWidth - box.clientWidth};
  });
}"""

EMPTY_LIVE = """() => [...document.querySelectorAll('#article [data-live]')]
  .filter(e => !e.textContent.trim()).map(e => e.dataset.live)"""
CHROME = """() => ['.topbar', '.fig1-dock', 'nav.progress', '#stage', '.handout', '.go-deeper']
  .map(s => [s, [...document.querySelectorAll(s)].filter(e => e.getClientRects().length).length])"""


def plain(text: str) -> str:
    """PDF text as words: ligatures undone (ﬁ → fi), white space collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


def image_sizes(page) -> list[tuple[int, int]]:
    """The pixel sizes of a PDF page's images, read from the page's resources without decoding them."""
    xobjects = page.get("/Resources", {}).get("/XObject", {})
    out = []
    for ref in xobjects.values():
        x = ref.get_object()
        if x.get("/Subtype") == "/Image":
            out.append((int(x["/Width"]), int(x["/Height"])))
    return out


@pytest.fixture(scope="module")
def handout(browser, live_server):
    page = open_stage_page(browser, f"{live_server}/?input={INPUT}", VIEWPORT, device_scale_factor=SCALE)
    page.evaluate("() => { window.print = () => { window.printed = (window.printed || 0) + 1; }; }")  # no dialog
    button = page.get_by_role("button", name="Print a handout")
    button.focus()
    page.keyboard.press("Enter")
    page.wait_for_function("window.printed === 1", timeout=60_000)
    out = {
        "errors": page.errors,
        "pictures": page.evaluate(PICTURES),
        "status": page.locator("#handout-status").text_content(),
        "titles": page.evaluate("[...document.querySelectorAll('section.step h2')].map(h => h.textContent.trim())"),
        "german": page.evaluate("anatomy.trace.input.german"),
        "views": page.evaluate("anatomyStage.steps().map(s => JSON.stringify([s.view, s.subject]))"),
        "empty_live": page.evaluate(EMPTY_LIVE),
        "steps_after": page.evaluate("[anatomyStage.stage.stepNo, anatomy.step]"),
    }
    page.set_viewport_size({"width": PRINT_WIDTH, "height": 900})
    page.emulate_media(media="print")
    out["formulas"] = page.evaluate(FORMULAS)
    out["chrome"] = page.evaluate(CHROME)
    out["scroll_width"] = page.evaluate("document.documentElement.scrollWidth")
    out["note_with_pictures"] = page.locator(".handout-note").is_visible()
    # the outline (from the headings, with the page each lands on) spares reading the text of every page
    pdf = page.pdf(format="A4", prefer_css_page_size=True, outline=True, tagged=True)
    out["pdf"] = pypdf.PdfReader(io.BytesIO(pdf))
    page.evaluate("document.documentElement.classList.remove('handout-ready')")  # as after a new input
    out["note_without_pictures"] = page.locator(".handout-note").is_visible()
    out.update(lecture_handout(page))
    out["lesson"] = lesson_plan(page.context.new_page(), live_server)
    page.context.close()
    return out


# the mean luminance (0-255) of a picture (a data: URL or a blob: URL), drawn small
LUMINANCE = """async (src) => {
  const img = new Image(); img.src = src; await img.decode();
  const c = Object.assign(document.createElement('canvas'), {width: 120, height: 160}), g = c.getContext('2d');
  g.drawImage(img, 0, 0, 120, 160);
  const px = g.getImageData(0, 0, 120, 160).data; let sum = 0;
  for (let i = 0; i < px.length; i += 4) sum += 0.2126 * px[i] + 0.7152 * px[i + 1] + 0.0722 * px[i + 2];
  return sum / (px.length / 4);
}"""
LIGHT = 200  # a white page with light pictures: about 235 measured; the dark stage's own pictures are about 40


def lecture_handout(page) -> dict:
    """The lecture's handout, by its button from the keyboard (the print stubbed), then printed to PDF."""
    page.emulate_media(media="screen")
    page.set_viewport_size(VIEWPORT)
    page.evaluate("anatomyStage.idle()")
    page.get_by_role("button", name="Print the lecture's handout").focus()
    page.keyboard.press("Enter")
    until(page, "window.printed === 2", 90_000)
    out = {
        "lecture_status": page.locator("#handout-status").text_content(),
        "lecture_pictures": [
            page.evaluate(LUMINANCE, src)
            for src in page.evaluate("[...document.querySelectorAll('#lecture-handout img')].map(i => i.src)")
        ],
    }
    page.set_viewport_size({"width": PRINT_WIDTH, "height": 1100})
    page.emulate_media(media="print")
    shot = base64.b64encode(page.screenshot()).decode()
    out["lecture_page_luminance"] = page.evaluate(LUMINANCE, f"data:image/png;base64,{shot}")
    out["lecture_pdf"] = pypdf.PdfReader(io.BytesIO(page.pdf(format="A4", prefer_css_page_size=True)))
    # the print over (Chromium's PDF fires afterprint), a plain print leaves the lecture's handout out
    out["lecture_after"] = page.evaluate(
        "[document.documentElement.classList.contains('handout-lecture'),"
        " getComputedStyle(document.getElementById('lecture-handout')).display]"
    )
    return out


def lesson_plan(page, live_server) -> dict:
    page.goto(f"{live_server}/lesson")
    page.emulate_media(media="print")
    out = {
        "background": page.evaluate("getComputedStyle(document.body).backgroundColor"),
        "pdf": pypdf.PdfReader(io.BytesIO(page.pdf(format="A4", prefer_css_page_size=True))),
    }
    page.close()
    return out


def test_the_button_makes_a_picture_of_every_step_under_its_heading(handout):
    pics = handout["pictures"]
    assert handout["errors"] == []
    assert [p["step"] for p in pics] == list(range(1, 30))
    assert [p["step"] for p in pics if not p["picture"] or not p["underHeading"]] == []
    assert all(p["width"] > 100 and p["height"] > 100 for p in pics)
    # an empty stage is one colour (s.d. 0); the plainest picture, the whole machine dimmed, measured 14.6
    blank = [(p["step"], round(p["sd"], 1)) for p in pics if p["sd"] < 5]
    assert blank == [], f"pictures without a drawing (luminance s.d. under 5 of 255): {blank}"
    # each step's own view: two pictures alike only where the scene frames the same (steps 16 and 28)
    views = handout["views"]
    same = [(a["step"], b["step"]) for a in pics for b in pics if a["step"] < b["step"] and a["digest"] == b["digest"]]
    assert [(a, b) for a, b in same if views[a - 1] != views[b - 1]] == []
    assert len({p["digest"] for p in pics}) >= len(set(views))
    assert all(f"for the input {INPUT} (three hundred five)" in p["caption"] for p in pics)
    # the cards the stage shows over it print under the picture: the worked row (6–9), the loss table (20)
    assert [p["step"] for p in pics if p["cards"]] == [6, 7, 8, 9, 20]
    assert "29 pictures" in handout["status"]
    stage_step, reader_step = handout["steps_after"]
    assert stage_step == reader_step, "the stage is back at the reader's step"


def test_a_page_per_step(handout):
    """A title page, then each of the 29 steps from a new page over one to ten (the research desk's galleries),
    then the references and the colophon: 78 measured. Fewer than a page a step: the steps do not break;
    far more: the pictures or the tables have outgrown the page."""
    pages, steps = len(handout["pdf"].pages), len(handout["titles"])
    assert steps + 1 <= pages <= 3 * steps + 10, pages


def headings(reader) -> list[tuple[str, int]]:
    """The PDF's outline, flat: each heading's text and the index of the page it is on."""
    out = []

    def walk(items):
        for x in items:
            if isinstance(x, list):
                walk(x)
            else:
                out.append((plain(x.title), reader.get_destination_page_number(x)))

    walk(reader.outline)
    return out


def test_every_step_heading_in_order_each_on_a_new_page_with_its_picture(handout):
    pdf, titles = handout["pdf"], [plain(t) for t in handout["titles"]]
    steps = [(t, i) for t, i in headings(pdf) if t in titles]
    assert [t for t, _ in steps] == titles, "the 29 step headings, in order"
    pages = [i for _, i in steps]
    assert all(a < b for a, b in zip(pages, pages[1:])), f"two steps share a page: {pages}"
    sizes = {(p["width"], p["height"]) for p in handout["pictures"]}
    without = [n for n, i in enumerate(pages, 1) if not sizes & set(image_sizes(pdf.pages[i]))]
    assert without == [], f"steps whose heading's page has no picture of the stage: {without}"
    assert "The stage at step 7," in plain(pdf.pages[pages[6]].extract_text())


def test_nothing_prints_wider_than_the_page(handout):
    """Chromium shrinks every page of a print whose content is wider than the paper."""
    assert handout["scroll_width"] <= PRINT_WIDTH


def test_no_navigation_or_controls_print(handout):
    assert [s for s, n in handout["chrome"] if n] == []
    text = plain(handout["pdf"].pages[0].extract_text())
    assert "Anatomy of the Transformer" in text
    assert "Print a handout" not in text and "Ledger" not in text


def test_live_numbers_print_filled(handout):
    assert handout["empty_live"] == []
    step2 = next(i for t, i in headings(handout["pdf"]) if t == plain(handout["titles"][1]))
    # step 2's live sentence: the German the model wrote for this input
    assert handout["german"] in plain(handout["pdf"].pages[step2].extract_text())


def test_no_formula_runs_past_the_printed_page(handout):
    rows = handout["formulas"]
    assert len(rows) >= 15
    bad = [r for r in rows if r["scroll"] > 1 or r["left"] < -1 or r["right"] > PRINT_WIDTH + 1]
    assert bad == [], f"formulas cut at A4's printable width ({PRINT_WIDTH} px): {bad}"


def test_a_print_without_pictures_says_how_to_get_them(handout):
    assert not handout["note_with_pictures"]
    assert handout["note_without_pictures"]


def test_the_lecture_handout_prints_its_stops_on_a_few_light_pages(handout):
    stops, pdf = load_lecture().stops, handout["lecture_pdf"]
    assert handout["errors"] == []
    assert f"{len(stops)} steps" in handout["lecture_status"]
    assert 4 <= len(pdf.pages) <= 6, f"{len(pdf.pages)} pages"
    text = [plain(p.extract_text()) for p in pdf.pages]
    # every stop, in order, with its key line and a picture on the page where its heading is
    found = []
    for stop in stops:
        where = [i for i, t in enumerate(text) if f"Step {stop.step}:" in t]
        assert where, f"step {stop.step} is not in the lecture's handout"
        found.append(where[0])
        assert plain(stop.key)[:60] in text[where[0]] or plain(stop.key)[:60] in " ".join(text)
        assert image_sizes(pdf.pages[where[0]]), f"no picture on step {stop.step}'s page"
    assert found == sorted(found)
    # only the path: no step off it
    off = [n for n in range(1, 30) if n not in {s.step for s in stops}]
    assert not [n for n in off if any(f"Step {n}:" in t for t in text)]
    # light: the pages as printed, and each picture (the dark stage inverted)
    assert handout["lecture_page_luminance"] >= LIGHT, handout["lecture_page_luminance"]
    assert len(handout["lecture_pictures"]) == len(stops)
    assert min(handout["lecture_pictures"]) >= 150, handout["lecture_pictures"]
    assert handout["lecture_after"] == [False, "none"]


def test_the_lesson_plan_prints_on_one_light_page(handout):
    lesson = handout["lesson"]
    assert len(lesson["pdf"].pages) == 1
    assert lesson["background"] == "rgb(255, 255, 255)"
    text = plain(lesson["pdf"].pages[0].extract_text())
    assert all(f"{s.step}." in text and plain(s.ask)[:40] in text for s in load_lecture().stops)
