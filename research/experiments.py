"""The research desk's experiments: which runs each one needs, and the table it reports.

Each experiment is data: a name, defaults (seeds, steps), a function from options to run specs,
and a function from finished runs to summary rows. `python -m research <name>` runs one;
`followups` is the group of the four follow-up studies.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from model import ids
from model.transformer import MODERN
from research.experiment_kit import Experiment, Options, by_variant, run_spec, seeds_of, value_stats
from research.harness import RunSpec, has_sieben_und, mean, subset_exact_match

# ---- 1. Ablations (Table 3 at 1/16 scale) ----------------------------------------------------

# name, what changes, Config overrides, TrainConfig overrides, the paper's comparable Table 3 row
ABLATIONS: list[tuple[str, str, dict, dict, tuple | None]] = [
    ("baseline", "the recipe: h 4, d_k 8, N 2, post-LN, sinusoids", {}, {}, ("base", 4.92, 25.8)),
    ("heads_1", "1 head, d_k 32", {"n_heads": 1}, {}, ("(A) h 1, d_k 512", 5.29, 24.9)),
    ("heads_8", "8 heads, d_k 4", {"n_heads": 8}, {}, ("(A) h 16, d_k 32", 4.91, 25.8)),
    ("heads_16", "16 heads, d_k 2", {"n_heads": 16}, {}, ("(A) h 32, d_k 16", 5.01, 25.4)),
    ("d_k_4", "d_k 4 (h 4, so attention is 16 wide)", {"d_k": 4}, {}, ("(B) d_k 32", 5.01, 25.4)),
    ("no_scaling", "scores not divided by √d_k", {"scale_scores": False}, {}, None),
    ("no_label_smoothing", "ε_ls 0", {}, {"label_smoothing": 0.0}, ("(D) ε_ls 0", 4.67, 25.3)),
    ("no_dropout", "P_drop 0", {"dropout": 0.0}, {}, ("(D) P_drop 0", 5.77, 24.6)),
    ("learned_positions", "learned positional embedding", {"positional": "learned"}, {}, ("(E) learned", 4.92, 25.7)),
    ("depth_1", "N 1", {"n_layers": 1}, {}, ("(C) N 2", 6.11, 23.7)),
    ("depth_3", "N 3", {"n_layers": 3}, {}, ("(C) N 8", 4.88, 25.5)),
    ("pre_ln", "pre-LN sub-layers, final LayerNorm", {"norm_first": True}, {}, None),
    ("no_warmup", "no warm-up: lr = d^-0.5 · step^-0.5", {}, {"warmup": 0}, None),
]
PAPER_BASE_PPL = 4.92


def ablation_specs(o: Options) -> list[RunSpec]:
    return [run_spec("ablations", name, seed, o, cfg, tc) for seed in seeds_of(o) for name, _, cfg, tc, _ in ABLATIONS]


def _direction(delta: float | None, spread: float | None, lower_is_better: bool = True) -> str | None:
    if delta is None or spread is None:
        return None
    if abs(delta) <= spread:
        return "same"
    return "worse" if (delta > 0) == lower_is_better else "better"


def ablation_summary(runs: list[dict]) -> list[dict]:
    rows, info = [], {name: (desc, paper) for name, desc, _, _, paper in ABLATIONS}
    groups = by_variant(runs, [a[0] for a in ABLATIONS])
    base = dict(groups).get("baseline", [])
    base_loss = value_stats([r["heldout_loss"] for r in base])
    for variant, rs in groups:
        desc, paper = info[variant]
        loss = value_stats([r["heldout_loss"] for r in rs])
        em = value_stats([r["heldout_exact_match"] for r in rs])
        delta = (loss["mean"] - base_loss["mean"]) if base and variant != "baseline" else None
        # seed spread: the larger range of the two variants, from those with at least two seeds
        ranges = [g["max"] - g["min"] for g, n in ((base_loss, len(base)), (loss, len(rs))) if n >= 2]
        spread = max(ranges) if ranges else None
        paper_dir = None
        if paper and variant != "baseline":
            d = paper[1] - PAPER_BASE_PPL
            paper_dir = "same" if abs(d) <= 0.03 else ("worse" if d > 0 else "better")
        mini_dir = _direction(delta, spread)
        rows.append(
            {
                "variant": variant,
                "description": desc,
                "params": rs[0]["params"],
                "seeds": [r["seed"] for r in rs],
                "exact_match": em,
                "heldout_loss": loss,
                "perplexity": {
                    "values": [r["heldout_perplexity"] for r in rs],
                    "mean": math.exp(loss["mean"]) if loss["mean"] is not None else None,
                },
                "steps_to_99": [r["steps_to_99"] for r in rs],
                "wall_seconds": mean([r["wall_seconds"] for r in rs]),
                "loss_delta_vs_baseline": delta,
                "seed_spread": spread if variant != "baseline" else None,
                "paper_row": paper[0] if paper else None,
                "paper_ppl": paper[1] if paper else None,
                "paper_bleu": paper[2] if paper else None,
                "paper_direction": paper_dir,
                "miniature_direction": mini_dir,
                "agrees": (paper_dir == mini_dir) if paper_dir and mini_dir else None,
            }
        )
    return rows


# ---- 2. Extrapolation to longer inputs --------------------------------------------------------

POSITIONALS = ["sinusoidal", "learned", "rotary", "alibi"]
TRAIN_MAX_WORDS = 6


def extrapolation_specs(o: Options) -> list[RunSpec]:
    # sinusoidal and learned first (the paper's question), then rotary and ALiBi
    return [
        run_spec("extrapolation", p, seed, o, {"positional": p}, {"max_words": TRAIN_MAX_WORDS})
        for pair in (POSITIONALS[:2], POSITIONALS[2:])
        for seed in seeds_of(o)
        for p in pair
    ]


def extrapolation_summary(runs: list[dict], order: list[str] | None = None) -> list[dict]:
    rows = []
    for variant, rs in by_variant(runs, order or POSITIONALS):
        lengths = sorted({int(k) for r in rs for k in r["exact_match_by_length"]})
        for words in lengths:
            cells = [r["exact_match_by_length"].get(str(words)) for r in rs]
            rows.append(
                {
                    "variant": variant,
                    "words": words,
                    "trained_on": words <= TRAIN_MAX_WORDS,
                    "n": next(c["n"] for c in cells if c),
                    "seeds": [r["seed"] for r in rs],
                    "exact_match": value_stats([c["exact_match"] if c else None for c in cells]),
                }
            )
        for label, test in (("≤6", lambda w: w <= TRAIN_MAX_WORDS), ("7–9", lambda w: w > TRAIN_MAX_WORDS)):
            per_seed = []
            for r in rs:
                cells = [c for k, c in r["exact_match_by_length"].items() if test(int(k))]
                per_seed.append(sum(c["correct"] for c in cells) / sum(c["n"] for c in cells) if cells else None)
            rows.append(
                {
                    "variant": variant,
                    "words": label,
                    "trained_on": label == "≤6",
                    "n": sum(c["n"] for k, c in rs[0]["exact_match_by_length"].items() if test(int(k))),
                    "seeds": [r["seed"] for r in rs],
                    "exact_match": value_stats(per_seed),
                }
            )
    return rows


# ---- 3. Alignment in last-layer cross-attention ------------------------------------------------


def alignment_specs(o: Options) -> list[RunSpec]:
    # The same runs as the ablations' baseline (same key), so their trained weights are reused.
    return [run_spec("alignment", "baseline", seed, o, analysis="alignment") for seed in seeds_of(o)]


def _cross(layer: int, head: int | None = None) -> str:
    """A decoder layer's cross-attention (and one of its heads) as a reader counts them, from 1 (model/ids.py):
    the results keep the 0-based indices they were computed with, the page shows these names."""
    sid = ids.sublayer_id("dec", layer, "cross")
    return ids.parse(sid if head is None else ids.head_slice_id(sid, head)).reader_name()


def _layer(layer: int) -> str:
    """ "decoder 2": the layer of a study that is all about cross-attention (its title says so)."""
    return _cross(layer).split(" · ")[0]


KINDS = ("monotone", "reordered", "all")


def _alignment_row(layer, convention: str, who: str, seeds: list, counts: dict, values: dict) -> dict:
    """One row of the alignment table; `values` holds, for each kind of pair, the rates measured (one a seed)."""
    return {
        "layer": layer,
        "convention": convention,
        "who": who,
        "seeds": seeds,
        "counts": counts,
        **{kind: value_stats(rates) for kind, rates in values.items()},
    }


def alignment_summary(runs: list[dict]) -> list[dict]:
    runs = sorted([r for r in runs if "analysis" in r], key=lambda r: r["seed"])
    if not runs:
        return []
    rows, seeds = [], [r["seed"] for r in runs]
    for i, entry in enumerate(runs[0]["analysis"]["layers"]):
        per_run = [r["analysis"]["layers"][i] for r in runs]
        layer, convention, counts = _layer(entry["layer"]), entry["convention"], entry["counts"]
        for h in range(len(entry["heads"])):
            who = _cross(entry["layer"], h).rsplit(" · ", 1)[-1]  # "head 1", its layer beside it
            rates = {k: [p["heads"][h][k] for p in per_run] for k in KINDS}
            rows.append(_alignment_row(layer, convention, who, seeds, counts, rates))
        rates = {k: [p["any_head"][k] for p in per_run] for k in KINDS}
        rows.append(_alignment_row(layer, convention, "any head", seeds, counts, rates))
    base = runs[0]["analysis"]["baselines"]
    fixed = f"baseline: best fixed offset (c = {base['best_offset']})"
    each_kind = {k: [base["best_offset_per_kind"][k]] for k in ("monotone", "reordered")}
    return rows + [
        _alignment_row(None, "predicts", fixed, [], base["counts"], {k: [base["best_offset_rates"][k]] for k in KINDS}),
        _alignment_row(
            None,
            "predicts",
            "baseline: best fixed offset for each kind",
            [],
            base["counts"],
            {**each_kind, "all": [None]},
        ),
        _alignment_row(
            None,
            "predicts",
            "baseline: length-proportional diagonal",
            [],
            base["counts"],
            {k: [base["diagonal_rates"][k]] for k in KINDS},
        ),
    ]


# ---- 4. Follow-ups ----------------------------------------------------------------------------


def head_ablation_specs(o: Options) -> list[RunSpec]:
    return [run_spec("head_ablation", "baseline", seed, o, analysis="head_ablation") for seed in seeds_of(o)]


def head_ablation_summary(runs: list[dict]) -> list[dict]:
    runs = sorted([r for r in runs if "analysis" in r], key=lambda r: r["seed"])
    if not runs:
        return []
    rows, last = [], runs[0]["config"]["n_layers"] - 1  # research/heads.py switches off the last layer's heads
    for i, row in enumerate(runs[0]["analysis"]["rows"]):
        per = [r["analysis"]["rows"][i] for r in runs]
        heads = row["heads"]
        ablated = "none" if not heads else _cross(last, heads[0]) if len(heads) == 1 else "all heads"
        rows.append(
            {
                "ablated": ablated,
                "seeds": [r["seed"] for r in runs],
                **{
                    f"{s}_{m}": value_stats([p[s][m] for p in per])
                    for s in ("with_und", "without_und")
                    for m in ("exact_match", "loss")
                },
                "n_with_und": row["with_und"]["n"],
                "n_without_und": row["without_und"]["n"],
            }
        )
    return rows


WARMUP_NORM = [
    ("post_ln_warmup", {}, {}),
    ("post_ln_no_warmup", {}, {"warmup": 0}),
    ("pre_ln_warmup", {"norm_first": True}, {}),
    ("pre_ln_no_warmup", {"norm_first": True}, {"warmup": 0}),
]


def warmup_norm_specs(o: Options) -> list[RunSpec]:
    return [run_spec("warmup_norm", name, seed, o, cfg, tc) for seed in seeds_of(o) for name, cfg, tc in WARMUP_NORM]


def _curve_at(r: dict, step: int) -> float | None:
    return next((c["heldout_exact_match"] for c in r["curve"] if c["step"] == step), None)


def training_summary(order: list[str]) -> Callable[[list[dict]], list[dict]]:
    def summarise(runs: list[dict]) -> list[dict]:
        return [
            {
                "variant": v,
                "seeds": [r["seed"] for r in rs],
                "params": rs[0]["params"],
                "exact_match": value_stats([r["heldout_exact_match"] for r in rs]),
                "heldout_loss": value_stats([r["heldout_loss"] for r in rs]),
                "perplexity": value_stats([r["heldout_perplexity"] for r in rs]),
                "steps_to_99": [r["steps_to_99"] for r in rs],
                "exact_match_at_250": value_stats([_curve_at(r, 250) for r in rs]),
                "exact_match_at_500": value_stats([_curve_at(r, 500) for r in rs]),
                "final_training_loss": value_stats([r["final_training_loss"] for r in rs]),
                "wall_seconds": mean([r["wall_seconds"] for r in rs]),
            }
            for v, rs in by_variant(runs, order)
        ]

    return summarise


COMPOSITIONAL = [("baseline", None), ("no_sieben_und", "no_sieben_und")]


def compositional_specs(o: Options) -> list[RunSpec]:
    return [run_spec("compositional", name, seed, o, keep=keep) for seed in seeds_of(o) for name, keep in COMPOSITIONAL]


def compositional_summary(runs: list[dict]) -> list[dict]:
    rows = []
    for variant, rs in by_variant(runs, [c[0] for c in COMPOSITIONAL]):
        for subset, test in (("sieben und …", has_sieben_und), ("all other", lambda n: not has_sieben_und(n))):
            cells = [subset_exact_match(r, test) for r in rs]
            rows.append(
                {
                    "variant": variant,
                    "subset": subset,
                    "n": cells[0][1],
                    "seeds": [r["seed"] for r in rs],
                    "exact_match": value_stats([c[0] for c in cells]),
                }
            )
    return rows


DK_SWEEP = [2, 4, 8, 16, 32, 64]
DK_RUN_ORDER = [64, 2, 32, 8, 16, 4]  # the ends first, so that a run cut short still spans the range


def dk_sweep_specs(o: Options) -> list[RunSpec]:
    return [
        run_spec("dk_sweep", f"d_k_{d}_{'scaled' if s else 'unscaled'}", seed, o, {"d_k": d, "scale_scores": s})
        for seed in seeds_of(o)
        for d in DK_RUN_ORDER
        for s in (True, False)
    ]


def dk_sweep_summary(runs: list[dict]) -> list[dict]:
    order = [f"d_k_{d}_{s}" for d in DK_SWEEP for s in ("scaled", "unscaled")]
    rows = training_summary(order)(runs)
    for row in rows:
        _, _, d, s = row["variant"].split("_")
        row.update(d_k=int(d), scaled=s == "scaled")
    return rows


# ---- 5. Today's recipe beside 2017's ----------------------------------------------------------
# The modern miniature (model.transformer.MODERN) trained exactly as the desk trained the paper's:
# the ablations' training (2 500 steps, 2 seeds) and the extrapolation study (1 500 steps on ≤ 6 words,
# 3 seeds). Its summary sets the desk's own 2017 runs beside it, read from their results files, so
# the 2017 numbers are the ones already published, not a second training of them.


def modern_specs(o: Options) -> list[RunSpec]:
    return [run_spec("modern", "modern", seed, o, MODERN) for seed in seeds_of(o)]


def modern_extrapolation_specs(o: Options) -> list[RunSpec]:
    return [
        run_spec("modern_extrapolation", "modern", seed, o, MODERN, {"max_words": TRAIN_MAX_WORDS})
        for seed in seeds_of(o)
    ]


def _desk_runs(experiment: str, variant: str) -> list[dict]:
    from research.harness import RESULTS, read_runs, results_file

    return [r for r in read_runs(results_file(RESULTS, experiment)) if r["variant"] == variant]


def modern_summary(runs: list[dict]) -> list[dict]:
    """2017 (the ablations' baseline runs) and modern (this experiment's), one row each."""
    both = [{**r, "variant": "2017"} for r in _desk_runs("ablations", "baseline")] + runs
    rows = training_summary(["2017", "modern"])(both)
    for row in rows:
        rs = [r for r in both if r["variant"] == row["variant"]]
        row["steps"] = rs[0]["steps"]
    return rows


def modern_extrapolation_summary(runs: list[dict]) -> list[dict]:
    """The desk's sinusoidal (2017) and rotary-only runs, and the modern recipe's, by input length."""
    desk = [r for v in ("sinusoidal", "rotary") for r in _desk_runs("extrapolation", v)]
    rows = extrapolation_summary(desk + runs, ["sinusoidal", "rotary", "modern"])
    return [{**row, "variant": {"sinusoidal": "2017"}.get(row["variant"], row["variant"])} for row in rows]


EXPERIMENTS: dict[str, Experiment] = {
    e.name: e
    for e in [
        Experiment("ablations", 2, 2500, ablation_specs, ablation_summary),
        Experiment("extrapolation", 3, 1500, extrapolation_specs, extrapolation_summary),
        Experiment("alignment", 2, 2500, alignment_specs, alignment_summary),
        Experiment("head_ablation", 2, 2500, head_ablation_specs, head_ablation_summary),
        Experiment("warmup_norm", 2, 2500, warmup_norm_specs, training_summary([w[0] for w in WARMUP_NORM])),
        Experiment("compositional", 2, 2500, compositional_specs, compositional_summary),
        Experiment("dk_sweep", 1, 1000, dk_sweep_specs, dk_sweep_summary),
        Experiment("modern", 2, 2500, modern_specs, modern_summary),
        Experiment("modern_extrapolation", 3, 1500, modern_extrapolation_specs, modern_extrapolation_summary),
    ]
}
GROUPS = {"followups": ["head_ablation", "warmup_norm", "compositional", "dk_sweep"]}


def expand(name: str) -> list[str]:
    return GROUPS.get(name, [name])
