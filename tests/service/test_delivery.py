"""Compact delivery (app/serving/delivery.py): compressed responses decode to the very bytes sent uncompressed,
the NDJSON stream stays incremental when compressed, the safetensors weights are the JSON weights, the
trace's numbers are float32 written at their shortest and read back exactly, and without its browser
libraries the app refuses to start with one line."""

from __future__ import annotations

import gzip
import math
import re
import threading
import zlib
from concurrent.futures import ThreadPoolExecutor

import anyio
import brotli
import numpy as np
import orjson
import pytest
import zstandard
from safetensors.numpy import load

from app.serving import delivery
from app.serving.serialize import dumps
from recorder import trace

DECODE = {
    "gzip": gzip.decompress,
    "br": brotli.decompress,
    "zstd": lambda b: zstandard.ZstdDecompressor().decompressobj().decompress(b),
}
PATHS = [
    "/?input=42",
    "/api/model",
    "/api/weights",
    "/api/trace?input=777777",
    "/api/trace/stream?input=42",
    "/vendor/three/build/three.core.js",
    "/vendor/katex/katex.min.css",
    "/static/stage/data.js",
    "/about",
]
OCTET = {"Accept": "application/octet-stream"}


@pytest.fixture(scope="module")
def svc(client):
    return client.app.state.service


def raw(client, path: str, **headers) -> tuple[dict, bytes]:
    """The response's headers and its bytes exactly as sent (not decoded)."""
    with client.stream("GET", path, headers=headers) as r:
        assert r.status_code == 200, (path, r.status_code)
        return dict(r.headers), b"".join(r.iter_raw())


