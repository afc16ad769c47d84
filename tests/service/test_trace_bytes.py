"""A trace's compact form (app/serving/trace_bytes.py) against its JSON form: the same trace, read back in Python and by
the page's own decoder (static/js/compact.js through static/js/api.js, run in Node against a real server: each
float32 node a Float32Array of the very float32s the JSON's digits stand for), for several inputs, ablations,
both models and a training snapshot; refusals stay JSON; and the JSON body and NDJSON lines made from the
compact form are byte for byte what serialising each node gives."""

from __future__ import annotations

import json
import math
import struct
import subprocess
from pathlib import Path

import numpy as np
import orjson
import pytest

from app.documents.schemas import ServedTraceHeader, TraceStreamHeader, weights_url
from app.serving.serialize import dumps
from app.serving.trace_bytes import COMPACT_FORMAT, CachedTrace
from recorder import trace

ROOT = Path(__file__).resolve().parents[2]
COMPACT = {"Accept": "application/vnd.anatomy.trace"}
REQUESTS = [
    {"input": "42"},
    {"input": "777777"},
    {"input": "0"},
    {"input": "305", "ablate": "enc.0.ffn,dec.1.cross.h3"},
    {"input": "731015", "model": "modern"},
    {"input": "12", "checkpoint": "1000"},
]


@pytest.fixture(scope="module")
def svc(client):
    return client.app.state.service


