"""What the API sends for a trace, and what the page computes from it, is pinned: the restructurings moved
the code that records, lays out and serves it, and must not have changed one node, one live figure or one
block of the scene. Since the page computes the live figures and the scene itself (static/compute/
page_parts.js), those are the page's, computed from the served trace, against the figures and scene the
server computed when they were pinned.

The fingerprints in tests/golden/traces.json.gz were taken from the code before the move (see
tests/golden/fingerprint.py): 12 inputs of the 2017 model, 6 of the modern model, 3 ablated and 4
snapshot traces."""

from __future__ import annotations

import math

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
    return {
        case_key(*c): {
            **client.get("/api/trace?" + case_query(*c)).json(),
            "derived": p["derived"],
            "scene": p["scene"],
        }
        for c, p in zip(CASES, parts, strict=True)
    }


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


def moved(now: list, then: list) -> bool:
    """A node's values moved beyond float32's noise: each element may differ by 1e-5 of the tensor's largest
    magnitude (another CPU's kernels, another thread count), so each moment by what n such differences can
    add up to (n·d for the sum, 2·n·d·scale for the squares, n²·d for the index-weighted sum, d for the
    extremes); the count of −∞ exactly. A real change moves a moment far past these."""
    if now[6] == then[6]:
        return False
    n, scale = max(1, math.prod(now[4])), max(abs(then[7][3]), abs(then[7][4]), 1e-30)
    d = 1e-5 * scale
    return any(abs(a - b) > t for a, b, t in zip(now[7], then[7], (n * d, 2 * n * d * scale, n * n * d, d, d, 0)))


@pytest.mark.parametrize("case", CASES, ids=[case_key(*c) for c in CASES])
def test_the_pinned_trace_and_what_the_page_computes_from_it(computed, case):
    now, then = fingerprint(computed[case_key(*case)]), GOLDEN[case_key(*case)]
    assert [n[:6] for n in now["nodes"]] == [n[:6] for n in then["nodes"]], "the graph's structure moved"
    values = [n[0] for n, o in zip(now["nodes"], then["nodes"], strict=True) if moved(n, o)]
    assert not values, f"values moved in {values[:10]}"
    assert same_figures(now["derived"], then["derived"]) == [], "the article's live figures moved"
    assert now["header"] == then["header"], "the trace's header moved"
    assert now["scene_blocks"] == then["scene_blocks"], "a block of the scene moved"
    assert now["scene"] == then["scene"], "the scene moved"
