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
import { store, pageView, shownTrace, stepInView, snapshot } from "./static/js/store.js";
const s = store(1), heard = [];
const stop = s.subscribe((v) => heard.push(["a", v]));
s.subscribe((v) => heard.push(["b", v]));
s.set(2); s.set(2); stop(); s.set(3);
const followed = [];
s.follow((v) => followed.push(v)); s.set(4);
const empty = store(null), none = [];
empty.follow((v) => none.push(v));
const view = pageView(), trace = { input: { number: 42 }, ablation: ["enc.1.ffn"] };
const before = [view.trace, view.ready, view.ablation, view.step];
shownTrace.set(trace); stepInView.set({ step: 7 }); snapshot.set("50");
const refused = ["trace", "step", "checkpoint", "ready", "ablation"].filter((name) => {
  try { view[name] = null; return false; } catch { return true; }
});
console.log(JSON.stringify({ got: s.get(), heard, followed, none, before, same: view.trace === trace,
  after: [view.ready, view.ablation, view.step, view.checkpoint], refused }));
"""


def test_the_page_state_is_stores_that_the_page_and_the_stage_follow():
    """static/js/store.js: get, set (every listener told, in order, each time), subscribe (→ unsubscribe), follow
    (the value held now, unless null, then every later one); window.anatomy's fields are read-only views of the
    stores (ready and ablation the trace's own); the stage reads the trace from the store only."""
    run = subprocess.run(
        ["node", "--input-type=module", "-e", STORE_CHECK], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == {
        "got": 4,
        "heard": [["a", 2], ["b", 2], ["a", 2], ["b", 2], ["b", 3], ["b", 4]],
        "followed": [3, 4],
        "none": [],
        "before": [None, False, [], None],
        "same": True,
        "after": [True, ["enc.1.ffn"], 7, "50"],
        "refused": ["trace", "step", "checkpoint", "ready", "ablation"],
    }
    for path in sorted((STATIC / "stage").glob("*.js")):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"anatomy\??\.(trace|step|compareTrace|cellDetail|checkpoint)\b", text), path.name
    assert "shownTrace.subscribe" in (STATIC / "stage" / "main.js").read_text(encoding="utf-8")


# what the page holds travels through the stores only: no DOM event carries it, and no module writes a field of
# window.anatomy but the page's functions
STATE_WRITE = re.compile(r"\banatomy\.(\w+)\s*=(?!=)")
FUNCTIONS = {"goTo", "setCheckpoint", "ablate", "compareWith", "exercises", "handout", "present", "embedCode"}
FUNCTIONS |= {"keepForOffline"}


def state_travel(root):
    """(file, what) for each page event dispatched and each value written to window.anatomy under `root`."""
    found = []
    for path in sorted(root.rglob("*.js")):
        if "bundle" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(root).as_posix()
        found += [(name, e) for e in re.findall(r"new CustomEvent\(\s*[\"'`](anatomy:[\w-]+)", text)]
        found += [(name, f"anatomy.{w}") for w in STATE_WRITE.findall(text) if w not in FUNCTIONS]
    return found


def test_no_page_state_travels_by_event_or_global():
    assert state_travel(STATIC) == []


def test_a_planted_event_and_a_planted_write_are_found(tmp_path):
    (tmp_path / "one.js").write_text(
        'document.dispatchEvent(new CustomEvent("anatomy:step", { detail }));\n'
        "anatomy.step = 3;\nanatomy.goTo = (n) => n;\nif (anatomy.step == 3) go();\n"
    )
    assert state_travel(tmp_path) == [("one.js", "anatomy:step"), ("one.js", "anatomy.step")]