def decode(body: bytes) -> dict:
    """The compact form read back in Python as the JSON form's document: float32 values as floats, −∞ as None."""
    (length,) = struct.unpack_from("<Q", body)
    header = orjson.loads(body[8 : 8 + length])
    assert header["format"] == COMPACT_FORMAT and (8 + length) % 8 == 0
    nodes = []
    for meta in header["nodes"]:
        if "data_offsets" in meta:
            start, end = meta.pop("data_offsets")
            values = np.frombuffer(body, "<f4", (end - start) // 4, 8 + length + start)
            meta["data"] = [None if not math.isfinite(v) else v for v in values.tolist()]
        nodes.append(meta)
    return {**header["head"], "nodes": nodes}


def same_values(compact: dict, doc: dict) -> None:
    """Node for node the same ids, ops, inputs, attrs, shapes and dtypes; values the very float32s (JSON writes
    their shortest digits: np.float32 of them is the float32 the compact form holds), −∞ both ways null."""
    assert {k: v for k, v in compact.items() if k != "nodes"} == {k: v for k, v in doc.items() if k != "nodes"}
    assert [n["id"] for n in compact["nodes"]] == [n["id"] for n in doc["nodes"]]
    for got, want in zip(compact["nodes"], doc["nodes"]):
        assert list(got) == list(want) and {k: got[k] for k in got if k != "data"} == {
            k: want[k] for k in want if k != "data"
        }
        if want["dtype"] != "float32":
            assert got["data"] == want["data"], got["id"]
            continue
        nulls = [v is None for v in want["data"]]
        assert [v is None for v in got["data"]] == nulls, got["id"]
        g = np.array([0 if v is None else v for v in got["data"]], np.float32)
        w = np.array([0 if v is None else v for v in want["data"]], np.float64).astype(np.float32)
        assert np.array_equal(g, w), got["id"]


@pytest.mark.parametrize("params", REQUESTS, ids=lambda p: "-".join(p.values()))
def test_the_compact_form_holds_the_json_forms_trace(client, params):
    doc = client.get("/api/trace", params=params)
    compact = client.get("/api/trace", params=params, headers=COMPACT)
    assert compact.status_code == doc.status_code == 200
    assert compact.headers["content-type"] == "application/vnd.anatomy.trace"
    assert "accept" in compact.headers["vary"].lower()
    assert len(compact.content) < (0.65 if len(params["input"]) == 6 else 0.9) * len(doc.content)
    same_values(decode(compact.content), doc.json())


def test_the_compact_form_is_compressed_and_revalidated(client):
    r = client.get("/api/trace", params={"input": "654321"}, headers={**COMPACT, "Accept-Encoding": "zstd"})
    assert r.headers["content-encoding"] == "zstd"  # httpx decodes it: the content is the form itself
    etag = r.headers["etag"]
    assert etag.endswith('.compact"') and etag != client.get("/api/trace", params={"input": "654321"}).headers["etag"]
    again = client.get("/api/trace", params={"input": "654321"}, headers={**COMPACT, "If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""


@pytest.mark.parametrize(
    "params",
    [
        {"input": "minus one"},
        {"input": "42", "ablate": "enc.9.ffn"},
        {"input": "42", "checkpoint": "17"},
        {"input": "42", "model": "gpt"},
    ],
)
def test_a_refused_compact_request_answers_json(client, params):
    r = client.get("/api/trace", params=params, headers=COMPACT)
    assert r.status_code == 422 and r.headers["content-type"] == "application/json"
    assert r.json()["detail"]["message"]


@pytest.mark.parametrize("number", [42, 731015])
def test_the_json_body_and_stream_lines_made_from_the_compact_form_are_byte_for_byte_the_old_ones(svc, number):
    model = svc.translator.model
    t = trace(model, number, svc.params, svc.version)
    header = ServedTraceHeader.of(t.header(), model=svc.name, checkpoint=None, weights_url=weights_url(svc.name, None))
    entry = CachedTrace.build(header, t.nodes)
    nodes = [dumps(n.to_json()) for n in t.nodes]
    assert entry.body == dumps(header)[:-1] + b',"nodes":[' + b",".join(nodes) + b"]}"
    assert list(entry.ndjson()) == [
        dumps(TraceStreamHeader.of(header, node_count=len(nodes))) + b"\n",
        *(n + b"\n" for n in nodes),
    ]


# ---- the page's own decoder, in Node -------------------------------------------------------------------

node = pytest.mark.node

READ = """
import { fetchCompactTrace, fetchJson } from './static/js/api.js';
import { formProblems } from './tests/page_form.mjs';
const [base, ...urls] = process.argv.slice(1);
const out = [];
for (const url of urls) {
  try {
    let header = null;
    const compact = await fetchCompactTrace(base + url, { onHeader: (h) => { header = h; } });
    const doc = await fetchJson(base + url);
    const float32 = compact.nodes.filter((n) => n.dtype === 'float32');
    out.push({ problems: formProblems(compact, doc).slice(0, 5), count: header?.node_count, nodes: doc.nodes.length,
               float32: float32.length, typed: float32.every((n) => n.data instanceof Float32Array),
               masked: float32.reduce((k, n) => k + n.data.filter((v) => v === -Infinity).length, 0),
               nulls: doc.nodes.reduce((k, n) => k + n.data.filter((v) => v === null).length, 0) });
  } catch (err) {
    out.push({ error: err.message, status: err.status ?? null });
  }
}
console.log(JSON.stringify(out));
"""


def node_read(base: str, urls: list[str]) -> list[dict]:
    run = subprocess.run(
        ["node", "--input-type=module", "-e", READ, base, *urls],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    )
    return json.loads(run.stdout)


@node
def test_the_pages_decoder_gives_the_json_forms_float32s_in_typed_arrays(live_server):
    """The header and every node's fields as JSON.parse gives them, keys in the same order; each float32 node's
    data a Float32Array whose every value is exactly Math.fround of the JSON's number, −∞ where the JSON has
    null (every masked score); integer and bool nodes the JSON's arrays; the header callback sees node_count;
    a refusal keeps the server's message and status."""
    from urllib.parse import urlencode

    urls = [f"/api/trace?{urlencode(p)}" for p in REQUESTS] + ["/api/trace?input=minus%20one"]
    *got, refused = node_read(live_server, urls)
    for params, g in zip(REQUESTS, got):
        assert g["problems"] == [], (params, g)
        assert g["count"] == g["nodes"] > 200 and g["float32"] > 150 and g["typed"]
        assert g["masked"] == g["nulls"] > 0, (params, g)
    assert refused["status"] == 422 and "accepted" in refused["error"].lower()


ALIGN = """
import { decodeCompactTrace } from './static/js/compact.js';
const [url] = process.argv.slice(1);
const body = await (await fetch(url, { headers: { Accept: 'application/vnd.anatomy.trace' } })).arrayBuffer();
const n = Number(new DataView(body).getBigUint64(0, true));
// one space more after the header's JSON: the data then start at an odd byte, where no Float32Array can view them
const padded = new Uint8Array(body.byteLength + 1);
padded.set(new Uint8Array(body, 0, 8 + n));
padded[8 + n] = 0x20;
padded.set(new Uint8Array(body, 8 + n), 9 + n);
new DataView(padded.buffer).setBigUint64(0, BigInt(n + 1), true);
const floats = (t) => t.nodes.filter((x) => x.dtype === 'float32');
const a = floats(decodeCompactTrace(body).trace), b = floats(decodeCompactTrace(padded.buffer).trace);
console.log(JSON.stringify({
  count: a.length,
  views: a.every((x) => x.data instanceof Float32Array && x.data.buffer === body),
  copies: b.every((x) => x.data instanceof Float32Array && x.data.buffer !== padded.buffer),
  same: a.length === b.length && a.every((x, i) => x.data.length === b[i].data.length
    && x.data.every((v, j) => Object.is(v, b[i].data[j]))),
  masked: b.some((x) => x.data.includes(-Infinity)),
}));
"""


@node
def test_the_decoder_views_aligned_float32s_and_copies_unaligned_ones(live_server):
    """A float32 node's data is a Float32Array over the body itself where its bytes are 4-byte aligned (the
    server aligns them), and a copy with the same values (−∞ kept) where they are not."""
    run = subprocess.run(
        ["node", "--input-type=module", "-e", ALIGN, f"{live_server}/api/trace?input=731015"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    got = json.loads(run.stdout)
    assert got == {"count": got["count"], "views": True, "copies": True, "same": True, "masked": True}
    assert got["count"] > 150


FLOATS = """
import { float32Decimal } from './static/js/format.js';
const bits = new Uint32Array(1), f = new Float32Array(bits.buffer);
let seed = 2017;
const next = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0);
const out = [];
const take = (x) => { f[0] = x; if (Number.isFinite(f[0])) out.push([bits[0], float32Decimal(f[0])]); };
for (let i = 0; i < 120000; i++) {
  // half any bit pattern, half the range a trace holds (|x| from 2^-40 to 2^12, either sign)
  bits[0] = i % 2 ? next() : ((next() & 0x807fffff) | ((87 + (next() % 52)) << 23)) >>> 0;
  take(f[0]);
}
// exact halves at 8 digits (-0.283203125: JSON writes -0.28320312), powers of two and of ten, the extremes
for (const x of [-0.283203125, 0.205078125, 62261.5625, 2907635.25, 1, 0.5, 0.1, 1e-7, 100, 1e10, 2 ** -20,
  3.4028234663852886e38, 1.401298464324817e-45, 1.1754943508222875e-38]) take(x);
console.log(JSON.stringify(out));
"""


@node
def test_float32_decimal_gives_the_json_forms_number_for_each_float32():
    """For any float32, float32Decimal (what the stage's CSV export writes a float32 value with) gives the
    double of the digits the JSON form writes (numpy's shortest float32 digits, which orjson's writer agrees
    with: an exact half to even), so a downloaded block shows the JSON's digits, not a float64 expansion."""
    run = subprocess.run(
        ["node", "--input-type=module", "-e", FLOATS], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True
    )
    got = json.loads(run.stdout)
    values = np.array([b for b, _ in got], np.uint32).view(np.float32)
    bad = [(str(v), d) for v, (_, d) in zip(values, got) if float(str(v)) != float(d)]
    assert len(got) > 110_000 and bad == []
    written = orjson.loads(orjson.dumps(values[-14:], option=orjson.OPT_SERIALIZE_NUMPY))  # as the JSON form writes
    assert written == [float(d) for _, d in got[-14:]] and written[0] == -0.28320312
