"""Steps 18 and 20's yardsticks, each recomputed here from the recipe, the
vocabulary and the shipped training log, and checked against what the service sends and the page shows."""

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from article.format import format_number
from model.data import heldout_numbers, make_batch
from model.train import ARTIFACTS, smoothed_loss
from model.transformer import Config, EncoderDecoder
from model.vocab import VOCAB
from tests.in_page import page_parts
from tests.onnx_numpy import as_array

LOG = json.loads((Path(ARTIFACTS) / "training_log.json").read_text())
NUMBERS = (42, 7, 731_015)


@pytest.fixture(scope="module")
def shown(client) -> dict[int, dict]:
    """Each input's served trace with the figures the page computes for it."""
    return dict(zip(NUMBERS, page_parts(client, [str(x) for x in NUMBERS]), strict=True))


def test_the_ceiling_and_the_uniform_loss_are_recomputed_from_the_recipe_and_the_log(client):
    figures = client.get("/api/model").json()["figures"]
    eps, v = LOG["train_config"]["label_smoothing"], len(VOCAB)
    assert figures["label_smoothing_eps"] == eps == 0.1
    assert figures["smoothing_ceiling"] == pytest.approx(1 - eps + eps / v)
    assert round(figures["smoothing_ceiling"], 4) == 0.9015
    assert figures["uniform_loss"] == pytest.approx(math.log(v))
    assert round(figures["uniform_loss"], 2) == 4.17
    first = LOG["log"][0]
    assert (figures["first_logged_loss"], figures["first_logged_step"]) == (first["loss"], first["step"])
    assert figures["log_every"] == LOG["train_config"]["log_every"] == first["step"]


def test_the_smoothed_loss_is_lowest_at_the_ceiling_and_ln_v_for_a_uniform_guess():
    v, eps = len(VOCAB), LOG["train_config"]["label_smoothing"]
    target = torch.tensor([5])

    def loss_at(p_right: float) -> float:
        p = torch.full((1, v), (1 - p_right) / (v - 1))
        p[0, 5] = p_right
        return float(torch.nn.functional.cross_entropy(p.log(), target, label_smoothing=eps))

    ceiling = 1 - eps + eps / v
    assert loss_at(ceiling) < min(loss_at(ceiling - 0.01), loss_at(ceiling + 0.01))
    assert float(torch.nn.functional.cross_entropy(torch.zeros(1, v), target, label_smoothing=eps)) == pytest.approx(
        math.log(v)
    )


@pytest.mark.parametrize("seed", [1, 2])
def test_an_untrained_miniature_starts_near_ln_v_a_little_above_and_the_log_starts_below(seed):
    torch.manual_seed(seed)
    model = EncoderDecoder(Config(vocab_size=len(VOCAB))).eval()
    src, dec_in, tgt = make_batch(heldout_numbers()[:256])
    with torch.no_grad():
        loss = float(smoothed_loss(model(src, dec_in), tgt, 0.1, VOCAB.pad_id))
    assert math.log(len(VOCAB)) < loss < math.log(len(VOCAB)) + 1
    assert LOG["log"][0]["loss"] < math.log(len(VOCAB))


@pytest.mark.parametrize("number", NUMBERS)
def test_the_least_certain_choice_lies_near_and_above_the_ceiling(client, shown, number):
    figures = client.get("/api/model").json()["figures"]
    t, derived = shown[number]["trace"], shown[number]["derived"]
    nodes = {n["id"]: n for n in t["nodes"]}
    probs, chosen = as_array(nodes["out.probs"]), as_array(nodes["out.tokens"]).astype(int)
    least = probs[np.arange(len(chosen)), chosen].min()
    assert derived["least_certain_prob"] == pytest.approx(least, abs=1e-6)
    assert figures["smoothing_ceiling"] < least < figures["smoothing_ceiling"] + 0.02


def test_the_page_shows_the_yardsticks(client):
    index_html = client.get("/").text
    figures = client.get("/api/model").json()["figures"]
    for key, fmt in (
        ("smoothing_ceiling", "fixed4"),
        ("uniform_loss", "fixed2"),
        ("first_logged_loss", "fixed2"),
        ("label_smoothing_eps", "fixed1"),
        ("log_every", "int"),
        ("ceiling_loss", "fixed3"),
    ):
        shown = re.findall(rf'data-live="{key}" data-format="{fmt}">([^<]*)</span>', index_html)
        assert shown and set(shown) == {format_number(figures[key], fmt)}, (key, shown)


@pytest.mark.parametrize("number", NUMBERS)
def test_the_per_position_losses_are_recomputed_from_the_trace(client, shown, number):
    figures = client.get("/api/model").json()["figures"]
    t, derived = shown[number]["trace"], shown[number]["derived"]
    nodes = {n["id"]: n for n in t["nodes"]}
    probs, chosen = as_array(nodes["out.probs"]), as_array(nodes["out.tokens"]).astype(int)
    losses = -np.log(probs[np.arange(len(chosen)), chosen].astype(np.float64))
    shown = [item.rsplit(" ", 1) for item in derived["position_losses"].split(", ")]
    assert [tok for tok, _ in shown] == t["output_tokens"]
    assert [float(x) for _, x in shown] == pytest.approx(losses, abs=6e-4)
    assert derived["mean_position_loss"] == pytest.approx(losses.mean(), abs=1e-9)
    assert figures["ceiling_loss"] == pytest.approx(-math.log(figures["smoothing_ceiling"]))
    assert (losses < figures["ceiling_loss"]).all()
