"""Steps 26–29 state each experiment's result in words.

Each figure is read from the committed results (research/results/*.json), formatted the way the
prose writes it, and looked for in the step's text: a changed result or a dropped sentence fails."""

import json
import re
from pathlib import Path
from statistics import mean

import pytest

ROOT = Path(__file__).resolve().parents[2]


def percent_of(count: int, total: int, decimals: int = 1) -> str:
    """100·count/total with `decimals` decimals, halves up, rounded from the exact fraction: 359 of 2 000
    is 17.95 % and prints 18.0, where the binary float 0.1795 would print 17.9 (pct1)."""
    if total <= 0 or count < 0:
        raise ValueError(f"a percentage needs 0 ≤ count and 0 < total, not {count} of {total}")
    scale = 10**decimals
    q, r = divmod(100 * scale * count, total)
    q += 2 * r >= total
    whole, frac = divmod(q, scale)
    return f"{whole}.{frac:0{decimals}d}" if decimals else str(whole)


RESULTS = ROOT / "research" / "results"
STEPS = ROOT / "content" / "steps"


def step_text(n: int) -> str:
    (path,) = STEPS.glob(f"{n:02d}-*.md")
    return re.sub(r"\s+", " ", path.read_text().replace("\u00a0", " ").replace("\u202f", " "))


def runs(experiment: str, variant: str) -> list[dict]:
    found = [r for r in json.loads((RESULTS / f"{experiment}.json").read_text())["runs"] if r["variant"] == variant]
    assert found, (experiment, variant)
    return found


def mean_of(experiment: str, variant: str, key: str) -> float:
    return mean(r[key] for r in runs(experiment, variant))


def pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def pct_of_run(run: dict) -> str:
    """A run's held-out exact match as the prose prints it, rounded from the count of numbers it got right
    (359 of 2 000 is 18.0 %, which the float 0.1795 formatted to one decimal would print as 17.9)."""
    correct = run["heldout_correct"]
    return f"{percent_of(correct.count('1'), len(correct))} %"


def loss(x: float) -> str:
    return f"{x:.4f}"


def by_length(variant: str, words: int) -> float:
    return mean(r["exact_match_by_length"][str(words)]["exact_match"] for r in runs("extrapolation", variant))


def head_row(seed: int, ablated: str) -> dict:
    (run,) = [r for r in runs("head_ablation", "baseline") if r["seed"] == seed]
    return next(row for row in run["analysis"]["rows"] if row["ablated"] == ablated)


def critical(seed: int) -> dict:
    """The one head whose removal costs the most exact match on numbers with und."""
    (run,) = [r for r in runs("head_ablation", "baseline") if r["seed"] == seed]
    return min(
        (row for row in run["analysis"]["rows"] if row["ablated"].startswith("head")),
        key=lambda row: row["with_und"]["exact_match"],
    )


def alignment_any_head_last_layer() -> list[float]:
    out = []
    for r in runs("alignment", "baseline"):
        layers = [la for la in r["analysis"]["layers"] if la["convention"] == "predicts"]
        out.append(max(layers, key=lambda la: la["layer"])["any_head"]["all"])
    return out


def sieben_und() -> dict:
    """The compositional experiment's held-out subset with "sieben und", for the model trained without it."""
    from research.experiments import compositional_summary

    rows = compositional_summary(json.loads((RESULTS / "compositional.json").read_text())["runs"])
    return next(r for r in rows if r["variant"] == "no_sieben_und" and r["subset"].startswith("sieben"))


def sieben_und_seed(which) -> str:
    """One seed's result on the held-out "sieben und" numbers, as the prose words it: "all 305 held-out
    numbers that contain it exactly right" when it misses none, "all but one (99.7 %)" otherwise."""
    row = sieben_und()
    x = which(row["exact_match"]["values"])
    misses = round(row["n"] * (1 - x))
    if misses == 0:
        return f"all {row['n']} held-out numbers that contain it exactly right"
    return f"all but {({1: 'one', 2: 'two', 3: 'three'}).get(misses, str(misses))} ({pct(x)})"


