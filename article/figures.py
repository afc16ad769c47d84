"""The data behind the article's figures, computed here from the model, its log and the formulas.

Each function returns plain JSON-able data; the page draws it with a charting library. Every figure
is recomputed by tests/page/test_figures.py.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from article.format import format_number
from model import ids
from model.train import ARTIFACTS, learning_rate
from model.transformer import Config, EncoderDecoder, count_parameters, parameter_breakdown, sinusoid_table

PAPER_VOCAB = 37_000  # "about 37 000" (paper §5.1); exactly 37 000 for the worked count
PAPER_SIZES = {
    "base": Config(PAPER_VOCAB, d_model=512, n_heads=8, d_ff=2048, n_layers=6),
    "big": Config(PAPER_VOCAB, d_model=1024, n_heads=16, d_ff=4096, n_layers=6),
}


def pe_pattern(positions: int = 50, d_model: int = 32) -> dict:
    """The sinusoidal table PE (positions × d_model), as drawn in step 5."""
    table = sinusoid_table(positions, d_model).numpy()
    return {"positions": positions, "d_model": d_model, "values": table.round(4).tolist()}


def pe_rotation(d_model: int = 32, offsets: tuple[int, ...] = (1, 2, 5, 10), positions: int = 40) -> dict:
    """How far PE(pos+k) is from R_k·PE(pos), R_k one 2×2 rotation per frequency: zero up to rounding."""
    table = sinusoid_table(positions + max(offsets), d_model).double().numpy()
    freqs = np.exp(-math.log(10000.0) * np.arange(0, d_model, 2) / d_model)
    rows = []
    for k in offsets:
        c, s = np.cos(freqs * k), np.sin(freqs * k)
        sin_p, cos_p = table[:positions, 0::2], table[:positions, 1::2]
        rotated = np.empty((positions, d_model))
        rotated[:, 0::2] = c * sin_p + s * cos_p  # sin(a+b) = sin a cos b + cos a sin b
        rotated[:, 1::2] = -s * sin_p + c * cos_p  # cos(a+b) = cos a cos b − sin a sin b
        err = np.abs(rotated - table[k : k + positions]).max()
        rows.append({"k": k, "max_abs_error": float(err)})
    return {"d_model": d_model, "positions": positions, "rows": rows}


def softmax_saturation(keys: int = 10, samples: int = 2000, seed: int = 0) -> dict:
    """Largest softmax weight and Σp(1−p) against d_k, for q·k with unit-variance components.

    Σ_i p_i(1 − p_i) is the trace of the softmax Jacobian: the total gradient the scores receive.
    Unscaled, q·k has variance d_k, the softmax saturates and this sum collapses (paper §3.2.1, footnote 4);
    dividing by √d_k keeps both curves flat.
    """
    rng = np.random.default_rng(seed)
    d_ks = [2**i for i in range(11)]  # 1 … 1024
    out = {"keys": keys, "samples": samples, "d_k": d_ks, "scaled": {}, "unscaled": {}}
    for label, scale in (("scaled", True), ("unscaled", False)):
        peak, grad = [], []
        for d in d_ks:
            q = rng.standard_normal((samples, 1, d))
            k = rng.standard_normal((samples, keys, d))
            scores = (q * k).sum(-1) / (math.sqrt(d) if scale else 1.0)
            p = np.exp(scores - scores.max(-1, keepdims=True))
            p /= p.sum(-1, keepdims=True)
            peak.append(float(p.max(-1).mean()))
            grad.append(float((p * (1 - p)).sum(-1).mean()))
        out[label] = {"max_weight": peak, "gradient": grad}
    return out


def lr_schedules(miniature_d: int, miniature_warmup: int, miniature_steps: int) -> dict:
    """lrate over steps for the paper's base model (d 512, warm-up 4 000, 100 000 steps) and ours."""

    def curve(d: int, warmup: int, steps: int, points: int = 200) -> dict:
        xs = sorted({max(1, round(steps * i / points)) for i in range(points + 1)} | {warmup})
        return {
            "step": xs,
            "lr": [learning_rate(s, d, warmup) for s in xs],
            "d_model": d,
            "warmup": warmup,
            "peak_step": warmup,
            "peak_lr": learning_rate(warmup, d, warmup),
        }

    return {"paper_base": curve(512, 4000, 100_000), "miniature": curve(miniature_d, miniature_warmup, miniature_steps)}


