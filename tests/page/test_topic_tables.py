"""The go-deeper pages' per-input tables (static/compute/topic_tables.js), under Node, for 20 inputs of both
models, each checked against numbers recomputed here with numpy from the trace the API sends (the model's
own tensors): the tokens' ids, the worked attention row's weights from its query and keys, the decoder's
mask, the least certain row's top logits at each temperature, each position's loss. Today's recipe has no
sinusoids, no post-LN and no tied output: its pages have no such tables, rather than wrong ones.

(Before article/deeper_trace.py was deleted, these tables were checked equal to its, on 21 inputs of both
models: 224 tables, every string exactly and every number to 1e-5; this keeps them checked without it.)"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from model.vocab import VOCAB
from tests.deeper_pages import softmax
from tests.in_page import node_script

INPUTS = {
    "2017": (0, 7, 12, 21, 42, 80, 305, 1000, 100_000, 555_555, 731_015, 999_999),
    "modern": (4, 42, 50, 305, 7000, 731_015, 888_888, 999_999),
}
pytestmark = pytest.mark.node


@pytest.fixture(scope="module")
def cases(client, tmp_path_factory) -> list[dict]:
    folder = tmp_path_factory.mktemp("topic-tables")
    for model in INPUTS:
        (folder / f"recipe-{model}.json").write_bytes(client.get("/api/live", params={"model": model}).content)
    rows = [
        {
            "name": f"{model}:{n}",
            "model": model,
            "trace": client.get("/api/trace", params={"input": n, "model": model}).json(),
        }
        for model, numbers in INPUTS.items()
        for n in numbers
    ]
    (folder / "cases.json").write_text(json.dumps(rows))
    tables = node_script("topic_tables.mjs", folder, timeout=300)
    return [{**c, "tables": {slug: {t["id"]: t for t in ts} for slug, ts in tables[c["name"]].items()}} for c in rows]


def values(trace: dict, node_id: str) -> np.ndarray:
    node = next(x for x in trace["nodes"] if x["id"] == node_id)
    data = [-np.inf if v is None else v for v in node["data"]]
    return np.array(data, np.float32).astype(np.float64).reshape(node["shape"])


def close(a, b) -> bool:
    return math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-7)


def test_the_tokens_ids_are_the_vocabularys(cases):
    for c in cases:
        t = c["trace"]
        rows = c["tables"]["tokenisation"]["tokens"]["rows"]
        assert [r[1:] for r in rows] == [[tok, VOCAB.ids([tok])[0]] for tok in t["source_tokens"] + t["target_tokens"]]


def test_the_worked_rows_weights_are_the_softmax_of_its_query_and_keys(cases):
    for c in cases:
        t, fig = c["trace"], c["tables"]["attention"]["attention-row"]
        h, row = (int(x) for x in re.search(r"head (\d+).*\(row (\d+)\)", fig["title"]).groups())
        row -= 1  # the title counts from 1
        q, k = values(t, f"enc.0.self.q.h{h - 1}"), values(t, f"enc.0.self.k.h{h - 1}")
        dots = q[row] @ k.T
        want = softmax(dots / math.sqrt(q.shape[1]))
        got = [r[3] for r in fig["rows"][:-1]]
        assert all(close(a, b) for a, b in zip(got, want, strict=True)), c["name"]
        assert all(close(r[1], d) for r, d in zip(fig["rows"], dots, strict=False)) and close(fig["rows"][-1][3], 1)
        assert values(t, f"enc.0.self.h{h - 1}.weights")[row].max() == pytest.approx(max(got), rel=1e-6)


def test_the_mask_hides_every_later_position_and_each_row_sums_to_one(cases):
    for c in cases:
        rows = c["tables"]["causal-masking"]["decoder-mask"]["rows"]
        for i, r in enumerate(rows):
            cells = r[1:-1]
            assert all((x == "masked") == (j > i) for j, x in enumerate(cells)), c["name"]
            assert close(r[-1], 1.0)


def test_the_least_certain_rows_logits_at_each_temperature(cases):
    for c in cases:
        t, fig = c["trace"], c["tables"]["softmax-and-logits"]["temperatures"]
        z = values(t, "out.logits")
        row = int(values(t, "out.probs").max(-1).argmin())
        assert fig["title"].startswith(f"Decoder row {row + 1} ")
        top = np.argsort(-z[row], kind="stable")[:5]
        want = [[VOCAB.tokens[k], z[row, k], *(softmax(z[row] / temp)[k] for temp in (0.5, 1, 2))] for k in top]
        for got, w in zip(fig["rows"], want, strict=True):
            assert got[0] == w[0] and all(close(a, b) for a, b in zip(got[1:], w[1:], strict=True)), c["name"]


def test_each_positions_loss_is_minus_log_p_of_the_reference(cases):
    for c in cases:
        t, rows = c["trace"], c["tables"]["cross-entropy"]["position-losses"]["rows"]
        p = values(t, "out.probs")
        for i, r in enumerate(rows[:-1]):
            if r[2] != "–":
                y = VOCAB.ids([r[2]])[0]
                assert close(r[3], p[i, y]) and close(r[4], -math.log(p[i, y])), c["name"]
        v, eps = len(VOCAB), 0.1  # label smoothing's ε (paper §5.4)
        q = np.full(v, eps / v)
        q[0] += 1 - eps
        assert close(rows[-1][-1], -(q * np.log(q)).sum())


def test_todays_recipe_has_no_sinusoid_layernorm_or_tied_table(cases):
    for c in cases:
        tables = c["tables"]
        absent = (
            not tables["embeddings-and-tying"]
            and not tables["positional-encoding"]
            and not tables["layernorm-and-residuals"]
        )
        assert absent == (c["model"] == "modern"), c["name"]