def best_offset() -> float:
    """The positional baseline: the best fixed offset's hit rate (the same in both seeds' data)."""
    return runs("alignment", "baseline")[0]["analysis"]["baselines"]["best_offset_rates"]["all"]


def pre_ln_loss(i: int) -> float:
    return runs("warmup_norm", "pre_ln_no_warmup")[i]["heldout_loss"]


FIGURES = {
    26: [
        ("one head's held-out loss", lambda: loss(mean(r["heldout_loss"] for r in runs("ablations", "heads_1")))),
        ("the baseline's held-out loss", lambda: loss(mean(r["heldout_loss"] for r in runs("ablations", "baseline")))),
        ("depth 1's held-out loss", lambda: loss(mean(r["heldout_loss"] for r in runs("ablations", "depth_1")))),
        ("no dropout's held-out loss", lambda: loss(mean(r["heldout_loss"] for r in runs("ablations", "no_dropout")))),
        ("no warm-up's held-out loss", lambda: f"{mean_of('ablations', 'no_warmup', 'heldout_loss'):.3f}"),
        ("no warm-up's exact match", lambda: f"{100 * mean_of('ablations', 'no_warmup', 'heldout_exact_match'):.0f} %"),
    ],
    27: [
        ("sinusoids on 7 words", lambda: pct(by_length("sinusoidal", 7))),
        ("learned on 7 words", lambda: pct(by_length("learned", 7))),
        ("sinusoids on 8 words", lambda: pct(by_length("sinusoidal", 8))),
        ("sinusoids on 9 words", lambda: pct(by_length("sinusoidal", 9))),
        ("ALiBi on 7 words", lambda: pct(by_length("alibi", 7))),
        ("ALiBi on 8 words", lambda: pct(by_length("alibi", 8))),
        ("ALiBi on 9 words", lambda: pct(by_length("alibi", 9))),
        ("rotary on 7 words", lambda: pct(by_length("rotary", 7))),
        (
            "rotary's worst seed on 7 words",
            lambda: pct(min(r["exact_match_by_length"]["7"]["exact_match"] for r in runs("extrapolation", "rotary"))),
        ),
    ],
    28: [
        ("any head, last layer", lambda: f"{100 * min(alignment_any_head_last_layer()):.0f} %"),
        ("the best fixed offset", lambda: pct(best_offset())),
    ],
    29: [
        ("seed 1's critical head, numbers with und", lambda: pct(critical(1)["with_und"]["exact_match"])),
        ("seed 1's critical head, numbers without und", lambda: pct(critical(1)["without_und"]["exact_match"])),
        ("seed 2's critical head, with und", lambda: pct(critical(2)["with_und"]["exact_match"])),
        ("seed 2's critical head, without und", lambda: pct(critical(2)["without_und"]["exact_match"])),
        ("post-LN without warm-up, loss", lambda: f"{mean_of('warmup_norm', 'post_ln_no_warmup', 'heldout_loss'):.2f}"),
        ("pre-LN without warm-up, seed 1's loss", lambda: f"{pre_ln_loss(0):.2f}"),
        ("pre-LN without warm-up, seed 2's loss", lambda: f"{pre_ln_loss(1):.2f}"),
        ("ALiBi on 7 words", lambda: pct(by_length("alibi", 7))),
        ("ALiBi on 9 words", lambda: pct(by_length("alibi", 9))),
        ("how many held-out numbers contain sieben und", lambda: f"all {sieben_und()['n']} held-out numbers"),
        ("the better seed on them, without sieben und in training", lambda: sieben_und_seed(max)),
        ("the worse seed on them", lambda: sieben_und_seed(min)),
        ("unscaled d_k 64", lambda: pct_of_run(runs("dk_sweep", "d_k_64_unscaled")[0])),
    ],
}


