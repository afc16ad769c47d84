"""Go-deeper figures from the model's shapes, its config, the shipped training log and the beam search, for
the reader's input where it matters (article/deeper.py): the parameters by block and the rows of E the input
reads, the forward pass's FLOPs at the input's lengths, one dropout draw over its embeddings, the
learning-rate schedule and Adam's bias corrections beside the log, and the beam's table."""

from __future__ import annotations

import numpy as np

from article.deeper import Column, Reader, Table
from article.figures import training_curves
from model import ids
from model.train import ADAM_BETAS, TrainConfig, learning_rate


def _block(param_id: str) -> str:
    """A parameter's block as a reader names it: "encoder 1 · self-attention" (its LayerNorm included), or E."""
    name = ids.parse(param_id)
    return name.reader_name() if name.stack else name.where


def parameters_by_block(r: Reader) -> list[Table]:
    blocks: dict[str, list[int]] = {}
    for pid, value in r.params.items():
        b = blocks.setdefault(_block(pid), [0, 0])
        b[0], b[1] = b[0] + 1, b[1] + int(value.size)
    total = sum(n for _, n in blocks.values())
    rows = [[name, k, n, n / total] for name, (k, n) in blocks.items()]
    rows.append(["total", sum(k for k, _ in blocks.values()), total, 1.0])
    count = Table(
        "parameters-by-block",
        "The miniature's parameters, block by block",
        "Counted from the model's own tensors, each sub-layer with its LayerNorm; the total is the model "
        "card's. Every input uses the same parameters, whatever its length.",
        [Column("block"), Column("tensors", "int"), Column("parameters", "int"), Column("share", "pct1", bar=True)],
        rows,
    )
    cfg, t = r.model.cfg, r.trace
    src, tgt = ({int(i) for i in t.node(ids.join(s, "ids")).value.tolist()} for s in ("src", "tgt"))
    read = [["the encoder's lookups", len(src)], ["the decoder's lookups", len(tgt)], ["both", len(src | tgt)]]
    touched = Table(
        "rows-of-e-read",
        "The rows of E your input looks up",
        "A lookup reads only its tokens' rows of E, so an input touches a small part of the "
        "embedding; the output layer, h·Eᵀ, still uses every row.",
        [
            Column("rows read by"),
            Column("distinct rows", "int"),
            Column("entries", "int"),
            Column("share of E", "pct1", bar=True),
        ],
        [[label, k, k * cfg.d_model, k / cfg.vocab_size] for label, k in read],
    )
    return [count, touched]


def flop_rows(n: int, m: int, cfg) -> list[list]:
    """The forward pass's multiply-add FLOPs (2 per multiply-add) for n source and m decoder rows, by part."""
    d, inner, dff, layers = cfg.d_model, cfg.n_heads * cfg.d_k, cfg.d_ff, cfg.n_layers
    return [
        ["encoder: Q, K, V and output projections", "N·4·(2·n·d·h·d_k)", layers * 8 * n * d * inner],
        ["encoder: scores and mixing", "N·2·(2·n·n·h·d_k)", layers * 4 * n * n * inner],
        ["encoder: feed-forward", "N·2·(2·n·d·d_ff)", layers * 4 * n * d * dff],
        ["decoder: masked self-attention projections", "N·4·(2·m·d·h·d_k)", layers * 8 * m * d * inner],
        ["decoder: masked self-attention scores and mixing", "N·2·(2·m·m·h·d_k)", layers * 4 * m * m * inner],
        ["decoder: cross-attention projections", "N·2·(2·(m + n)·d·h·d_k)", layers * 4 * (m + n) * d * inner],
        ["decoder: cross-attention scores and mixing", "N·2·(2·m·n·h·d_k)", layers * 4 * m * n * inner],
        ["decoder: feed-forward", "N·2·(2·m·d·d_ff)", layers * 4 * m * d * dff],
        ["output layer h·Eᵀ", "2·m·d·V", 2 * m * d * cfg.vocab_size],
    ]


def flops(r: Reader) -> list[Table]:
    n, m = len(r.trace.source_tokens), len(r.trace.target_tokens)
    parts = flop_rows(n, m, r.model.cfg)
    total = sum(p[2] for p in parts)
    rows = [[part, formula, count, count / total] for part, formula, count in parts]
    rows.append(["total", "", total, 1.0])
    return [
        Table(
            "forward-flops",
            f"One forward pass over your input: n = {n} source rows, m = {m} decoder rows",
            "A product of an a × b by a b × c matrix costs 2·a·b·c operations. The terms in n·n, m·m and m·n "
            "(scores and mixing) grow fastest with length, but at lengths far below d the products with the "
            "weight matrices cost most.",
            [Column("part"), Column("formula"), Column("FLOPs", "int"), Column("share", "pct1", bar=True)],
            rows,
        )
    ]


