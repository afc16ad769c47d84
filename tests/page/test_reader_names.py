"""One name for each part, as a reader counts it.

Wherever a reader sees a code id (`dec.1.cross.h3`, `enc.0.self`) the part's name, counted from 1 as
step 1 promises, stands beside it: "decoder 2 · cross-attention · head 4" (model/ids.py's
`reader_name`). Checked on every rendered page (the article with the research desk and step 29's
table, the ledger, about, every topic page: their text and the titles and accessible names a reader
hears), in the desk's charts (their head labels say head 1…4), and on the stage in Chromium: the
inspector on hovering a head's cell, the explanation panel's title, the switches' names and tooltips
and the compare banner."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from model import ids

ROOT = Path(__file__).resolve().parents[2]
TOPICS = sorted(p.stem for p in (ROOT / "content" / "topics").glob("*.md"))
PAGES = ["/", "/?input=305&ablate=dec.1.cross.h3", "/ledger", "/about", *(f"/topics/{t}" for t in TOPICS)]

CODE_ID = re.compile(r"\b(?:lens\.)?(enc|dec)\.(\d+)(?:\.(self|cross|ffn))?(?:\.h(\d+))?(?:\.\w+)*")
HEAD_FROM_0 = re.compile(r"\bhead 0\b", re.I)
BEFORE = 100  # the reader's name is within this many characters before the id


class Seen(HTMLParser):
    """What a reader sees or hears of a page: its text (outside scripts and styles), and each title,
    aria-label and alt on its own."""

    HEARD = ("title", "aria-label", "alt")

    def __init__(self):
        super().__init__()
        self.text, self.attrs, self.skip = [], [], 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style", "template"):
            self.skip += 1
        self.attrs += [v for k, v in attrs if k in self.HEARD and v]

    def handle_endtag(self, tag):
        if tag in ("script", "style", "template"):
            self.skip = max(0, self.skip - 1)

    def handle_data(self, data):
        if not self.skip:
            self.text.append(data)


def seen(html: str) -> list[str]:
    p = Seen()
    p.feed(html)
    return [re.sub(r"\s+", " ", " ".join(p.text))] + p.attrs


def unnamed(text: str) -> list[str]:
    """Each code id in `text` without its reader's name before it: a head's whole name ("decoder 2 ·
    cross-attention · head 4"), anything else its stack and layer counted from 1 ("encoder 2")."""
    bad = []
    for m in CODE_ID.finditer(text):
        before = text[max(0, m.start() - BEFORE) : m.start()].lower()
        name = ids.parse(m.group(0))
        if name.head is not None and name.sublayer is not None:
            want = ids.parse(ids.head_slice_id(name.station, name.head)).reader_name()
        else:
            want = f"{'encoder' if name.stack == 'enc' else 'decoder'} {name.layer + 1}"
        if want not in before:
            bad.append(f"{m.group(0)} (wants “{want}”): …{text[max(0, m.start() - 60) : m.end() + 10]}…")
    return bad


def test_the_check_finds_an_id_without_its_name_and_accepts_one_with_it():
    assert unnamed("switched off: dec.1.cross.h3") and unnamed("head 4 (dec.1.cross.h3)")
    assert unnamed("decoder 2 · cross-attention · head 3 dec.1.cross.h3")  # the name counted from 0
    assert not unnamed("decoder 2 · cross-attention · head 4 dec.1.cross.h3")
    assert not unnamed("Switch encoder 1 · self-attention off (enc.0.self)")
    assert unnamed("encoder 1 (enc.1.ffn.ln)") and not unnamed("encoder 2's final LayerNorm (enc.1.ffn.ln)")


@pytest.mark.parametrize("path", PAGES)
def test_no_page_shows_a_code_id_without_the_readers_name(client, path):
    r = client.get(path)
    assert r.status_code == 200, path
    found = []
    for part in seen(r.text):
        found += unnamed(part)
        assert not HEAD_FROM_0.search(part), (path, HEAD_FROM_0.search(part), part[:200])
    assert not found, (path, found[:5])


def test_step_29s_table_names_every_part_and_its_switch(client):
    html = client.get("/").text
    rows = re.findall(
        r'<tr class="pa-(?:head|sublayer)"[^>]*>\s*<th scope="row">(.*?)</th>.*?aria-label="([^"]*)"', html, re.S
    )
    assert len(rows) == 34  # 24 heads and 10 sub-layers of the 2017 model
    for th, label in rows:
        part = re.search(r'<code class="pa-id">([^<]+)</code>', th).group(1)
        name = ids.parse(part).reader_name()
        shown = re.sub(r"<[^>]+>", "", th)  # a head's sub-layer, said beside it to a screen reader
        assert shown == f"{name} {part}", th
        assert label == f"switch off {name} ({part})", label
    # a head's row under its sub-layer's row: "head 4", its sub-layer said to a screen reader, the id beside
    assert (
        '<span class="visually-hidden">decoder 2 · cross-attention · </span>head 4 <code class="pa-id">dec.1.cross.h3'
    ) in html


@pytest.mark.parametrize("figure", ["research-alignment", "research-followups"])
def test_the_desks_charts_and_tables_count_heads_from_1(client, figure):
    d = client.get(f"/api/figures/{figure}").json()["data"]
    labels = [lab for p in d["parts"] if p["chart"] for lab in p["chart"]["labels"]]
    cells = [c for p in d["parts"] for row in p["rows"] for c in row]
    heads = {int(h) for text in labels + cells for h in re.findall(r"\bhead (\d+)\b", text)}
    assert heads == {1, 2, 3, 4}, heads
    if figure == "research-alignment":  # the layer is named too: the last one is decoder 2
        assert "decoder 2 · predicts · head 1" in labels
    else:
        assert "decoder 2 · cross-attention · head 4" in labels


def test_the_scene_names_each_block_slice_and_switch_from_1(client):
    from tests.in_page import page_parts

    (parts,) = page_parts(client, ["305"])  # the scene the page builds for the served trace
    scene = parts["scene"]
    blocks = {b["id"]: b for b in scene["blocks"]}
    assert blocks["dec.1.cross.h3.weights"]["name"] == "decoder 2 · cross-attention · head 4"
    assert blocks["enc.0.self.q"]["name"] == "encoder 1 · self-attention"
    assert blocks["src.emb"]["name"] == "input embedding"
    assert all(b["name"] for b in scene["blocks"])
    assert {s["id"]: s["name"] for s in scene["slices"]}["enc.1.self.v.h2"] == "encoder 2 · self-attention · head 3"
    switches = {s["id"]: s for s in scene["switches"]}
    assert switches["dec.1.cross.h3"]["name"] == "decoder 2 · cross-attention · head 4"
    assert switches["dec.1.cross.h3"]["label"] == "head 4"  # the stage's own label stays short
    assert switches["dec.0.self"]["name"] == "decoder 1 · masked self-attention"


# ---- on the stage, in Chromium: what the reader sees on hovering, explaining, switching, comparing ------


def test_the_stage_names_the_part_beside_every_id_it_shows(browser, live_server):
    from tests.browser import has_chromium, open_stage_page

    if not has_chromium():
        pytest.skip("Debian's chromium is not installed")
    page = open_stage_page(
        browser, f"{live_server}/?input=305#step-16", {"width": 1440, "height": 900}, reduced_motion="reduce"
    )
    try:
        # hover decoder 2's cross-attention head 4: row 1, column 2 of its weights
        pt = page.evaluate("anatomyStage.project('dec.1.cross.h3.weights', 1, 2)")
        assert pt and pt["visible"], pt
        page.mouse.move(pt["x"], pt["y"])
        page.wait_for_function(
            "() => document.querySelector('.stage-inspector').dataset.id === 'dec.1.cross.h3.weights'"
        )
        lines = page.eval_on_selector_all(".stage-inspector > div", "els => els.map(e => [e.className, e.textContent])")
        assert lines[0] == ["stage-inspector-title", "decoder 2 · cross-attention · head 4"], lines
        assert lines[2][0] == "stage-inspector-id" and lines[2][1].startswith("dec.1.cross.h3.weights"), lines
        text = page.eval_on_selector(".stage-inspector", "el => el.textContent")
        assert not unnamed(text), text
        # a head slice's alias names its head: V's columns of encoder 2's head 3
        page.evaluate("anatomyStage.inspect('enc.1.self.v', 0, 17)")
        text = page.eval_on_selector(".stage-inspector", "el => el.textContent")
        assert "also encoder 2 · self-attention · head 3: enc.1.self.v.h2[0, 1]" in text, text

        # the explanation panel: its title names the part; its inputs name theirs
        page.evaluate("anatomyStage.select('dec.1.cross.h3.weights', 1, 2)")
        page.wait_for_selector(".explain-panel:not([hidden]) .explain-title")
        title = page.inner_text(".explain-title")
        assert title.startswith("decoder 2 · cross-attention · head 4 · softmax"), title
        panel = page.eval_on_selector(
            ".explain-panel",
            "el => [el.innerText, ...[...el.querySelectorAll("
            "'[title], [aria-label]')].flatMap(e => [e.title, e.getAttribute('aria-label')])"
            ".filter(Boolean)]",
        )
        assert "decoder 2 · cross-attention · head 4 · row 2" in panel[0], panel[0]  # row 1 counted from 1
        assert all(not unnamed(t) for t in panel), [u for t in panel for u in unnamed(t)][:3]
        page.evaluate("anatomyStage.close()")

        # every switch: its accessible name and tooltip say the part in full, then its id
        switches = page.eval_on_selector_all(
            ".stage-switch", "els => els.map(b => [b.dataset.part, b.title, b.getAttribute('aria-label')])"
        )
        assert len(switches) == 34
        for part, title, label in switches:
            name = ids.parse(part).reader_name()
            assert f"{name} off ({part})" in title and f"{name} off ({part})" in label, (part, title)
        assert any(
            p == "dec.1.cross.h3" and "Switch decoder 2 · cross-attention · head 4 off" in t for p, t, _ in switches
        )

        # the compare banner
        assert page.evaluate("anatomyStage.compare('42')")
        page.wait_for_selector(".stage-banner:not([hidden])")
        banner = page.inner_text(".stage-banner")
        assert banner and not CODE_ID.search(banner), banner
        assert page.errors == []
    finally:
        page.context.close()