@pytest.mark.parametrize(
    "step, what, figure",
    [(s, w, f) for s, items in FIGURES.items() for w, f in items],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_each_experiments_result_is_stated_in_its_step(step, what, figure):
    assert figure() in step_text(step), f"step {step} does not state {what} ({figure()})"


def test_the_results_are_fed_back_into_the_earlier_steps():
    assert pct(by_length("sinusoidal", 7)) in step_text(5) and pct(by_length("learned", 7)) in step_text(5)
    assert pct(by_length("alibi", 8)) in step_text(5)
    assert re.search(r"one head is enough", step_text(10))
    assert re.search(r"one layer per stack suffices", step_text(13))
    assert "learns nothing" in step_text(21) and "pre-LN" in step_text(21)
    assert "pre-LN fails as well" in step_text(11)
    assert pct_of_run(runs("dk_sweep", "d_k_64_unscaled")[0]) in step_text(8)
    assert loss(mean_of("ablations", "no_dropout", "heldout_loss")) in step_text(22)
    assert loss(mean_of("ablations", "baseline", "heldout_loss")) in step_text(20)
    # which heads are needed, per model measured: tests/page/test_prose_claims.py
    assert "needed exactly one of the four" in step_text(7) and "needed exactly one of the four" in step_text(16)


def test_no_warm_up_learns_nothing_in_every_committed_run():
    """What steps 21 and 29 say in words: every post-LN run without warm-up ends at 0 % exact match, and
    the pre-LN runs without it at most at the per-cent the two steps state (a handful of numbers)."""
    post_ln = runs("ablations", "no_warmup") + runs("warmup_norm", "post_ln_no_warmup")
    assert [r["heldout_exact_match"] for r in post_ln] == [0.0] * len(post_ln)
    best_pre_ln = max(r["heldout_exact_match"] for r in runs("warmup_norm", "pre_ln_no_warmup"))
    assert best_pre_ln < 0.01
    for step in (21, 29):
        assert f"at most {pct(best_pre_ln)} for a pre-LN model" in step_text(
            step
        ) or f"at most {pct(best_pre_ln)} for pre-LN" in step_text(step), step


def test_the_hypotheses_match_the_records():
    record = (ROOT / "research" / "records" / "ablations.md").read_text()
    assert "1 head (d_k 32): little or no harm" in record
    assert "little or no harm" in step_text(26) and "one head to do worse" not in step_text(26)
    assert "Five follow-ups are set up" not in step_text(29) and "all five have been run" in step_text(29)
    assert "rotary" in step_text(27).split("**Design.**")[1] and "ALiBi" in step_text(27).split("**Design.**")[1]


def test_a_percentage_made_from_a_count_rounds_the_exact_fraction():
    """The unscaled d_k = 64 model got 359 of the 2 000 held-out numbers right, 17.95 %, which is
    18.0 % to one decimal; the float 0.1795 formatted directly prints 17.9."""
    run = runs("dk_sweep", "d_k_64_unscaled")[0]
    correct = run["heldout_correct"]
    assert (correct.count("1"), len(correct)) == (359, 2000) and run["heldout_exact_match"] == 0.1795
    assert f"{100 * run['heldout_exact_match']:.1f}" == "17.9"  # the old text's rounding
    assert pct_of_run(run) == "18.0 %"
    record = (ROOT / "research" / "records" / "dk_sweep.md").read_text()
    for text in (step_text(8), step_text(29), record):
        assert "17.9 %" not in text and "18.0 %" in text


def test_the_modern_desk_seeds_losses_are_rounded_once():
    """Seed 2's loss is 0.086049, 0.0860 to four places (0.0861 came from rounding 0.08605)."""
    seeds = sorted(runs("modern", "modern"), key=lambda r: r["seed"])
    said = f"({', '.join(loss(r['heldout_loss']) for r in seeds)})"
    assert said == "(0.0853, 0.0860)"
    extras = re.sub(r"\s+", " ", (ROOT / "content" / "extras.md").read_text())
    record = re.sub(r"\s+", " ", (ROOT / "research" / "records" / "modern.md").read_text())
    assert f"both of its seeds {said}" in extras and f"both of its seeds {said}" in record


# ---- the desk for a newcomer: question, answer with its number, one chart, data folded ----


def answers(step: int) -> list[str]:
    """The step's **Answer.** paragraphs, in order, each checked to follow its **Question.**"""
    text = step_text(step)
    found = re.findall(r"\*\*Question\.\*\* (.*?) \*\*Answer\.\*\* (.*?) <figure data-(?:figure|partial)=", text)
    assert found, step
    return [a for _, a in found]


def test_each_experiment_opens_with_its_question_and_its_answer_with_the_deciding_number():
    no_warmup = f"{100 * mean_of('ablations', 'no_warmup', 'heldout_exact_match'):.0f} %"
    (a26,) = answers(26)
    assert "100 %" in a26 and f"({no_warmup} in both seeds)" in a26
    (a27,) = answers(27)
    for variant, words in (("sinusoidal", 7), ("learned", 7), ("sinusoidal", 8), ("sinusoidal", 9)):
        assert pct(by_length(variant, words)) in a27, (variant, words)
    (a28,) = answers(28)
    assert f"{100 * min(alignment_any_head_last_layer()):.0f} %" in a28 and pct(best_offset()) in a28
    dk, warm, pos, heads, comp, parts = answers(29)
    assert pct_of_run(runs("dk_sweep", "d_k_64_unscaled")[0]) in dk
    best_pre_ln = max(r["heldout_exact_match"] for r in runs("warmup_norm", "pre_ln_no_warmup"))
    assert f"pre-LN at most {pct(best_pre_ln)}" in warm and "post-LN reaches 0 %" in warm
    assert pct(by_length("alibi", 9)) in pos and pct(by_length("sinusoidal", 9)) in pos
    for group in ("with_und", "without_und"):
        assert pct(critical(1)[group]["exact_match"]) in heads, group
    assert sieben_und_seed(max) in comp and sieben_und_seed(min) in comp
    table = json.loads((RESULTS / "part_ablation.json").read_text())
    rows = {r["part"]: r for r in table["rows"]}
    assert f"cross-attention nothing comes out right ({pct(rows['dec.1.cross']['all']['exact_match'])})" in parts
    assert f"its self-attention almost nothing ({pct(rows['dec.1.self']['all']['exact_match'])})" in parts
    heads = [rows[f"dec.1.cross.h{h}"]["all"]["exact_match"] for h in range(4)]
    assert min(heads) > 0.9 and "no single head of that cross-attention is essential" in parts
    encoder = [
        r["all"]["exact_match"] for r in table["rows"] if r["kind"] == "sublayer" and r["part"].startswith("enc.")
    ]
    assert len(encoder) == 4 and min(encoder) >= 0.999 and "for at most 0.1 points" in parts


def test_the_desk_shows_one_chart_per_experiment_with_its_data_folded_beneath(client):
    page = client.get("/").text
    for n in (26, 27, 28, 29):
        section = re.search(rf'<section id="step-{n}".*?</section>', page, re.S).group(0)
        figures = re.findall(r'<figure data-figure="research-[^"]+".*?</figure>', section, re.S)
        assert len(figures) == len(answers(n)) - (n == 29), n  # step 29's last answer goes with the switch table
        for fig in figures:
            assert fig.count('class="chart-slot chart"') == 1, n
            # every table of the figure lies inside its folded "the data"
            folded = re.findall(r'<details class="figure-data desk-data">\s*<summary>The data.*?</details>', fig, re.S)
            assert fig.count("<table") == sum(f.count("<table") for f in folded) >= 1, n
    nav = re.search(r'<nav class="progress".*?</nav>', page, re.S).group(0)
    desk = re.findall(r'<li class="desk"><a href="#step-(\d+)"', nav)
    assert desk == ["26", "27", "28", "29"]
    assert len(re.findall(r'data-part="the path through the model"', nav)) == 25
    assert "Steps 1–25 are the path through the model; steps 26–29 are the research desk" in page