# ---- compression ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("coding", ["gzip", "br", "zstd"])
@pytest.mark.parametrize("path", PATHS)
def test_compressed_responses_decode_to_the_identity_bytes(client, path, coding):
    plain_headers, plain = raw(client, path, **{"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain_headers
    headers, sent = raw(client, path, **{"Accept-Encoding": coding})
    # a trace's JSON is sent precompressed with Brotli to any client that accepts br
    assert headers["content-encoding"] == coding
    assert "accept-encoding" in headers["vary"].lower()
    assert len(sent) < len(plain) / 2, (path, coding, len(sent), len(plain))
    assert DECODE[coding](sent) == plain


def test_binary_and_small_responses_are_sent_as_they_are(client):
    headers, _ = raw(client, "/api/weights", **OCTET, **{"Accept-Encoding": "gzip, br, zstd"})
    assert "content-encoding" not in headers  # float32 noise: compression would save about 1 %
    headers, _ = raw(client, "/healthz", **{"Accept-Encoding": "gzip, br, zstd"})
    assert "content-encoding" not in headers  # below the 1 KiB threshold


def test_the_longest_trace_is_precompressed_under_200_kb(client):
    browser = {"Accept-Encoding": "gzip, deflate, br, zstd"}
    plain = raw(client, "/api/trace?input=777777", **{"Accept-Encoding": "identity"})[1]
    for path in ("/api/trace?input=777777", "/api/trace/stream?input=777777"):
        raw(client, path, **browser)  # the first asking queues the kept form
        delivery.precompressed_all()
        headers, sent = raw(client, path, **browser)
        assert headers["content-encoding"] == "br", path  # the kept form, made once
        assert len(sent) <= 200_000, (path, len(sent))
        assert raw(client, path, **browser)[1] == sent  # kept with the trace, not made again
    assert brotli.decompress(raw(client, "/api/trace?input=777777", **browser)[1]) == plain


def test_a_cold_request_does_not_wait_for_the_kept_compression(client):
    """The first request for a trace is compressed per request (a few ms); the kept Brotli form, which
    takes up to 0.9 s, is made in the background and serves the requests after it."""
    browser = {"Accept-Encoding": "gzip, deflate, br, zstd"}
    delivery.precompressed_all()
    first_headers, first = raw(client, "/api/trace?input=987654", **browser)
    assert first_headers["content-encoding"] == "zstd"  # the middleware's choice, per request
    delivery.precompressed_all()
    later_headers, later = raw(client, "/api/trace?input=987654", **browser)
    assert later_headers["content-encoding"] == "br" and len(later) < len(first)
    assert brotli.decompress(later) == DECODE["zstd"](first)


def test_the_background_queue_is_bounded_and_makes_each_form_once():
    made = []

    class Entry:
        def form(self):
            made.append(self)

    gate = threading.Event()
    delivery.precompressed_all()
    delivery.PRECOMPRESSOR.submit(gate.wait)  # hold the thread while the queue fills
    entries = [Entry() for _ in range(delivery.PRECOMPRESS_QUEUE + 5)]
    queued = [delivery.precompress_later(e.form) for e in entries]
    assert queued.count(True) == delivery.PRECOMPRESS_QUEUE and not any(queued[delivery.PRECOMPRESS_QUEUE :])
    assert not delivery.precompress_later(entries[0].form)  # already queued
    gate.set()
    delivery.precompressed_all()
    assert made == entries[: delivery.PRECOMPRESS_QUEUE]
    assert delivery.precompress_later(entries[-1].form)  # room again
    delivery.precompressed_all()


def test_accept_encoding_is_read_with_its_qualities():
    from starlette.requests import Request

    def req(value: str) -> Request:
        return Request({"type": "http", "headers": [(b"accept-encoding", value.encode())]})

    assert delivery.accepts(req("gzip, br"), "br")
    assert delivery.accepts(req("gzip;q=1, br;q=0.5"), "br")
    assert delivery.accepts(req("*"), "br")
    assert not delivery.accepts(req("br;q=0, gzip"), "br")
    assert not delivery.accepts(req("gzip, deflate"), "br")
    assert not delivery.accepts(req(""), "br")


def asgi_messages(app, path: str, query: str, headers: dict[str, str]) -> list[dict]:
    """Every message the app sends for one GET, in order (to see the writes, which an HTTP client merges)."""
    sent: list[dict] = []
    requested = False

    async def receive() -> dict:
        nonlocal requested
        if requested:  # the client stays connected: the response ends the call, not a disconnect
            await anyio.sleep_forever()
        requested = True
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
        "app": app,
    }
    # in a thread of its own: a browser test earlier in the session leaves Playwright's loop in this one
    with ThreadPoolExecutor(1) as pool:
        pool.submit(anyio.run, app, scope, receive, send).result()
    return sent


@pytest.mark.parametrize("coding", ["gzip", "br", "zstd"])
def test_the_compressed_ndjson_stream_arrives_line_by_line(client, coding):
    # the trace is cached first, so the direct call below finds it without the service's worker threads
    plain = client.get("/api/trace/stream", params={"input": "777777"}, headers={"Accept-Encoding": "identity"}).content
    messages = asgi_messages(client.app, "/api/trace/stream", "input=777777", {"Accept-Encoding": coding})
    start = dict(messages[0]["headers"])
    assert start[b"content-encoding"] == coding.encode() and b"content-length" not in start
    bodies = [m["body"] for m in messages[1:] if m.get("body")]
    assert len(bodies) >= 5  # one compressed write per ~64 KiB of lines, not one at the end
    decode = incremental(coding)
    out = b""
    for i, body in enumerate(bodies[:-1]):
        out += decode(body)
        assert out.endswith(b"\n"), f"write {i} does not decode to whole lines on its own"
        if i == 0:
            assert orjson.loads(out.split(b"\n")[0])["node_count"] > 200  # the header, at once
    out += decode(bodies[-1])
    assert out == plain


def incremental(coding: str):
    """A function that decodes the next piece of one compressed stream: all the output it allows."""
    if coding == "br":
        d = brotli.Decompressor()

        def feed(data: bytes) -> bytes:
            out = more = d.process(data)
            while more:  # it hands out about 32 KiB a call
                out += (more := d.process(b""))
            return out

        return feed
    d = zlib.decompressobj(31) if coding == "gzip" else zstandard.ZstdDecompressor().decompressobj()
    return d.decompress


# ---- weights as safetensors ---------------------------------------------------------------------------


def test_the_safetensors_weights_are_the_json_weights(client, svc):
    doc = client.get("/api/weights").json()
    r = client.get("/api/weights", headers=OCTET)
    assert r.headers["content-type"] == "application/octet-stream"
    tensors = load(r.content)
    assert sorted(tensors) == sorted(p["id"] for p in doc["parameters"])
    for p in doc["parameters"]:
        t = tensors[p["id"]]
        assert t.dtype == np.float32 and list(t.shape) == p["shape"]
        from_json = np.array(p["data"], dtype=np.float64)
        assert np.array_equal(from_json.astype(np.float32), t.ravel())  # the same float32s
        assert np.array_equal(t, svc.params[p["id"]])  # the model's own
        # and the JSON's decimal is float32's shortest: what the page's parser rebuilds from the bits
        assert all(float(str(x)) == y for x, y in zip(t.ravel()[:200], from_json[:200]))
    assert sum(t.size for t in tensors.values()) == 61_472
    header_len = int.from_bytes(r.content[:8], "little")
    meta = orjson.loads(r.content[8 : 8 + header_len])["__metadata__"]
    assert meta["weights_version"] == doc["weights_version"]
    assert meta["order"].split(",") == [p["id"] for p in doc["parameters"]]
    assert len(r.content) < len(client.get("/api/weights").content) / 2.5


def test_the_safetensors_weights_revalidate_with_their_own_etag(client, svc):
    r = client.get("/api/weights", headers=OCTET)
    etag = r.headers["etag"]
    assert svc.version in etag and etag != client.get("/api/weights").headers["etag"]
    assert "accept" in r.headers["vary"].lower()
    again = client.get("/api/weights", headers={**OCTET, "If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""


# ---- the trace's numbers ------------------------------------------------------------------------------


@pytest.mark.parametrize("number", [42, 777777])
def test_trace_values_are_float32_at_their_shortest_and_round_trip_exactly(svc, number):
    """Each node as the service writes it (CachedTrace.build serialises each node with `dumps`), read
    back: every value is the very float32 the model produced, in float32's shortest digits. (Compared
    with a trace computed here rather than the served one: torch may round the last bit differently
    in the service's worker threads.)"""
    nodes = trace(svc.translator.model, number, svc.params, svc.version).nodes
    checked = 0
    for node in nodes:
        if node.value.dtype != np.float32:
            continue
        values = node.value.ravel()
        written = orjson.loads(dumps(node.to_json()))
        got = written["data"]
        assert written["dtype"] == "float32" and len(got) == values.size
        for v, g in zip(values, got):
            if g is None:  # −∞: a masked score
                assert v == -math.inf
                continue
            assert np.float32(g) == v, (node.id, g, v)  # reads back to the very float32 the model produced
            assert g == float(str(v)), (node.id, g, str(v))  # written with float32's shortest digits
            checked += 1
    assert checked > 10_000


def test_the_served_trace_is_written_with_the_same_serialiser(client, svc):
    body = client.get("/api/trace", params={"input": "42"}).content
    entry = svc.trace_sync(42)
    first = entry.spans[0]
    assert body == entry.body and body[first[0] : first[1]].startswith(b'{"id":')
    node = orjson.loads(body[first[0] : first[1]])
    assert node["dtype"] == "float32" or node["dtype"].startswith("int")


# ---- the browser libraries ----------------------------------------------------------------------------


def test_the_start_up_check_lists_every_library_file_the_pages_load(client):
    from app import main

    loaded = set()
    for path in ("/", "/about", "/ledger", "/docs"):
        loaded |= set(re.findall(r"/vendor/[\w./-]+\.(?:js|css)", client.get(path).text))
    listed = {f"/vendor/{name}/{f}" for name, (_, files) in delivery.VENDOR.items() for f in files}
    assert loaded <= listed, loaded - listed
    # three.core.js is imported by three.module.js; Chart.js is added by static/js/charts.js at the first chart
    assert listed - loaded == {"/vendor/three/build/three.core.js", "/vendor/chartjs/chart.umd.min.js"}
    module = (main.NODE_MODULES / "three/build/three.module.js").read_text(encoding="utf-8")
    assert "from './three.core.js'" in module
    assert '"/vendor/chartjs/chart.umd.min.js"' in (main.ROOT / "static/js/charts.js").read_text(encoding="utf-8")


def test_without_its_browser_libraries_the_app_refuses_to_start(tmp_path, monkeypatch, capsys):
    from app import main

    assert delivery.missing_vendor_files(main.NODE_MODULES) == []
    monkeypatch.setattr(main, "NODE_MODULES", tmp_path)
    with pytest.raises(SystemExit) as stopped:
        main.create_app()
    assert stopped.value.code == delivery.STARTUP_FAILURE  # uvicorn --workers and gunicorn stop, not respawn
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "npm ci" in lines[0] and "three/build/three.module.js" in lines[0]
    (tmp_path / "three" / "build").mkdir(parents=True)
    (tmp_path / "three" / "build" / "three.module.js").write_text("")
    assert "three/build/three.module.js" not in delivery.missing_vendor_files(tmp_path)


PAGE_PARSE = """async () => {
  const { fetchWeights, parseWeights } = await import('/static/stage/data.js');
  const binary = await fetchWeights();
  const json = parseWeights(await (await fetch('/api/weights')).json());
  let values = 0, differ = [];
  for (const [id, t] of json) {
    const b = binary.get(id);
    if (!b || b.shape.join() !== t.shape.join() || b.data.length !== t.data.length) { differ.push(id); continue; }
    for (let i = 0; i < t.data.length; i++, values++) if (!Object.is(b.data[i], t.data[i])) differ.push(`${id}[${i}]`);
  }
  return { values, differ: differ.slice(0, 5), ids: [...binary.keys()].join() === [...json.keys()].join() };
}"""


def test_the_page_reads_the_safetensors_weights_as_the_json_weights(browser, live_server):
    """Every one of the 61 472 numbers the stage holds is the same float64 by either route: the float32 the
    safetensors hold, which the JSON's shortest decimal reads back as (not the decimal itself), so a cell is
    inspected, explained and exported from the same float32s the server computed with."""
    ctx = browser.new_context()
    try:
        page = ctx.new_page()
        page.goto(f"{live_server}/about")
        got = page.evaluate(PAGE_PARSE)
    finally:
        ctx.close()
    assert got == {"values": 61_472, "differ": [], "ids": True}
