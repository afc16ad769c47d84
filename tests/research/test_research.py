"""The research desk: gold alignments, the harness end to end (smoke), and the committed results."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import torch

from model.data import make_batch
from model.numbers import to_english, to_german_pieces
from model.transformer import Config, EncoderDecoder
from model.vocab import VOCAB
from research import harness
from research.__main__ import main
from research.alignment import aligned_rows, gold_alignment, relative_position_baselines
from research.experiments import EXPERIMENTS, GROUPS
from research.harness import RESULTS, has_sieben_und
from research.heads import has_und, without_heads
from research.results import RECORDS, load, sections, validate
from research.views import desk_view, pages, render_table, table, views_dir

ROOT = Path(__file__).resolve().parents[2]

# number, German piece -> English word it translates (None: no counterpart), kind of each piece
GOLD = [
    (42, [("zwei", "two"), ("und", None), ("vierzig", "forty")], ["reordered", "none", "reordered"]),
    (21, [("ein", "one"), ("und", None), ("zwanzig", "twenty")], ["reordered", "none", "reordered"]),
    (300, [("drei", "three"), ("hundert", "hundred")], ["monotone", "monotone"]),
    (100, [("ein", "one"), ("hundert", "hundred")], ["monotone", "monotone"]),
    (17, [("siebzehn", "seventeen")], ["monotone"]),
    (1, [("eins", "one")], ["monotone"]),
    (0, [("null", "zero")], ["monotone"]),
    (1001, [("ein", "one"), ("tausend", "thousand"), ("eins", "one")], ["monotone"] * 3),
    (17000, [("siebzehn", "seventeen"), ("tausend", "thousand")], ["monotone"] * 2),
    (
        1234,
        [
            ("ein", "one"),
            ("tausend", "thousand"),
            ("zwei", "two"),
            ("hundert", "hundred"),
            ("vier", "four"),
            ("und", None),
            ("dreißig", "thirty"),
        ],
        ["monotone"] * 4 + ["reordered", "none", "reordered"],
    ),
]


@pytest.mark.parametrize("n, pairs, kinds", GOLD)
def test_gold_alignment_links_each_german_piece_to_its_english_word(n, pairs, kinds):
    gold = gold_alignment(n)
    assert gold.english == to_english(n) and gold.german == to_german_pieces(n)
    assert [(p, None if s is None else gold.english[s]) for p, s in zip(gold.german, gold.source)] == pairs
    assert gold.kind == kinds


def test_gold_alignment_of_731015_points_at_the_right_occurrence_of_repeated_words():
    gold = gold_alignment(731_015)  # seven hundred thirty one thousand fifteen
    assert gold.german == ["sieben", "hundert", "ein", "und", "dreißig", "tausend", "fünfzehn"]
    assert gold.source == [0, 1, 3, None, 2, 4, 5]


def test_gold_alignment_agrees_with_the_grammar_on_many_numbers():
    rng = random.Random(0)
    for n in list(range(1200)) + [rng.randrange(1_000_000) for _ in range(3000)]:
        gold = gold_alignment(n)
        assert gold.english == to_english(n) and gold.german == to_german_pieces(n)
        assert all((s is None) == (p == "und") for p, s in zip(gold.german, gold.source))
        assert sorted(s for s in gold.source if s is not None) == list(range(len(gold.english)))


def test_row_i_of_the_decoder_is_aligned_with_the_piece_it_predicts():
    # 42: row 0 reads <s> and must write "zwei" (-> "two", source 1); row 2 writes "vierzig" (-> 0)
    assert aligned_rows(42) == [(0, 1, "reordered"), (2, 0, "reordered")]
    assert aligned_rows(42, "reads") == [(1, 1, "reordered"), (3, 0, "reordered")]
    _, dec_in, tgt = make_batch([42])
    assert VOCAB.tokens_of(tgt[0].tolist())[:3] == ["zwei", "und", "vierzig"]  # logits row i vs target i
    assert VOCAB.tokens_of(dec_in[0].tolist())[:2] == ["<s>", "zwei"]


def test_a_relative_position_baseline_cannot_follow_the_reordering_perfectly():
    base = relative_position_baselines(list(range(20, 100)))
    assert base["best_offset_rates"]["all"] < 1.0
    assert 0.0 <= base["diagonal_rates"]["reordered"] <= 1.0


def test_the_compositional_filter_removes_exactly_sieben_und():
    assert [has_sieben_und(n) for n in (27, 1027, 27_000, 7, 17, 70, 700, 7000, 77)] == [
        True,
        True,
        True,
        False,
        False,
        False,
        False,
        False,
        True,
    ]
    assert has_und(42) and not has_und(1300)


def test_ablating_a_head_leaves_the_model_itself_untouched():
    torch.manual_seed(0)
    model = EncoderDecoder(Config()).eval()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    ablated = without_heads(model, [1])
    src, dec_in, _ = make_batch([42, 731_015])
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert not torch.allclose(model(src, dec_in), ablated(src, dec_in))
    w = ablated.decoder_layers[-1].src_attn.w_o.weight
    assert torch.count_nonzero(w[:, 8:16]) == 0 and torch.count_nonzero(w[:, :8]) > 0


def test_a_run_is_keyed_by_what_determines_it_not_by_its_name():
    a = harness.RunSpec("ablations", "baseline", 1, 2500)
    assert a.key() == harness.RunSpec("alignment", "other name", 1, 2500, analysis="alignment").key()
    assert a.key() != harness.RunSpec("ablations", "baseline", 2, 2500).key()
    assert a.key() != harness.RunSpec("ablations", "baseline", 1, 2500, {"n_heads": 8}).key()


# ---- every experiment end to end, in smoke mode, into a temporary folder --------------------


@pytest.mark.parametrize("experiment", ["ablations", "extrapolation", "alignment", "followups"])
def test_every_experiment_runs_end_to_end_in_smoke_mode(experiment, tmp_path):
    assert main([experiment, "--smoke", "--out", str(tmp_path), "--quiet"]) == 0
    for name in GROUPS.get(experiment, [experiment]):
        validate(tmp_path / f"{name}.json")
        data = load(name, out=tmp_path)
        assert {"experiment", "claim", "hypothesis", "design", "verdict", "command", "runs", "summary"} <= set(data)
        assert data["runs"] and data["summary"]
        assert "results:begin" in (tmp_path / f"{name}.md").read_text()
    group = load(experiment, out=tmp_path)
    assert group["runs"] and group["summary"]


def test_a_finished_run_is_not_repeated(tmp_path, monkeypatch):
    assert main(["alignment", "--smoke", "--out", str(tmp_path), "--quiet"]) == 0
    first = json.loads((tmp_path / "alignment.json").read_text())

    def no_training(*_):
        raise AssertionError("a finished run was trained again")

    monkeypatch.setattr(harness, "_train_and_score", no_training)
    assert main(["alignment", "--smoke", "--out", str(tmp_path), "--quiet"]) == 0
    assert json.loads((tmp_path / "alignment.json").read_text()) == first
    # head_ablation wants the same model: it is reused from alignment's run, not retrained
    assert main(["head_ablation", "--smoke", "--out", str(tmp_path), "--quiet"]) == 0
    assert load("head_ablation", out=tmp_path)["runs"][0]["reused_from"] == "alignment/baseline"


def test_two_workers_give_the_same_results_as_one(tmp_path):
    main(["alignment", "--smoke", "--seeds", "2", "--out", str(tmp_path / "one"), "--quiet"])
    main(["alignment", "--smoke", "--seeds", "2", "--jobs", "2", "--out", str(tmp_path / "two"), "--quiet"])
    runs = [sorted(load("alignment", out=tmp_path / d)["runs"], key=lambda r: r["seed"]) for d in ("one", "two")]
    assert [r["heldout_loss"] for r in runs[0]] == [r["heldout_loss"] for r in runs[1]]


def test_smoke_runs_never_write_into_the_committed_results():
    with pytest.raises(SystemExit):
        main(["alignment", "--smoke", "--out", str(RESULTS), "--quiet"])


# ---- what is committed ---------------------------------------------------------------------


def test_every_experiment_has_a_record_with_claim_hypothesis_design_and_verdict():
    for name in EXPERIMENTS:
        text = sections((RECORDS / f"{name}.md").read_text())
        for part in ("claim", "hypothesis", "design", "verdict", "command"):
            assert text.get(part), f"{name}.md has no '{part}' section"


# results written by their own commands, not by the experiment harness, each checked by its own test module
OTHER_RESULTS = {
    "part_ablation.json": "tests/recorder/test_ablation.py",
    "time_machine.json": "tests/page/test_time_machine.py",
    "beam_agreement.json": "tests/research/test_claim_scope.py",
}


def test_every_committed_result_is_an_experiments_or_has_its_own_test():
    for path in RESULTS.glob("*.json"):
        assert path.stem in EXPERIMENTS or path.name in OTHER_RESULTS, f"{path.name}: no experiment and no test"
    for name, test in OTHER_RESULTS.items():
        assert (RESULTS / name).exists() and name in (ROOT / test).read_text(encoding="utf-8"), (name, test)


@pytest.mark.parametrize(
    "path",
    [RESULTS / f"{name}.json" for name in sorted(EXPERIMENTS) if (RESULTS / f"{name}.json").exists()],
    ids=lambda p: p.name,
)
def test_committed_results_match_their_schema(path: Path):
    validate(path)
    data = json.loads(path.read_text())
    assert data["experiment"] == path.stem and path.stat().st_size < 1_000_000
    assert all(r["experiment"] == path.stem and r["steps"] >= 500 for r in data["runs"])
    assert load(path.stem)["summary"]


def test_the_compositional_hold_out_never_reaches_training():
    from model.data import NumberSampler

    sampler = NumberSampler(1, set(), keep=harness.FILTERS["no_sieben_und"])
    assert not any(has_sieben_und(n) for n in sampler.sample(5000))


@pytest.mark.parametrize("name", pages())
def test_the_committed_view_files_are_the_committed_results(name):
    """research/results/views/<name>.json (what the app shows) is what the desk computes from the results
    and records now: a result or record changed without `python -m research NAME --report` fails here."""
    written = json.loads((views_dir() / f"{name}.json").read_text())
    assert written == json.loads(json.dumps(desk_view(name), ensure_ascii=False))


def test_the_record_table_and_the_page_table_are_one_rendering():
    rows = EXPERIMENTS["ablations"].summarise(load("ablations")["runs"])
    t = table(rows)
    md = render_table(rows).splitlines()
    assert md[0] == "| " + " | ".join(t["columns"]) + " |"
    assert [line.strip("| ").split(" | ") for line in md[2:]] == t["rows"]
    baseline = t["rows"][0]
    assert baseline[t["columns"].index("exact_match")] == "100.00% (100.00%, 100.00%)"
    assert baseline[t["columns"].index("params")] == "61\u2009472"


def test_a_smoke_run_writes_its_views_beside_its_results(tmp_path):
    assert main(["extrapolation", "--smoke", "--out", str(tmp_path), "--quiet"]) == 0
    view = json.loads((tmp_path / "views" / "extrapolation.json").read_text())
    assert view["status"] == "results" and view["runs"] == 4 and view["parts"][0]["rows"]
    assert view["claim"] == load("extrapolation")["claim"]  # the record's sections, the smoke run's numbers


def test_a_view_written_by_another_study_is_read_by_the_app(tmp_path, monkeypatch):
    """The contract for a new result (research/views.py): write_view from summary rows, read by the app."""
    from app.service import research_views
    from app.settings import settings
    from research.views import part, write_view

    rows = [
        {
            "variant": "full",
            "seeds": [1, 2],
            "exact_match": {"values": [1.0, 0.995], "mean": 0.9975, "min": 0.995, "max": 1.0},
            "params": 61472,
        },
        {
            "variant": "no FFN",
            "seeds": [1, 2],
            "exact_match": {"values": [0.5, 0.25], "mean": 0.375, "min": 0.25, "max": 0.5},
            "params": 40000,
        },
    ]
    write_view(
        "part_ablation",
        "Per-part ablation",
        [part("part_ablation", "Per-part ablation", rows, runs=4)],
        tmp_path,
        claim="A *claim*.",
        command="python -m research.part_ablation",
    )
    monkeypatch.setattr(settings, "research_views", tmp_path)
    assert research_views.names() == {"research-part_ablation": "part_ablation"}
    data = research_views.read("part_ablation")
    assert data["status"] == "results" and data["claim_html"] == "<p>A <em>claim</em>.</p>"
    (shown,) = data["parts"]
    assert shown["columns"] == ["variant", "exact_match", "params"]
    assert shown["rows"] == [
        ["full", "99.75% (100.00%, 99.50%)", "61\u2009472"],
        ["no FFN", "37.50% (50.00%, 25.00%)", "40\u2009000"],
    ]
    assert shown["chart"]["mean"] == [0.9975, 0.375] and shown["chart"]["labels"] == ["full", "no FFN"]


def test_a_finished_run_without_weights_is_reused_unless_an_analysis_needs_the_model(tmp_path, monkeypatch):
    """The committed results carry no weights: a run another experiment finished (same key) is taken from its
    record; only an analysis, which needs the model itself, trains it again."""
    assert main(["compositional", "--smoke", "--out", str(tmp_path), "--quiet"]) == 0
    for path in (tmp_path / "cache").glob("*.pt"):
        path.unlink()
    trained = []
    real = harness._train_and_score
    monkeypatch.setattr(
        harness, "_train_and_score", lambda spec, cache: trained.append(spec.key()) or real(spec, cache)
    )
    assert main(["warmup_norm", "--smoke", "--out", str(tmp_path), "--quiet"]) == 0
    baseline = next(r for r in load("compositional", out=tmp_path)["runs"] if r["variant"] == "baseline")
    reused = next(r for r in load("warmup_norm", out=tmp_path)["runs"] if r["variant"] == "post_ln_warmup")
    assert reused["reused_from"] == "compositional/baseline" and reused["heldout_loss"] == baseline["heldout_loss"]
    assert baseline["key"] not in trained and len(trained) == 3  # the other three variants
    assert main(["alignment", "--smoke", "--out", str(tmp_path), "--quiet"]) == 0
    assert trained[-1] == baseline["key"]  # alignment's analysis needs the weights: trained again
