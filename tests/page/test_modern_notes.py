"""With ?model=modern the article says, step by step, where its text is not the model on show.

The stage then draws the modern miniature (pre-norm RMSNorm, rotary positions, SwiGLU, no biases, its own
output matrix) while the prose and formulas are the 2017 model's. content/modern.md holds a note per step
where the two differ; the page shows them at the top of those steps only in that view. Checked here: the
notes are shown there and hidden in the 2017 view; each difference a note states is the modern model's own
configuration (model/config.py), counted from it where it is a number; every step whose subject is a part
the modern model changes has a note. The live numbers filled for the modern model are checked in Chromium
in tests/page/test_hands_on.py."""

from __future__ import annotations

import re

import pytest

from model import models
from model.config import count_parameters

NOTE = re.compile(r'<aside class="model-step-note"[^>]*>.*?</aside>', re.S)


def notes_in(page: str) -> dict[int, str]:
    out = {}
    for m in re.finditer(r'<section id="step-(\d+)".*?</section>', page, re.S):
        found = NOTE.search(m.group(0))
        if found:
            out[int(m.group(1))] = found.group(0)
    return out


@pytest.fixture(scope="module")
def pages(client) -> tuple[str, str]:
    return client.get("/?model=modern").text, client.get("/").text


def test_the_notes_show_in_the_modern_view_and_not_in_the_2017_one(client, pages):
    modern, classic = pages
    shown, hidden = notes_in(modern), notes_in(classic)
    expected = set(client.app.state.content.model_notes)
    assert set(shown) == set(hidden) == expected and len(expected) >= 10
    assert all(" hidden" not in n.split(">", 1)[0] for n in shown.values())
    assert all(" hidden" in n.split(">", 1)[0] for n in hidden.values())
    assert "each step where the two differ says how, in a note at its top" in modern


def test_each_difference_a_note_states_is_the_modern_models(client):
    cfg, old = models.config("modern"), models.config("2017")
    notes = {
        n: re.sub(r"[ \t\n]+", " ", re.sub(r"<[^>]+>", "", html))
        for n, html in client.app.state.content.model_notes.items()
    }
    assert (cfg.norm, cfg.norm_first, cfg.positional, cfg.ffn, cfg.bias, cfg.tie_output) == (
        "rms",
        True,
        "rotary",
        "swiglu",
        False,
        False,
    )
    assert (old.norm, old.norm_first, old.positional, old.ffn, old.bias, old.tie_output) == (
        "layer",
        False,
        "sinusoidal",
        "relu",
        True,
        True,
    )
    assert f"d_ff = {cfg.d_ff} hidden units" in notes[12] and "three matrices" in notes[12]
    params = f"{count_parameters(cfg):,}".replace(",", "\u2009")  # a thin space, as every count is printed
    assert (
        params == "61\u2009376"
        and f"{params} parameters against {count_parameters(old):,}".replace(",", "\u2009") in notes[25]
    )
    assert f"{cfg.vocab_size} × {cfg.d_model}" in notes[18] and f"{cfg.vocab_size} × {cfg.d_model}" in notes[25]
    assert "no biases" in notes[6] and "no bias" in notes[10]
    assert "RMSNorm" in notes[11] and "no shift β" in notes[11] and "pre-norm" in notes[11]
    assert "no position pattern" in notes[5] and "no position pattern" in notes[14]
    assert "rotated" in notes[6] and "nothing is rotated here" in notes[16]


def test_every_step_about_a_part_the_modern_model_changes_has_a_note(client):
    """The steps whose subject is a part that differs: biases (6, 10), position (5, 14), normalisation (11, 13,
    17), the feed-forward network (12), the output layer (18), the count (25); and step 1, which says how
    the notes work."""
    assert {1, 4, 5, 6, 7, 10, 11, 12, 13, 14, 16, 17, 18, 25} <= set(client.app.state.content.model_notes)
