"""The page's JavaScript has no import circle: the graph esbuild resolves over static/ (tests/js_imports.mjs,
dynamic imports included) is acyclic. A circle between two modules is a design question (move the shared
piece below both), not an import trick; the probe plants one to show the check can fail."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "static"


def import_graph(folder: Path) -> dict[str, list[str]]:
    if shutil.which("node") is None or not (ROOT / "node_modules" / "esbuild").is_dir():
        pytest.fail("node and the devDependencies are needed: run `bash scripts/setup.sh`")
    run = subprocess.run(
        ["node", str(ROOT / "tests" / "js_imports.mjs"), str(folder)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout)


def circles(graph: dict[str, list[str]]) -> list[list[str]]:
    """Every strongly connected part of more than one module, or of one that imports itself (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, []):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = stack[stack.index(v) :]
            del stack[stack.index(v) :]
            if len(part) > 1 or v in graph.get(v, []):
                found.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_graph_covers_every_room():
    graph = import_graph(STATIC)
    for room in ("engine", "compute", "stage", "js", "js/page"):
        assert any(p.startswith(room + "/") for p in graph), f"no module of static/{room}/ in the graph"
    assert "compute/trace.js" in graph["js/api.js"], "the dynamic import of the computation is an edge"


def test_no_import_circle_in_the_page_code():
    graph = import_graph(STATIC)
    found = circles(graph)
    assert not found, "import circles (move the shared piece below both): " + "; ".join(" → ".join(c) for c in found)


def test_a_planted_circle_is_found(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.js").write_text('import { two } from "../b/two.js";\nexport const one = () => two;\n')
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "two.js").write_text('export const two = () => import("../a/one.js");\n')
    (tmp_path / "b" / "three.js").write_text('import "./two.js";\n')
    assert circles(import_graph(tmp_path)) == [["a/one.js", "b/two.js"]]


STORE_CHECK = """
import { store, withShownTrace, shownTrace } from "./static/js/store.js";
const s = store(1), heard = [];
const stop = s.subscribe((v) => heard.push(["a", v]));
s.subscribe((v) => heard.push(["b", v]));
s.set(2); s.set(2); stop(); s.set(3);
const view = withShownTrace({ step: 4 }), trace = { input: { number: 42 } };
shownTrace.set(trace);
let refused = false;
try { view.trace = null; } catch { refused = true; }
console.log(JSON.stringify({ got: s.get(), heard, same: view.trace === trace, refused, keys: Object.keys(view) }));
"""


def test_the_trace_on_show_is_one_store_that_the_stage_follows():
    """static/js/store.js: get, set (every listener told, in order, each time), subscribe (→ unsubscribe);
    window.anatomy.trace is a read-only view of shownTrace; the stage reads the trace from the store only."""
    run = subprocess.run(
        ["node", "--input-type=module", "-e", STORE_CHECK], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == {
        "got": 3,
        "heard": [["a", 2], ["b", 2], ["a", 2], ["b", 2], ["b", 3]],
        "same": True,
        "refused": True,
        "keys": ["step", "trace"],
    }
    for path in sorted((STATIC / "stage").glob("*.js")):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"anatomy\??\.trace\b|early\??\.trace\b|'anatomy:trace'", text), path.name
    assert "shownTrace.subscribe" in (STATIC / "stage" / "main.js").read_text(encoding="utf-8")
