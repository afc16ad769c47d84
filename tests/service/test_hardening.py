"""Hardening for a public launch: HEAD, headers, parameters, start-up checks, health."""

from __future__ import annotations

import pytest

from tests.input_forms import BLANKS

HEAD_PATHS = [
    "/",
    "/healthz",
    "/api/model",
    "/api/weights",
    "/api/facts",
    "/api/trace?input=42",
    "/api/trace/stream?input=42",
    "/api/beam?input=42",
    "/ledger",
    "/about",
    "/docs",
    "/api/weights?model=modern",
    "/api/figures/time-machine",
    "/static/js/page.js",
    "/vendor/three/build/three.module.js",
    "/openapi.json",
    "/api/trace?input=x",
    "/nowhere",
]


@pytest.mark.parametrize("path", HEAD_PATHS)
def test_head_answers_as_get_does(client, path):
    """Item 4: HEAD has GET's status and headers (uptime checks use it), and no body."""
    get = client.get(path, headers={"Accept-Encoding": "identity"})
    head = client.head(path, headers={"Accept-Encoding": "identity"})
    assert head.status_code == get.status_code != 405
    assert head.content == b""
    for name in ("content-type", "etag", "cache-control", "content-security-policy"):
        assert head.headers.get(name) == get.headers.get(name), name
    if "content-length" in get.headers:
        assert head.headers["content-length"] == get.headers["content-length"]


def test_head_keeps_304_and_encoding(client):
    etag = client.get("/api/weights").headers["etag"]
    assert client.head("/api/weights", headers={"If-None-Match": etag}).status_code == 304
    br = client.head("/api/model", headers={"Accept-Encoding": "br"})
    assert br.headers.get("content-encoding") == "br" and br.content == b""


# ---- the smaller items ------------------------------------------------------------------------------


def test_no_lookup_timing_is_exposed(client):
    """Server-Timing told a cached lookup (0.02 ms) from a computed one (~20 ms): who asked for what."""
    for n in ("424242", "424242"):
        r = client.get("/api/trace", params={"input": n})
        assert r.status_code == 200 and "server-timing" not in r.headers


@pytest.mark.parametrize(
    "path",
    [
        "/vendor/three/package.json",
        "/vendor/swagger-ui/index.html",
        "/vendor/swagger-ui/package.json",
        "/vendor/katex/README.md",
        "/vendor/three/examples/jsm/controls/TrackballControls.js",
        "/vendor/chartjs/chart.js",
        "/vendor/katex/../package.json",
    ],
)
def test_only_the_vendor_files_the_pages_use_are_served(client, path):
    assert client.get(path).status_code == 404


def test_the_vendor_files_the_pages_use_are_served(client):
    from app.serving.delivery import VENDOR

    for name, (_, files) in VENDOR.items():
        for f in files:
            assert client.get(f"/vendor/{name}/{f}").status_code == 200, (name, f)
    assert client.get("/vendor/katex/fonts/KaTeX_Main-Regular.woff2").status_code == 200  # named by its CSS


@pytest.mark.parametrize(
    "path",
    [
        "/api/trace?input=abc",
        "/api/trace?input=42&model=nope",
        "/nowhere",
        "/vendor/three/package.json",
        "/api/weights?checkpoint=31",
        "/topics/nothing",
        "/static/nothing.js",
    ],
)
def test_error_responses_are_not_stored(client, path):
    r = client.get(path)
    assert r.status_code >= 400 and r.headers["cache-control"] == "no-store"


def test_a_permissions_policy_is_sent(client):
    policy = client.get("/").headers["permissions-policy"]
    assert "camera=()" in policy and "geolocation=()" in policy and "microphone=()" in policy


@pytest.mark.parametrize(
    "accept", ["application/x-ndjson;q=0", "application/x-ndjson; q=0.0, application/json", "*/*", "application/json"]
)
def test_ndjson_only_when_accepted_with_a_quality_above_0(client, accept):
    r = client.get("/api/trace", params={"input": "42"}, headers={"Accept": accept})
    assert r.headers["content-type"] == "application/json"