def dropout_draw(r: Reader) -> list[Table]:
    p = r.model.cfg.dropout
    x = r.value(ids.join("src", "x0"))
    keep = np.random.default_rng(r.trace.number).random(x.shape) >= p  # seeded: the page is reproducible
    after = np.where(keep, x / (1 - p), 0.0)
    d = x.shape[1]
    rows = [
        [f"{i + 1}: {tok}", int(d - keep[i].sum()), float(x[i].sum()), float(after[i].sum())]
        for i, tok in enumerate(r.trace.source_tokens)
    ]
    rows.append(["all rows", int(keep.size - keep.sum()), float(x.sum()), float(after.sum())])
    return [
        Table(
            "dropout-draw",
            f"One dropout mask over your encoder input x⁽⁰⁾ (p = {p:g}, {d} entries a row, "
            "drawn with your number as the seed)",
            "Training draws a fresh mask like this one at every step: each entry is zeroed with probability p "
            "and the rest are multiplied by 1/(1 − p), which keeps every entry's expected value, so a row's sum "
            "moves up or down by chance. Everything else on this site is the model at inference, where "
            "dropout is off.",
            [
                Column("row"),
                Column("entries zeroed", "int"),
                Column("sum before", "fixed3"),
                Column("sum after dropout", "fixed3"),
            ],
            rows,
        )
    ]


def adam_rows(d_model: int, warmup: int, steps: int, log: dict) -> list[list]:
    """Steps through warm-up and decay: the schedule's rate, the log's rate and loss (where logged) and
    Adam's bias corrections 1/(1 − β^t)."""
    logged = dict(zip(log["step"], zip(log["lr"], log["loss"], strict=True), strict=True))
    b1, b2 = ADAM_BETAS
    marks = sorted({1, 10, warmup // 4, warmup // 2, warmup, 2 * warmup, steps // 2, steps - steps % 50})
    return [
        [
            s,
            learning_rate(s, d_model, warmup),
            logged.get(s, (None, None))[0],
            logged.get(s, (None, None))[1],
            1 / (1 - b1**s),
            1 / (1 - b2**s),
        ]
        for s in marks
    ]


def adam_schedule(r: Reader) -> list[Table]:
    log = training_curves()
    cfg = log["train_config"]
    warmup, steps = cfg.get("warmup", TrainConfig().warmup), cfg["steps"]
    rows = adam_rows(r.model.cfg.d_model, warmup, steps, log)
    return [
        Table(
            "adam-schedule",
            f"The miniature's training: warm-up {warmup} steps of {steps}, "
            f"β1 = {ADAM_BETAS[0]:g}, β2 = {ADAM_BETAS[1]:g}",
            "The rate climbs linearly through the warm-up and then falls as 1/√step; the log's rate is the "
            "formula's. Adam's bias corrections are large only in the first steps, while m and v have averaged "
            "few gradients; β2's, the slower average, takes longer to reach 1. The loss is the shipped log's "
            "(recorded every 50 steps; – where none was).",
            [
                Column("step", "int"),
                Column("lr by the formula", "sig3"),
                Column("lr in the log", "sig3"),
                Column("training loss", "fixed3"),
                Column("1/(1 − β1^t)", "fixed3"),
                Column("1/(1 − β2^t)", "fixed3"),
            ],
            rows,
        )
    ]


def beam_table(r: Reader) -> list[Table]:
    b = r.beam
    if b is None:
        return []
    alive = [
        [f"step {s['step']}", i + 1, " ".join(h["tokens"]), h["log_prob"]]
        for s in b["steps"]
        for i, h in enumerate(s["alive"])
    ]
    best = b["best"]["tokens"]
    done = [
        [" ".join(h["tokens"]), h["log_prob"], h["length_penalty"], h["score"], h["tokens"] == best]
        for h in b["finished"]
    ]
    k = b["beam_size"]
    return [
        Table(
            "beam-steps",
            f"Your beam, step by step (k = {k})",
            "At each step every kept hypothesis is extended by every piece and the k most probable by total "
            "log-probability stay; a hypothesis that writes </s> leaves the beam for the finished list.",
            [Column("step"), Column("rank", "int"), Column("hypothesis"), Column("log p", "fixed3")],
            alive,
        ),
        Table(
            "beam-finished",
            f"The finished candidates, scored with the length penalty (α = {b['alpha']:g})",
            "A finished candidate's score is its log-probability divided by the length penalty lp(Y); the "
            "highest score is the translation, which need not be the highest log-probability.",
            [
                Column("candidate"),
                Column("log p", "fixed3"),
                Column("lp(Y)", "fixed3"),
                Column("score", "fixed3"),
                Column("chosen"),
            ],
            done,
        ),
    ]