def training_curves() -> dict:
    """The shipped training log: loss and learning rate every 50 steps, held-out exact match every 500."""
    log = json.loads((ARTIFACTS / "training_log.json").read_text())
    records = [r for r in log["log"] if "loss" in r]
    evals = [r for r in records if "heldout_exact_match" in r]
    final = log["log"][-1]
    return {
        "train_config": log["train_config"],
        "step": [r["step"] for r in records],
        "loss": [r["loss"] for r in records],
        "lr": [r["lr"] for r in records],
        "eval_step": [r["step"] for r in evals],
        "heldout_exact_match": [r["heldout_exact_match"] for r in evals],
        "final": final,
    }


def parameter_count(model: EncoderDecoder) -> dict:
    """The count by hand from the live config, line by line, and the paper's sizes at V = 37 000.

    Every number is `parameter_breakdown(config)`'s, the model's own function; only the formulas'
    wording is written here.
    """
    c = model.cfg
    d, h, dk, dff, n, v = c.d_model, c.n_heads, c.d_k, c.d_ff, c.n_layers, c.vocab_size
    p = parameter_breakdown(c)
    if h * dk == d:  # the paper's choice d_k = d / h: each projection is d × d
        attn_formula = f"4·(d·d + d) = 4·({d}·{d} + {d})"
    else:
        attn_formula = f"3·(d·h·d_k + h·d_k) + h·d_k·d + d = 3·({d}·{h * dk} + {h * dk}) + {h * dk}·{d} + {d}"
    rows = [{"part": "embedding E (shared three ways)", "formula": f"V·d = {v}·{d}", "count": p["embedding"]}]
    if p["positions"]:
        rows.append({"part": "learned positions P", "formula": f"max_len·d = {c.max_len}·{d}", "count": p["positions"]})
    rows += [
        {"part": "attention sub-layer", "formula": attn_formula, "count": p["attention"]},
        {
            "part": "feed-forward sub-layer",
            "formula": f"2·d·d_ff + d_ff + d = 2·{d}·{dff} + {dff} + {d}",
            "count": p["ffn"],
        },
        {"part": "LayerNorm", "formula": f"2·d = 2·{d}", "count": p["norm"]},
        {"part": "encoder layer", "formula": "attention + FFN + 2 LayerNorms", "count": p["encoder_layer"]},
        {"part": "decoder layer", "formula": "2 attentions + FFN + 3 LayerNorms", "count": p["decoder_layer"]},
    ]
    if p["final_norms"]:
        rows.append({"part": "final stack norms (pre-LN)", "formula": "2 LayerNorms", "count": p["final_norms"]})
    terms = (
        "E"
        + (" + P" if p["positions"] else "")
        + f" + {n}·encoder layer + {n}·decoder layer"
        + (" + 2 LayerNorms" if p["final_norms"] else "")
    )
    rows.append({"part": "total", "formula": terms, "count": p["total"]})
    paper = {name: count_parameters(cfg) for name, cfg in PAPER_SIZES.items()}
    return {
        "rows": rows,
        "total": p["total"],
        "model_count": model.get_num_params(),
        "paper_vocab": PAPER_VOCAB,
        "paper": paper,
        "paper_reported": {"base": 65_000_000, "big": 213_000_000},
    }


GALLERY = Path(__file__).resolve().parent.parent / "research" / "gallery" / "heads.json"
DESK_ABLATION = GALLERY.parent.parent / "results" / "head_ablation.json"  # the desk's cross-head ablation
KIND_ORDER = ("encoder self-attention", "decoder masked self-attention", "cross-attention")
KIND_PART = dict(zip(KIND_ORDER, (("enc", "self"), ("dec", "self"), ("dec", "cross")), strict=True))