def test_ndjson_when_accepted(client):
    r = client.get("/api/trace", params={"input": "42"}, headers={"Accept": "application/x-ndjson;q=0.5"})
    assert r.headers["content-type"] == "application/x-ndjson"


def test_safetensors_refused_with_q_0(client):
    r = client.get("/api/weights", headers={"Accept": "application/octet-stream;q=0, application/json"})
    assert r.headers["content-type"] == "application/json"


def test_a_coding_refused_with_q_0_is_not_used(client):
    from app.serving.delivery import quality

    assert quality("br;q=0, *", "br", ("*",)) == 0
    assert quality("gzip, *;q=0.5", "br", ("*",)) == 0.5
    assert quality("BR;Q=0.3", "br") == 0.3


BLANK_IS_ABSENT = [{"ablate": ""}, {"ablate": " , "}, {"checkpoint": ""}, {"model": ""}]


@pytest.mark.parametrize("extra", BLANK_IS_ABSENT)
def test_an_empty_optional_parameter_is_the_same_as_leaving_it_out(client, extra):
    plain = client.get("/api/trace", params={"input": "42"})
    r = client.get("/api/trace", params={"input": "42", **extra})
    assert r.status_code == 200 and r.content == plain.content and r.headers["etag"] == plain.headers["etag"]


@pytest.mark.parametrize("bad", ["025", "00", "+25", "25.0", " 0 ", " 25", "25 ", " "])
def test_a_checkpoint_not_written_as_its_step_is_refused_like_any_other(client, bad):
    r = client.get("/api/trace", params={"input": "42", "checkpoint": bad})
    other = client.get("/api/trace", params={"input": "42", "checkpoint": "31"})
    assert r.status_code == other.status_code == 422
    message, usual = r.json()["detail"]["message"], other.json()["detail"]["message"]
    assert message.replace(repr(bad), "X") == usual.replace("'31'", "X")


@pytest.mark.parametrize("bad", [" modern", "modern ", " "])
def test_a_padded_model_is_refused_like_any_other(client, bad):
    r = client.get("/api/trace", params={"input": "42", "model": bad})
    other = client.get("/api/trace", params={"input": "42", "model": "gpt"})
    assert r.status_code == other.status_code == 422
    assert r.json()["detail"]["message"].replace(repr(bad), "X") == other.json()["detail"]["message"].replace(
        "'gpt'", "X"
    )


@pytest.mark.parametrize("blank", BLANKS)
def test_a_blank_input_is_refused_as_a_missing_one(client, blank):
    missing = client.get("/api/trace").json()["detail"]["message"]
    assert client.get("/api/trace", params={"input": blank}).json()["detail"]["message"] == missing


# ---- missing or damaged data says "not available", with a reason and no server path -----------------


def test_a_view_file_gone_while_running_is_not_available_without_a_server_path(client, tmp_path, monkeypatch):
    import shutil

    from app.service import research_views

    views = tmp_path / "views"
    shutil.copytree(research_views.DEFAULT, views)
    monkeypatch.setattr(research_views, "DEFAULT", views)  # the shipped folder, as the app sees it
    assert figure_data(client, "research-alignment")["status"] == "results"
    (views / "alignment.json").unlink()
    (views / "ablations.json").write_text('{"view": 1, "name": "abl')  # half-written
    for name, why in [("alignment", "is missing"), ("ablations", "is not complete JSON")]:
        data = figure_data(client, f"research-{name}")
        assert data["status"] == "not available" and why in data["error"], data
        assert str(tmp_path) not in data["error"] and f"{name}.json" in data["error"]
    page = client.get("/").text
    assert "The results are not available: " in page and str(tmp_path) not in page


def figure_data(client, name):
    r = client.get(f"/api/figures/{name}")
    assert r.status_code == 200
    return r.json()["data"]


