"""The page's one NDJSON reader (static/js/api.js), run in Node against a real server: it
rebuilds the trace /api/trace sends, calls back per header and node, and passes on a refusal."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.node

READ = """
import { fetchJson, readTraceStream } from './static/js/api.js';
import { formProblems } from './tests/page_form.mjs';
const [url, jsonUrl] = process.argv.slice(1);
let headers = 0, nodes = 0, count = null, order = true, typed = true;
try {
  const trace = await readTraceStream(url, {
    onHeader: (h) => { headers++; count = h.node_count; },
    onNode: (n, i) => {
      order &&= i === nodes;
      typed &&= n.dtype !== 'float32' || n.data instanceof Float32Array;
      nodes++;
    },
  });
  const problems = jsonUrl ? formProblems(trace, await fetchJson(jsonUrl)).slice(0, 5) : null;
  console.log(JSON.stringify({ problems, headers, nodes, count, order, typed, length: trace.nodes.length }));
} catch (err) {
  console.log(JSON.stringify({ error: err.message, status: err.status ?? null }));
}
"""


def read(url: str, json_url: str = "") -> dict:
    out = subprocess.run(
        ["node", "--input-type=module", "-e", READ, url, json_url],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    return json.loads(out)


@pytest.mark.parametrize("number", ["42", "731015"])
def test_the_reader_rebuilds_the_trace_in_the_pages_form_and_calls_back_per_line(live_server, number):
    """The trace /api/trace sends, each float32 node as the compact decoder gives it (a Float32Array of the
    JSON's float32s, −∞ for null: tests/page_form.mjs), the callbacks seeing the nodes in that form."""
    got = read(f"{live_server}/api/trace/stream?input={number}", f"{live_server}/api/trace?input={number}")
    assert got["problems"] == []
    assert got["headers"] == 1 and got["order"] and got["typed"]
    assert got["nodes"] == got["count"] == got["length"] > 200


def test_the_reader_passes_on_the_servers_refusal(live_server):
    got = read(f"{live_server}/api/trace/stream?input=minus%20one")
    assert got["status"] == 422 and "accepted" in got["error"].lower()


def test_the_page_has_one_ndjson_reader():
    scripts = {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in (ROOT / "static").rglob("*.js")}
    readers = [name for name, text in scripts.items() if "x-ndjson" in text]
    assert readers == ["static/js/api.js"], readers
