"""Where the page's numbers come from (static/js/api.js): the served page says the
server computes them; with the network to the server cut after load, a new input's trace is computed in the
browser over what the page kept, the stage draws it (its values the server's own for that input) and the
page says so; a refused input still gets the API's message (numbers.js reads it); with the server back, the
server answers again. And in the static build (the page's <meta name="anatomy-site">) every API document is
asked of the folder, by site.js's one rule, never of /api/. One browser page for the served checks."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

import httpx
import pytest

from tests.browser import has_chromium, open_stage_page, until
from tests.in_page import page_parts

pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.skipif(not has_chromium(), reason="Debian chromium is not installed")

# Until helper 4's static/compute/trace.js lands, a stand-in answers computeTrace from the server's documents
# the page kept: offline it can only give back an input kept before the cut, so the test keeps the new input
# first. The real module computes any input from the program and the weights: then nothing is kept for it.
STAND_IN = "export const STAND_IN = true" in (Path(__file__).parents[2] / "static/compute/trace.js").read_text()
# the new input has the loaded one's shape (3 source tokens, 4 rows), so the scene structure kept for 42 serves
NEW, REFUSED, BACK = "43", "minus three", "44"
CUT = ("**/api/**", "**/site/**")  # what the server answers: its API and the scene structures (app/routes/scenes.py)


@pytest.fixture(scope="module")
def page(browser, live_server):
    p = open_stage_page(browser, f"{live_server}/?input=42", {"width": 1280, "height": 800})
    yield p
    p.context.close()


def source_line(page) -> dict:
    return page.evaluate("""() => { const s = document.getElementById('trace-source');
        return {source: window.anatomy.source, text: s.textContent, data: s.dataset.source,
                live: !!s.closest('[aria-live]'), shown: s.getClientRects().length > 0}; }""")


def run_input(page, text: str) -> None:
    page.fill("#number-input", text)
    page.press("#number-input", "Enter")


def drawn(page, node_id: str) -> list[float]:
    return page.evaluate("id => Array.from(anatomyStage.stage.tensors.get(id).data)", node_id)


def test_the_served_page_says_the_server_computes(page):
    line = source_line(page)
    assert line["source"] == "server" and line["data"] == "server" and line["text"].startswith("Server")
    assert line["live"] and line["shown"]  # visible, and read out when it changes
    assert page.evaluate("document.querySelector('.stage-onnx').getAttribute('aria-disabled')") is None


def test_with_the_server_cut_a_new_input_is_computed_in_the_browser(page, live_server):
    served, before = (
        httpx.get(f"{live_server}/api/trace", params={"input": n}, timeout=60).json() for n in (NEW, "42")
    )
    refused = httpx.get(f"{live_server}/api/trace", params={"input": REFUSED}, timeout=60)
    message = refused.json()["detail"]["message"]
    assert refused.status_code == 422
    until(page, "window.anatomy.offlineReady === true", 60_000)  # kept in idle time, after the stage is live
    if STAND_IN:
        page.evaluate("i => anatomy.keepForOffline(i)", NEW)
    cut = []
    for served_by_the_server in CUT:
        page.route(served_by_the_server, lambda route: (cut.append(route.request.url), route.abort()))
    try:
        run_input(page, NEW)
        until(page, f"anatomyStage.input && anatomyStage.input.number === {int(NEW)}", 30_000)
        assert cut, "the page asked the server first"
        line = source_line(page)
        assert line["source"] == "offline" and line["data"] == "offline"
        assert line["text"].startswith("Server unreachable: in your browser"), line
        assert page.evaluate("window.anatomy.trace.input.number") == int(NEW)
        assert page.evaluate("document.getElementById('input-error').textContent") == ""
        # what the stage draws is this input's: the last attention block's weights, the server's to 1e-5
        # (and not the loaded input's, which differ)
        with httpx.Client(base_url=live_server, timeout=60) as c:
            blocks = {b["id"] for b in page_parts(c, [NEW])[0]["scene"]["blocks"]}
        node = [n for n in served["nodes"] if n["op"] == "Softmax" and n["id"] in blocks][-1]
        ours, theirs = drawn(page, node["id"]), list(_flat(node["data"]))
        old = list(_flat(next(n for n in before["nodes"] if n["id"] == node["id"])["data"]))
        assert len(ours) == len(theirs) == len(old)
        assert max(abs(a - b) for a, b in zip(ours, theirs)) <= 1e-5 + 1e-6 * max(map(abs, theirs))
        assert max(abs(a - b) for a, b in zip(ours, old)) > 1e-3
        assert page.evaluate("document.querySelector('.stage-onnx').getAttribute('aria-disabled')") == "true"
        # a refusal is still the API's own message, and the stage keeps the last good trace
        run_input(page, REFUSED)
        until(page, "document.getElementById('input-error').textContent.length > 0", 30_000)
        said = page.evaluate("document.getElementById('input-error').textContent")
        assert said == f"{message} — the stage and the article show {NEW}"
        assert page.evaluate("anatomyStage.input.number") == int(NEW)
        assert source_line(page)["source"] == "offline"
    finally:
        for served_by_the_server in CUT:
            page.unroute(served_by_the_server)
    run_input(page, BACK)  # the server again: it answers, and the line says so
    until(page, f"anatomyStage.input && anatomyStage.input.number === {int(BACK)}", 60_000)
    assert source_line(page)["source"] == "server"
    assert [e for e in page.errors if "ERR_FAILED" not in e] == []  # the cut requests fail; nothing else


def test_when_the_server_is_busy_the_page_computes_and_says_so(page, live_server):
    """The server's answer to a client over its limits (app/serving/client_limits.py): 503 with Retry-After.
    The page computes the input in the browser and says that the server is busy, not that it is gone."""
    body = '{"detail":{"message":"too many connections from your address; try again in a few seconds"}}'

    def busy(route):
        route.fulfill(status=503, headers={"Retry-After": "5", "Cache-Control": "no-store"}, body=body,
                      content_type="application/json")  # fmt: skip

    for served_by_the_server in CUT:
        page.route(served_by_the_server, busy)
    try:
        run_input(page, "46")
        until(page, "anatomyStage.input && anatomyStage.input.number === 46", 30_000)
        line = source_line(page)
        assert line["source"] == "busy" and line["text"].startswith("Server busy: in your browser"), line
        assert page.evaluate("document.getElementById('input-error').textContent") == ""
    finally:
        for served_by_the_server in CUT:
            page.unroute(served_by_the_server)
    run_input(page, "47")
    until(page, "anatomyStage.input && anatomyStage.input.number === 47", 60_000)
    assert source_line(page)["source"] == "server"


def test_the_apps_own_503_is_shown_with_its_message(page):
    """A 503 of the app's with its message and no Retry-After (the snapshots' file damaged while it runs) is
    the server's answer: the page says what it said and keeps the stage, rather than computing elsewhere."""
    message = "the training snapshots are not available: model/artifacts/snapshots.safetensors is missing"
    body = json.dumps({"detail": {"message": message, "accepted": "model is one of 2017, modern (default 2017)"}})
    page.route("**/api/trace**", lambda r: r.fulfill(status=503, body=body, content_type="application/json"))
    try:
        run_input(page, "48")
        until(page, "document.getElementById('input-error').textContent.length > 0", 30_000)
        assert message in page.evaluate("document.getElementById('input-error').textContent")
        assert page.evaluate("anatomyStage.input.number") == 47 and source_line(page)["source"] == "server"
    finally:
        page.unroute("**/api/trace**")


