"""What the API sends for a trace is pinned: the restructuring (issue 20) moved the code that records,
lays out and serves it, and must not have changed one node, one live figure or one block of the scene.

The fingerprints in tests/golden/traces.json.gz were taken from the code before the move (see
tests/golden/fingerprint.py): 12 inputs of the 2017 model, 6 of the modern model, 3 ablated and 4
snapshot traces."""

from __future__ import annotations

import numpy as np
import pytest

from tests.golden.fingerprint import CASES, case_key, case_query, fingerprint, load

GOLDEN = load()


@pytest.mark.parametrize("case", CASES, ids=[case_key(*c) for c in CASES])
def test_the_api_sends_the_pinned_trace_node_for_node(client, case):
    r = client.get("/api/trace?" + case_query(*case))
    assert r.status_code == 200, r.text
    now, then = fingerprint(r.json()), GOLDEN[case_key(*case)]
    assert [n[:6] for n in now["nodes"]] == [n[:6] for n in then["nodes"]], "the graph's structure moved"
    moved = [n[0] for n, o in zip(now["nodes"], then["nodes"], strict=True)
             if n[6] != o[6] and not np.allclose(n[7], o[7], rtol=1e-6, atol=1e-6)]
    assert not moved, f"values moved in {moved[:10]}"
    assert now["derived"] == then["derived"], "the article's live figures moved"
    assert now["header"] == then["header"], "the trace's header moved"
    assert now["scene_blocks"] == then["scene_blocks"], "a block of the scene moved"
    assert now["scene"] == then["scene"], "the scene moved"
