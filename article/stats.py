"""Figures about the trained model as a whole (not one input), for the model card and the article."""

from __future__ import annotations

import json
import math
from pathlib import Path

import torch

from model.data import heldout_numbers, make_batch
from model.train import ARTIFACTS
from model.transformer import EncoderDecoder


@torch.no_grad()
def attention_peaks_per_head(model: EncoderDecoder, numbers: list[int]) -> dict:
    """Mean over rows of each attention row's largest weight, per layer and head.

    Encoder self-attention against cross-attention, teacher-forced on the gold German (the model
    reproduces it on all held-out numbers); padding rows are left out.
    """
    model.eval()
    src, dec_in, _ = make_batch(numbers)
    model(src, dec_in)

    def per_head(weights: list[torch.Tensor], rows: torch.Tensor) -> list[list[float]]:
        out = []
        for w in weights:  # (B, h, T_q, T_k)
            peaks = w.max(-1).values  # (B, h, T_q)
            mask = rows[:, None, :].expand_as(peaks)
            out.append([float(peaks[:, h][mask[:, h]].mean()) for h in range(peaks.shape[1])])
        return out

    real_src = src != model.cfg.pad_id
    return {
        "numbers": len(numbers),
        "self": per_head([layer.self_attn.weights for layer in model.encoder_layers], real_src),
        "cross": per_head([layer.src_attn.weights for layer in model.decoder_layers], dec_in != model.cfg.pad_id),
        "uniform_over_source": 1.0 / float(real_src.sum(-1).float().mean()),
    }


def attention_peaks(per_head: dict) -> dict[str, float]:
    """The article's step-8 pair: the per-head figures averaged over layers and heads (every head of
    a kind sees the same rows, so this is also the mean over all rows)."""

    def mean(grid: list[list[float]]) -> float:
        return sum(map(sum, grid)) / sum(map(len, grid))

    return {"heldout_max_weight_self": mean(per_head["self"]), "heldout_max_weight_cross": mean(per_head["cross"])}


def parameter_figures(model: EncoderDecoder) -> dict[str, int]:
    enc_layer = sum(p.numel() for p in model.encoder_layers[0].parameters())
    dec_layer = sum(p.numel() for p in model.decoder_layers[0].parameters())
    return {
        "param_count": model.get_num_params(),
        "params_embedding": model.embedding.numel(),
        "params_encoder_layer": enc_layer,
        "params_decoder_layer": dec_layer,
    }


def training_summary(artifacts: Path = ARTIFACTS) -> dict:
    """The shipped training log's last record and recipe (`artifacts`: the model's folder)."""
    log = json.loads((artifacts / "training_log.json").read_text())
    final = log["log"][-1]
    return {
        "train_config": log["train_config"],
        "steps": final["step"],
        "seconds": final["seconds"],
        "heldout_exact_match": final["heldout_exact_match"],
        "heldout_loss": final["heldout_loss"],
        "checkpoints_averaged": final["averaged"],
    }


def loss_yardsticks(vocab_size: int, artifacts: Path = ARTIFACTS) -> dict[str, float | int]:
    """Steps 18 and 20's yardsticks, from the model's vocabulary and the shipped recipe and log.

    The smoothed target puts 1 − ε + ε/V on the right piece: the probability that minimises the
    training loss (step 18's ceiling). A model that spreads its probability evenly over V tokens
    scores ln V under any smoothing (the q_t sum to 1): the yardstick for the log's first loss."""
    log = json.loads((artifacts / "training_log.json").read_text())
    eps = log["train_config"]["label_smoothing"]
    first = log["log"][0]
    return {
        "label_smoothing_eps": eps,
        "smoothing_ceiling": 1 - eps + eps / vocab_size,
        "uniform_loss": math.log(vocab_size),
        "ceiling_loss": -math.log(1 - eps + eps / vocab_size),
        "first_logged_loss": first["loss"],
        "first_logged_step": first["step"],
        "log_every": log["train_config"]["log_every"],
    }


def model_figures(model: EncoderDecoder, per_head: dict | None = None, artifacts: Path = ARTIFACTS) -> dict:
    """Everything model-level the article quotes, computed (once, at start-up) from the model."""
    c = model.cfg
    per_head = per_head or attention_peaks_per_head(model, heldout_numbers())
    return {
        **parameter_figures(model),
        **attention_peaks(per_head),
        "heldout_exact_match": training_summary(artifacts)["heldout_exact_match"],
        "vocab_size": c.vocab_size,
        "d_model": c.d_model,
        "n_heads": c.n_heads,
        "d_k": c.d_k,
        "d_ff": c.d_ff,
        "n_layers": c.n_layers,
        "sqrt_d_model": c.d_model**0.5,
        "sqrt_d_k": c.d_k**0.5,
        **loss_yardsticks(c.vocab_size, artifacts),
    }
