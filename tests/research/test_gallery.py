"""The gallery of the model's attention heads (step 28): the committed measurements are the shipped
model's (recomputed here from the model), and every figure on every card is recomputed from the
committed data, independently of article/figures.py, and found in the page; the words on a card and in
step 28's text say only what the numbers say."""

from __future__ import annotations

import html as htmllib
import json
import math
import re

import pytest
import torch

from app.routes.figures import shade_paths
from article.format import format_number
from research.head_gallery import OUT, gallery, measure, switched_off

KINDS = ["encoder self-attention", "decoder masked self-attention", "cross-attention"]
CARD = re.compile(r'<li class="head-card" data-kind="([^"]+)" data-layer="(\d+)" data-head="(\d+)">(.*?)</li>', re.S)


@pytest.fixture(scope="module")
def raw() -> dict:
    return json.loads(OUT.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def cards(client) -> dict[tuple[str, int, int], str]:
    page = client.get("/").text
    gallery_html = re.search(r'<figure data-figure="head-gallery" data-server="true">(.*?)</figure>', page, re.S).group(
        1
    )
    return {(k, int(layer), int(head)): body for k, layer, head, body in CARD.findall(gallery_html)}


def text(fragment: str) -> str:
    return re.sub(r"[ \t\r\n]+", " ", htmllib.unescape(re.sub(r"<[^>]+>", " ", fragment))).strip()  # keeps thin spaces


def test_the_gallery_measures_every_head_of_the_shipped_weights(client, raw):
    svc = client.app.state.service
    cfg = svc.translator.model.cfg
    assert raw["weights_version"] == svc.version, "stale gallery: run python -m research.head_gallery"
    assert raw["numbers"] == 2000 and raw["baseline_correct"] == 2000
    assert len(raw["heads"]) == cfg.n_layers * 3 * cfg.n_heads == 24


def test_the_committed_measurements_are_the_models(client, raw):
    model = client.app.state.service.translator.model
    from model.data import heldout_numbers

    torch.set_num_threads(1)
    again = measure(model, heldout_numbers())
    assert len(again) == len(raw["heads"])
    for new, old in zip(again, raw["heads"], strict=True):
        who = ("kind", "layer", "head", "rows")
        assert [new[k] for k in who] == [old[k] for k in who]
        for c, p in new["peaks"].items():
            assert (p["hits"], p["rows"]) == (old["peaks"][c]["hits"], old["peaks"][c]["rows"]), (old["kind"], c)
            assert math.isclose(p["chance_sum"], old["peaks"][c]["chance_sum"], abs_tol=0.01)
        assert math.isclose(new["entropy_bits_sum"], old["entropy_bits_sum"], rel_tol=1e-4)
        assert (
            max(
                abs(a - b)
                for ra, rb in zip(new["pattern"], old["pattern"], strict=True)
                for a, b in zip(ra, rb, strict=True)
            )
            < 2e-4
        )


def test_switching_a_head_off_gives_the_committed_exact_match(client, raw):
    """The most harmful head and one that costs nothing, recomputed (greedy, all 2 000 numbers)."""
    from model.data import heldout_numbers
    from model.train import exact_match

    model, numbers = client.app.state.service.translator.model, heldout_numbers()
    worst = min(raw["heads"], key=lambda h: h["switched_off_correct"])
    free = next(h for h in raw["heads"] if h["switched_off_correct"] == raw["numbers"])
    for h in (worst, free):
        got = round(exact_match(switched_off(model, h["kind"], h["layer"], h["head"]), numbers) * len(numbers))
        assert got == h["switched_off_correct"], h["kind"]
    assert worst["switched_off_correct"] < 0.5 * raw["numbers"]


def test_gallery_takes_its_pattern_from_numbers_of_one_form(raw):
    p = raw["pattern"]
    assert len(p["source"]) == 10 and len(p["reads"]) == 12 and p["numbers"] > 500
    assert p["source"][1] == p["source"][6] == "hundred" and p["source"][4] == "thousand" and p["source"][-1] == "</s>"
    assert p["reads"][0] == "<s>" and p["reads"][6] == "tausend"


def expected(raw, h) -> dict:
    """A card's figures, from the committed data, computed here on their own."""
    peaks = []
    for c in raw["categories"][h["kind"]]:
        p = h["peaks"][c["key"]]
        rate = p["hits"] / p["rows"] if p["rows"] else None
        peaks.append((c["key"], c["label"], rate, p["chance_sum"] / p["rows"] if p["rows"] else None))
    return {
        "peaks": peaks,
        "entropy": h["entropy_bits_sum"] / h["rows"],
        "uniform": h["uniform_bits_sum"] / h["rows"],
        "off": h["switched_off_correct"],
        "off_rate": h["switched_off_correct"] / raw["numbers"],
    }


def test_every_card_shows_the_figures_of_the_committed_data(raw, cards):
    assert len(cards) == len(raw["heads"])
    for h in raw["heads"]:
        card = cards[(h["kind"], h["layer"] + 1, h["head"] + 1)]
        e = expected(raw, h)
        for key, label, rate, chance in e["peaks"]:
            row = re.search(rf'<tr data-key="{re.escape(htmllib.escape(key))}">(.*?)</tr>', card, re.S).group(1)
            cells = [text(c) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)]
            assert cells == [htmllib.unescape(label), format_number(rate, "pct0"), format_number(chance, "pct0")]
        said = text(card)
        assert f"Entropy of a row: {format_number(e['entropy'], 'fixed2')} bits on average" in said
        assert f"(an even spread: {format_number(e['uniform'], 'fixed2')})" in said
        assert (
            f"Switched off alone: {format_number(e['off_rate'], 'pct1')} exact match "
            f"({format_number(e['off'], 'int')} of {format_number(raw['numbers'], 'int')})"
        ) in said