def test_a_recorded_view_without_a_file_is_still_a_figure_not_available(monkeypatch, tmp_path):
    from app.service import research_views

    monkeypatch.setattr(research_views, "DEFAULT", tmp_path)  # an empty shipped folder
    assert "research-alignment" in research_views.names()
    assert research_views.read("alignment")["error"] == "alignment.json is missing"


def test_the_part_ablation_table_gone_or_damaged_is_not_available(client, tmp_path, monkeypatch):
    from app.routes import pages

    gone = tmp_path / "part_ablation.json"
    monkeypatch.setattr(pages, "PART_ABLATION", gone)
    assert "The per-part table is not available: part_ablation.json is missing" in pages.part_ablation_html("v")
    gone.write_text('{"rows": [')
    html = pages.part_ablation_html("v")
    assert "not available: part_ablation.json is not complete JSON" in html and str(tmp_path) not in html


# ---- the server's side: the page checks all its parameters together, for the model named -----------


def page_error(client, **params) -> str:
    import re

    r = client.get("/", params=params)
    assert r.status_code == 200
    return re.search(r'<output id="input-error"[^>]*>(.*?)</output>', r.text, re.S).group(1)


def test_the_page_checks_the_checkpoint_for_the_model_it_names(client):
    api = client.get("/api/trace", params={"input": "42", "model": "modern", "checkpoint": "0"})
    assert api.status_code == 422
    message = page_error(client, input="42", model="modern", checkpoint="0")
    assert "no stored training snapshots" in message
    assert message == api.json()["detail"]["message"].replace("'", "&#39;")
    assert page_error(client, input="42", model="modern") == ""
    assert page_error(client, input="42", checkpoint="0") == ""


def test_the_page_names_a_bad_model_and_a_bad_input_together(client):
    message = page_error(client, input="abc", model="nope")
    assert "unknown model" in message and "is not an English number word" in message


# ---- every unchanging body compressed once, served from memory with its ETag ------------------------

UNCHANGING = [
    "/api/weights",
    "/api/weights?checkpoint=100",
    "/api/model",
    "/api/facts",
    "/api/model?model=modern",
    "/api/figures/pe-pattern",
    "/api/figures/research-alignment",
    "/",
    "/ledger",
    "/about",
    "/docs",
    "/static/js/page.js",
    "/static/stage/main.js",
    "/bundle/stage/main.js",
    "/bundle/js/page.js",
    "/vendor/three/build/three.core.js",
    "/vendor/katex/katex.min.css",
    "/vendor/swagger-ui/swagger-ui-bundle.js",
]


@pytest.mark.parametrize("coding", ["br", "gzip", "zstd"])
def test_unchanging_bodies_are_compressed_once_and_sent_with_their_etag(client, monkeypatch, coding):
    import brotli
    import starlette_compress._brotli as per_request_br
    import starlette_compress._gzip as per_request_gzip

    from app.serving.once import STORE

    for path in UNCHANGING:
        client.get(path, headers={"Accept-Encoding": coding})  # the first asking compresses it
    made = STORE.made

    def refuse(*a, **k):
        raise AssertionError("compressed on the request path")

    monkeypatch.setattr(per_request_br.brotli, "Compressor", refuse)
    monkeypatch.setattr(per_request_gzip.gzip, "GzipFile", refuse)
    for path in UNCHANGING:
        r = client.get(path, headers={"Accept-Encoding": coding})
        assert r.status_code == 200 and r.headers["content-encoding"] == coding, path
        plain = client.get(path, headers={"Accept-Encoding": "identity"})
        assert r.content == plain.content and r.headers["etag"] == plain.headers["etag"], path
        again = client.get(path, headers={"Accept-Encoding": coding, "If-None-Match": r.headers["etag"]})
        assert again.status_code == 304 and again.content == b"", path
    assert STORE.made == made, "a kept form was made again"
    assert brotli.compress  # the module itself is untouched