def _flat(data):
    for v in data:
        if isinstance(v, list):
            yield from _flat(v)
        else:
            yield -math.inf if v is None else v


def _api_url(site_path: str) -> str:
    """The API address a file of the static folder holds (site.js sitePath read backwards)."""
    m = re.fullmatch(r"/site(/api/.*)/([^/]*)\.(json|bin)", urlsplit(site_path).path)
    assert m, site_path
    path, name = m.group(1), m.group(2)
    return path if name == "index" else f"{path}?{urlencode(parse_qsl(name))}"


def test_the_static_build_asks_every_document_of_the_folder(browser, live_server):
    """A page with the static build's meta tag, its folder standing in for the server's answers: a JSON
    document, the weights, a refused input's message and the beam table (computed in the browser over the
    folder's documents) are read from /site/…, never from /api/."""
    ctx = browser.new_context()
    asked = []
    ctx.route(
        f"{live_server}/static-page",
        lambda r: r.fulfill(
            status=200,
            content_type="text/html",
            body=('<!doctype html><meta name="anatomy-site" content="static"><title>static</title>'),
        ),
    )

    def folder(route):
        path = urlsplit(route.request.url).path
        asked.append(path)
        route.fulfill(response=route.fetch(url=live_server + _api_url(path)))

    ctx.route(f"{live_server}/site/**", folder)
    ctx.route(f"{live_server}/api/**", lambda r: (asked.append(urlsplit(r.request.url).path), r.abort()))
    page = ctx.new_page()
    page.goto(f"{live_server}/static-page")
    out = page.evaluate(
        """async (refused) => {
        const api = await import('/static/js/api.js');
        const { numbersSource } = await import('/static/js/store.js');
        const facts = await api.fetchJson('/api/facts');
        const weights = await api.fetchWeightBytes('/api/weights?model=modern');
        let message = null;
        try { await api.loadTrace(refused); } catch (e) { message = e.message; }
        const beam = await api.loadBeam(43);
        return {source: numbersSource.get(), facts: facts.facts.length, weights: weights.byteLength, message,
                beam: [beam.number, beam.best.tokens, beam.german, beam.steps.length]};
    }""",
        REFUSED,
    )
    ctx.close()
    assert asked[:2] == ["/site/api/facts/index.json", "/site/api/weights/model=modern.bin"], asked
    assert not [a for a in asked if a.startswith("/api/")], asked
    assert out["source"] == "browser" and out["facts"] > 0 and out["weights"] > 100_000
    refused = httpx.get(f"{live_server}/api/trace", params={"input": REFUSED}).json()
    assert out["message"] == refused["detail"]["message"]
    beam = httpx.get(f"{live_server}/api/beam", params={"input": 43}).json()
    assert out["beam"] == [43, beam["best"]["tokens"], beam["german"], len(beam["steps"])]