def test_every_cards_picture_is_its_average_pattern(raw, cards):
    for h in raw["heads"]:
        card = cards[(h["kind"], h["layer"] + 1, h["head"] + 1)]
        drawn = re.findall(r'<path d="([^"]+)" fill-opacity="([^"]+)"/>', card)
        shade = {}
        for d, opacity in drawn:
            for x, y in re.findall(r"M([\d.]+) ([\d.]+)h", d):
                shade[(float(x), float(y))] = float(opacity)
        assert drawn == [(d, o) for o, d in shade_paths(h["pattern"], 9, 36, 34)]
        for r, row in enumerate(h["pattern"]):
            for c, w in enumerate(row):
                assert abs(shade.get((36 + 9 * c, 34 + 9 * r), 0.0) - w) <= 0.025 + 1e-9, (h["kind"], r, c)


def test_a_cards_words_say_what_its_top_rate_says(raw, cards):
    for h in raw["heads"]:
        card = text(cards[(h["kind"], h["layer"] + 1, h["head"] + 1)])
        _, label, rate, chance = max(
            (p for p in expected(raw, h)["peaks"] if not p[0].endswith("_reordered")), key=lambda p: p[2]
        )
        words = "Almost always peaks on" if rate >= 0.9 else "Mostly peaks on" if rate >= 0.5 else "No single habit"
        assert words in card and htmllib.unescape(label) in card
        pct, odds = format_number(rate, "pct0"), format_number(chance, "pct0")
        assert f"{pct} of the rows where it can (chance: {odds})" in card
        assert "tracks" not in card and "syntax" not in card


def test_step_28s_words_about_the_heads_are_what_the_numbers_say(raw, client):
    last = max(h["layer"] for h in raw["heads"])
    aligned = {
        (h["layer"], h["head"]): h["peaks"]["aligned"]["hits"] / h["peaks"]["aligned"]["rows"]
        for h in raw["heads"]
        if h["kind"] == "cross-attention"
    }
    assert min(r for (layer, _), r in aligned.items() if layer == last) > max(
        r for (layer, _), r in aligned.items() if layer != last
    )
    worst = min(raw["heads"], key=lambda h: h["switched_off_correct"])
    assert worst["kind"] == "decoder masked self-attention"
    top = max((c for c in worst["peaks"]), key=lambda c: worst["peaks"][c]["hits"] / worst["peaks"][c]["rows"])
    assert top == "previous"
    step = client.app.state.content.steps[27].html
    assert "masked self-attention, whose rows most often rest on the previous piece" in step


def test_the_gallery_can_be_rebuilt_by_its_command_on_a_few_numbers(client):
    """`python -m research.head_gallery` end to end, on 40 numbers (the committed run used all 2 000)."""
    from model.data import heldout_numbers

    model = client.app.state.service.translator.model
    numbers = heldout_numbers()[::50]
    data = gallery(model, numbers)
    assert data["numbers"] == len(numbers) and len(data["heads"]) == 24
    assert all(0 <= h["switched_off_correct"] <= len(numbers) for h in data["heads"])