def head_title(kind: str, layer: int, head: int) -> str:
    """A gallery card's title, the head as a reader counts it (from 1): "Decoder 2 · cross-attention · head 4"."""
    stack, sublayer = KIND_PART[kind]
    words = ids.parse(ids.head_slice_id(ids.sublayer_id(stack, layer, sublayer), head)).reader_name()
    return words[:1].upper() + words[1:]


def head_description(peaks: list[dict]) -> str:
    """One line on what a head does, from its peak rates alone: where its rows most often peak, and how
    often, among the rows where that position exists (the finer "reordered" count is left to the card)."""
    top = max((p for p in peaks if p["rate"] is not None and not p["detail"]), key=lambda p: p["rate"])
    pct, chance = format_number(top["rate"], "pct0"), format_number(top["chance"], "pct0")
    where = f"{pct} of the rows where it can (chance: {chance})"
    if top["rate"] >= 0.9:
        return f"Almost always peaks on {top['label']}: {where}."
    if top["rate"] >= 0.5:
        return f"Mostly peaks on {top['label']}: {where}."
    return f"No single habit; its most frequent peak is on {top['label']}: {where}."


def head_gallery(path: Path = GALLERY) -> dict:
    """The gallery of step 28: one card per attention head, from research/gallery/heads.json
    (`python -m research.head_gallery`): peak rates against chance, entropy, exact match with the head
    switched off, the average pattern. Every figure on a card is computed here from the committed counts."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    n = raw["numbers"]
    cards = []
    for h in sorted(raw["heads"], key=lambda h: (KIND_ORDER.index(h["kind"]), h["layer"], h["head"])):
        peaks = []
        for c in raw["categories"][h["kind"]]:
            p = h["peaks"][c["key"]]
            peaks.append(
                {
                    "key": c["key"],
                    "label": c["label"],
                    "detail": c["key"].endswith("_reordered"),
                    "hits": p["hits"],
                    "rows": p["rows"],
                    "rate": p["hits"] / p["rows"] if p["rows"] else None,
                    "chance": p["chance_sum"] / p["rows"] if p["rows"] else None,
                }
            )
        off = h["switched_off_correct"]
        cards.append(
            {
                "kind": h["kind"],
                "layer": h["layer"] + 1,
                "head": h["head"] + 1,
                "title": head_title(h["kind"], h["layer"], h["head"]),
                "description": head_description(peaks),
                "peaks": peaks,
                "rows": h["rows"],
                "entropy_bits": h["entropy_bits_sum"] / h["rows"],
                "uniform_bits": h["uniform_bits_sum"] / h["rows"],
                "switched_off_correct": off,
                "switched_off_exact_match": off / n,
                "pattern": h["pattern"],
                "rows_axis": raw["pattern"]["source" if h["kind"] == KIND_ORDER[0] else "reads"],
                "cols_axis": raw["pattern"]["reads" if h["kind"] == KIND_ORDER[1] else "source"],
            }
        )
    log = json.loads((ARTIFACTS / "training_log.json").read_text())
    desk = json.loads(DESK_ABLATION.read_text()) if DESK_ABLATION.is_file() else {"runs": []}
    return {
        "weights_version": raw["weights_version"],
        "numbers": n,
        "baseline_correct": raw["baseline_correct"],
        "pattern_numbers": raw["pattern"]["numbers"],
        "pattern_example": raw["pattern"]["example"],
        "model": {"steps": log["log"][-1]["step"], "seed": log["train_config"]["seed"]},
        "desk": {"steps": sorted({r["steps"] for r in desk["runs"]}), "seeds": sorted(r["seed"] for r in desk["runs"])},
        "kinds": list(KIND_ORDER),
        "cards": cards,
    }