def test_a_changed_file_is_read_and_compressed_anew(tmp_path):
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from app.serving.once import OnceFiles

    (tmp_path / "a.js").write_text("const a = 1;\n" * 200)
    app = FastAPI()
    app.mount("/s", OnceFiles(tmp_path))
    with TestClient(app) as c:
        first = c.get("/s/a.js", headers={"Accept-Encoding": "br"})
        (tmp_path / "a.js").write_text("const b = 2;\n" * 300)
        second = c.get("/s/a.js", headers={"Accept-Encoding": "br"})
    assert second.text == "const b = 2;\n" * 300 and second.headers["etag"] != first.headers["etag"]


# Texts Python's str.isdigit accepts but int() refuses or reads as another number, a run past int()'s
# 4 300-digit limit, and a NUL: each in a step, a scene file's n or m, or a static path was a 500.
NOT_ASCII_DIGITS = ["%C2%B2", "%C2%B3", "%C2%B9", "%E2%91%A0", "%D9%A3", "9" * 4301]


@pytest.mark.parametrize("step", NOT_ASCII_DIGITS)
def test_an_embed_step_that_is_no_ascii_number_shows_the_first_step_and_says_why(client, step):
    r = client.get(f"/embed?input=42&step={step}")
    assert r.status_code == 200 and "no step" in r.text
    assert r.headers["content-security-policy"]


@pytest.mark.parametrize(
    "name", [f"{x}.json.gz" for x in NOT_ASCII_DIGITS] + ["5-%C2%B2.diff.json.gz", "%C2%B2-3.diff.json.gz"]
)
def test_a_scene_file_named_with_no_ascii_number_is_404_with_the_usual_headers(client, name):
    r = client.get(f"/site/scene/2017/{name}")
    assert r.status_code == 404 and "no scene file" in r.json()["detail"]["message"]
    assert r.headers["content-security-policy"] and r.headers["cache-control"] == "no-store"


@pytest.mark.parametrize("path", ["/static/%00", "/static/js/%00.js", "/bundle/%00", "/vendor/three/%00"])
def test_a_nul_in_a_file_path_is_404(client, path):
    r = client.get(path)
    assert r.status_code == 404 and r.headers["content-security-policy"]


def test_a_fault_answers_500_with_the_usual_headers_and_one_line_in_the_log(client, monkeypatch, caplog):
    """Whatever goes wrong inside a route: JSON, the security headers, no-store, and one log line, not a
    traceback (Starlette's own answer to an exception lies outside every middleware: no headers)."""
    from app.routes import embed

    def broken(*_):
        raise RuntimeError("planted fault")

    monkeypatch.setattr(embed, "embed_step", broken)
    with caplog.at_level("ERROR", logger="anatomy"):
        r = client.get("/embed?input=42&step=3")
    assert r.status_code == 500 and r.json() == {"detail": {"message": "internal error"}}
    assert r.headers["content-security-policy"] and r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["cache-control"] == "no-store"
    lines = [x for x in caplog.records if x.name == "anatomy"]
    assert len(lines) == 1 and "planted fault" in lines[0].getMessage() and "\n" not in lines[0].getMessage()


def test_a_view_with_raw_html_renders_it_as_text_and_health_says_it_is_outside_the_manifest(
    client, tmp_path, monkeypatch
):
    """A view file from a folder ANATOMY_RESEARCH_VIEWS names is re-read without a restart and no checksum
    covers it: its Markdown's raw HTML is shown as text (a <meta http-equiv="refresh"> redirected the
    reader), links only over http(s) or to this site, and /healthz says the views come from outside."""
    import json
    import shutil

    from app.service import research_views
    from app.settings import settings

    assert client.get("/healthz").json()["research_views"] == "shipped"
    views = tmp_path / "views"
    shutil.copytree(research_views.DEFAULT, views)
    view = json.loads((views / "alignment.json").read_text())
    view["claim"] = (
        '<meta http-equiv="refresh" content="0;url=https://evil.example">\n\n'
        "Heads **align** <b>words</b>. [run](javascript:alert(1)) [paper](https://arxiv.org/abs/1706.03762)"
    )
    (views / "alignment.json").write_text(json.dumps(view))
    monkeypatch.setattr(settings, "research_views", views)
    html = figure_data(client, "research-alignment")["claim_html"]
    assert "<meta" not in html and "&lt;meta http-equiv" in html and "&lt;b&gt;words&lt;/b&gt;" in html
    assert "<strong>align</strong>" in html and "javascript:" not in html
    assert 'href="https://arxiv.org/abs/1706.03762"' in html
    page = client.get("/").text
    assert "&lt;meta http-equiv" in page and '<meta http-equiv="refresh"' not in page
    assert client.get("/healthz").json()["research_views"] == "outside the manifest"


