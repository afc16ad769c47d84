"""What the API sends for a trace, and what the page computes from it, is pinned: the restructurings moved
the code that records, lays out and serves it, and must not have changed one node, one live figure or one
block of the scene. Since the page computes the live figures and the scene itself (static/local/
page_parts.js), those are the page's, computed from the served trace, against the figures and scene the
server computed when they were pinned.

The fingerprints in tests/golden/traces.json.gz were taken from the code before the move (see
tests/golden/fingerprint.py): 12 inputs of the 2017 model, 6 of the modern model, 3 ablated and 4
snapshot traces."""

from __future__ import annotations

import numpy as np
import pytest

from tests.golden.fingerprint import CASES, case_key, case_query, fingerprint, load
from tests.in_page import PageRequest, page_parts

GOLDEN = load()


def _request(model: str, number: int, ablation: str, checkpoint: int | None) -> PageRequest:
    return PageRequest(str(number), model, ablation, checkpoint)


@pytest.fixture(scope="module")
def computed(client) -> dict[str, dict]:
    """Each case's trace as the page holds it: the served trace with the page's figures and scene."""
    parts = page_parts(client, [_request(*c) for c in CASES])
    return {case_key(*c): {**client.get("/api/trace?" + case_query(*c)).json(), "derived": p["derived"],
                           "scene": p["scene"]} for c, p in zip(CASES, parts, strict=True)}


def same_figures(now, then, path: str = "derived") -> list[str]:
    """Where the page's figures differ from the pinned ones: text exactly, numbers as close as the nodes
    they are read from (1e-5 of their size, or 1e-7: the served nodes may move by a last float32 bit with
    torch's thread count, and a figure reduces many of them)."""
    if isinstance(now, dict) and isinstance(then, dict):
        if now.keys() != then.keys():
            return [f"{path}: keys {sorted(now.keys() ^ then.keys())}"]
        return [d for k in then for d in same_figures(now[k], then[k], f"{path}.{k}")]
    if isinstance(now, list) and isinstance(then, list):
        if len(now) != len(then):
            return [f"{path}: {len(now)} items, pinned {len(then)}"]
        return [d for i, (a, b) in enumerate(zip(now, then)) for d in same_figures(a, b, f"{path}[{i}]")]
    if isinstance(then, float) and isinstance(now, (int, float)) and not isinstance(now, bool):
        return [] if abs(now - then) <= 1e-7 + 1e-5 * abs(then) else [f"{path}: {now} ≠ {then}"]
    return [] if now == then and type(now) is type(then) else [f"{path}: {now!r} ≠ {then!r}"]


@pytest.mark.parametrize("case", CASES, ids=[case_key(*c) for c in CASES])
def test_the_pinned_trace_and_what_the_page_computes_from_it(computed, case):
    now, then = fingerprint(computed[case_key(*case)]), GOLDEN[case_key(*case)]
    assert [n[:6] for n in now["nodes"]] == [n[:6] for n in then["nodes"]], "the graph's structure moved"
    moved = [n[0] for n, o in zip(now["nodes"], then["nodes"], strict=True)
             if n[6] != o[6] and not np.allclose(n[7], o[7], rtol=1e-6, atol=1e-6)]
    assert not moved, f"values moved in {moved[:10]}"
    assert same_figures(now["derived"], then["derived"]) == [], "the article's live figures moved"
    assert now["header"] == then["header"], "the trace's header moved"
    assert now["scene_blocks"] == then["scene_blocks"], "a block of the scene moved"
    assert now["scene"] == then["scene"], "the scene moved"
