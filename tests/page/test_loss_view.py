"""Step 20's loss, as the page computes it for the stage (static/compute/loss.js): recomputed here from the trace's
own probabilities with numpy (the smoothed target written out) and with PyTorch's
`cross_entropy(label_smoothing=ε)`, the loss training uses (model/train.py), for inputs whose greedy
output is the reference and for a snapshot early in training whose output leaves it."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from model.train import ARTIFACTS
from model.vocab import VOCAB
from tests.in_page import PageRequest, page_parts
from tests.onnx_numpy import as_array

CASES = [(PageRequest("305"), True), (PageRequest("777777"), True), (PageRequest("305", checkpoint=100), False)]
LOG = json.loads((Path(ARTIFACTS) / "training_log.json").read_text())
EPSILON = LOG["train_config"]["label_smoothing"]  # what training smoothed with, read here independently


@pytest.fixture(scope="module")
def traces(client):
    shown = page_parts(client, [r for r, _ in CASES])
    return [({**p["trace"], "derived": p["derived"]}, agrees) for p, (_, agrees) in zip(shown, CASES, strict=True)]


def test_the_recipe_smooths_with_the_logged_epsilon(client):
    assert client.get("/api/live").json()["constants"]["label_smoothing"] == EPSILON == 0.1  # the prose's ε


@pytest.mark.parametrize("case", range(len(CASES)))
def test_each_row_s_smoothed_loss_is_recomputed_from_the_trace(traces, case):
    t, agrees = traces[case]
    d, probs = t["derived"], as_array(next(n for n in t["nodes"] if n["id"] == "out.probs")).astype(np.float64)
    reference, out = VOCAB.target_tokens(t["input"]["number"]), t["output_tokens"]
    V = probs.shape[1]
    assert (out == reference) == agrees
    forced = [r for r in range(len(out)) if r < len(reference) and out[:r] == reference[:r]]
    assert [x["row"] for x in d["loss_rows"] if x["forced"]] == forced
    assert agrees or len(forced) < len(out)  # the snapshot's rows after the departure carry no loss
    for r in forced:
        x, y = d["loss_rows"][r], VOCAB.ids([reference[r]])[0]
        q = np.full(V, EPSILON / V)
        q[y] = 1 - EPSILON + EPSILON / V
        assert x["reference"] == reference[r] and x["reference_id"] == y
        assert x["loss"] == pytest.approx(-(q * np.log(probs[r])).sum(), rel=1e-12)
        assert x["plain_loss"] == pytest.approx(-np.log(probs[r, y]), rel=1e-12)
    assert d["loss_q_reference"] == pytest.approx(1 - EPSILON + EPSILON / V)
    assert d["loss_q_other"] == pytest.approx(EPSILON / V)
    q = np.full(V, EPSILON / V)
    q[0] += 1 - EPSILON
    assert d["loss_floor"] == pytest.approx(-(q * np.log(q)).sum(), rel=1e-12)  # H(q): no row goes under it
    assert all(x["loss"] >= d["loss_floor"] for x in d["loss_rows"] if x["forced"])
    # PyTorch's label-smoothed cross-entropy on log p (log_softmax of log p is log p) gives the same mean
    logp = torch.tensor(np.log(probs[forced]))
    want = F.cross_entropy(logp, torch.tensor([VOCAB.ids([reference[r]])[0] for r in forced]), label_smoothing=EPSILON)
    # (log_softmax renormalises p, which sums to 1 only to float32 precision)
    assert d["loss_mean"] == pytest.approx(float(want), rel=1e-6)
    assert d["loss_sum"] == pytest.approx(float(want) * len(forced), rel=1e-6)
    assert ("are training rows" in d["loss_departs"]) == agrees and d["loss_departs"]