@pytest.mark.parametrize(
    ("path", "to"), [("/static", "/static/"), ("/ledger/", "/ledger"), ("/api/trace/?input=4", "/api/trace?input=4")]
)
def test_a_redirect_names_only_the_path_whatever_host_was_asked(client, path, to):
    """Starlette writes its redirects from the Host header: `Host: evil.example` redirected to that site."""
    r = client.get(path, headers={"Host": "evil.example"}, follow_redirects=False)
    assert r.status_code == 307 and r.headers["location"] == to


def test_a_redirect_to_a_path_with_two_leading_slashes_stays_on_this_site():
    from app.serving.security import path_only

    assert path_only(b"http://evil.example//evil.example/x?a=1") == b"/evil.example/x?a=1"


def test_a_page_for_a_readers_address_is_made_off_the_event_loop_once_per_address(client, monkeypatch):
    """The article for a reader's address is rendered in a worker thread (it held every other client for
    20–95 ms on the event loop), once per address as it changes the page: a parameter the page does not read
    gives the page without parameters, and the same input again is the kept page (the same ETag)."""
    import threading

    from app.routes import pages

    made, real = [], pages.index_page

    def recording(*args, **kwargs):
        made.append((threading.get_ident(), args[2]))  # the thread, and the input's text
        return real(*args, **kwargs)

    monkeypatch.setattr(pages, "index_page", recording)
    monkeypatch.setattr(pages, "READER_PAGES", pages.ByteLRU(16 * 2**20))
    loop_thread = client.portal.call(lambda: threading.get_ident())
    plain = client.get("/")
    pages_for = [client.get("/", params=p) for p in ({"x": "1"}, {"x": "2", "utm": "y"}, {"input": "713"})]
    again = client.get("/", params={"input": "713", "x": "3"})
    assert [t for t, _ in made] and loop_thread not in [t for t, _ in made]
    assert [text for _, text in made] == ["42", "713"]  # two pages made for five addresses
    assert (
        pages_for[0].text == pages_for[1].text == plain.text and pages_for[0].headers["etag"] == plain.headers["etag"]
    )
    assert again.headers["etag"] == pages_for[2].headers["etag"] != plain.headers["etag"]
    assert 'value="713"' in again.text


def test_a_kept_page_follows_the_files_it_shows(client, tmp_path, monkeypatch):
    """Step 29's table gone while the app runs: the next page says so, though the page had been kept."""
    from app.routes import pages

    first = client.get("/", params={"input": "86"}).text
    gone = tmp_path / "part_ablation.json"
    monkeypatch.setattr(pages, "PART_ABLATION", gone)
    second = client.get("/", params={"input": "86"}).text
    assert first != second and "part_ablation.json" in second


def test_the_page_with_a_snapshot_and_the_snapshots_file_damaged_is_the_page(client, tmp_path, monkeypatch):
    """The page is served (its script then shows the API's message); the API answers 503 with the reason."""
    checkpoints = client.app.state.service.checkpoints
    damaged = tmp_path / "snapshots.safetensors"
    damaged.write_bytes(b"not a safetensors file")
    monkeypatch.setattr(checkpoints, "path", damaged)
    monkeypatch.setattr(checkpoints, "_loaded", {})
    page = client.get("/", params={"input": "5", "checkpoint": "25"})
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    api = client.get("/api/trace", params={"input": "5", "checkpoint": "25"})
    assert api.status_code == 503 and "snapshots" in api.json()["detail"]["message"]
    assert str(tmp_path) not in api.text
