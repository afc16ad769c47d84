"""The article's figures, recomputed: each claim the figure makes is checked against its data."""

from __future__ import annotations

import math

import pytest

from article import figures
from model.train import load


def test_the_learning_rate_figure_peaks_at_7e_4_at_step_4000_for_the_paper_base():
    lr = figures.lr_schedules(32, 400, 4000)
    base = lr["paper_base"]
    peak = max(range(len(base["lr"])), key=base["lr"].__getitem__)
    assert base["step"][peak] == 4000
    assert base["peak_lr"] == pytest.approx(512**-0.5 * 4000**-0.5) == pytest.approx(6.99e-4, abs=1e-6)
    mini = lr["miniature"]
    assert mini["peak_lr"] == pytest.approx(32**-0.5 * 400**-0.5)


def test_unscaled_scores_saturate_the_softmax_at_d_k_64_and_scaled_ones_do_not():
    s = figures.softmax_saturation(samples=1000)
    i = s["d_k"].index(64)
    assert s["unscaled"]["max_weight"][i] > 0.85  # nearly one-hot
    assert s["unscaled"]["gradient"][i] < 0.2  # little gradient left
    assert s["scaled"]["max_weight"][i] < 0.5
    assert s["scaled"]["gradient"][i] > 0.6
    # scaled, the curves are flat in d_k; at d_k = 8 (the miniature) unscaling already hurts
    assert max(s["scaled"]["max_weight"]) - min(s["scaled"]["max_weight"]) < 0.06
    j = s["d_k"].index(8)
    assert s["unscaled"]["max_weight"][j] > s["scaled"]["max_weight"][j] + 0.2


def test_the_pe_rotation_figure_shows_errors_at_rounding_level():
    rows = figures.pe_rotation()["rows"]
    assert [r["k"] for r in rows] == [1, 2, 5, 10]
    assert all(r["max_abs_error"] < 1e-6 for r in rows)


def test_the_pe_pattern_is_the_sinusoid_table():
    p = figures.pe_pattern(positions=20, d_model=32)
    assert p["values"][3][0] == pytest.approx(math.sin(3), abs=1e-4)
    assert p["values"][3][1] == pytest.approx(math.cos(3), abs=1e-4)
    assert p["values"][7][2] == pytest.approx(math.sin(7 / 10000 ** (2 / 32)), abs=1e-4)


def test_the_worked_parameter_count_matches_the_model_and_the_paper_sizes():
    c = figures.parameter_count(load())
    assert c["total"] == c["model_count"] == 61_472
    assert c["paper"] == {"base": 63_082_496, "big": 214_245_376}


def test_the_training_curves_are_the_shipped_log():
    t = figures.training_curves()
    assert t["step"][-1] == 4000 and len(t["step"]) == len(t["loss"]) == len(t["lr"])
    assert t["loss"][0] > t["loss"][-1]
    assert t["final"]["heldout_exact_match"] >= 0.999
