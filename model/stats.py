"""Figures about the trained model as a whole (not one input), for the model card and the article."""

from __future__ import annotations

import json

import torch

from model.data import heldout_numbers, make_batch
from model.train import ARTIFACTS
from model.transformer import EncoderDecoder


@torch.no_grad()
def attention_peaks(model: EncoderDecoder, numbers: list[int]) -> dict[str, float]:
    """Mean over rows of each attention row's largest weight: encoder self-attention vs cross-attention.

    Teacher-forced on the gold German (the model reproduces it on all but a handful of held-out
    numbers); padding rows and columns are left out; layers and heads are averaged.
    """
    model.eval()
    src, dec_in, _ = make_batch(numbers)
    model(src, dec_in)
    src_rows = (src != model.cfg.pad_id)[:, None, :]  # (B, 1, n) real source rows
    tgt_rows = (dec_in != model.cfg.pad_id)[:, None, :]  # (B, 1, m)

    def mean_peak(weights: list[torch.Tensor], rows: torch.Tensor) -> float:
        peaks = torch.stack([w.max(-1).values for w in weights])  # (L, B, h, T_q)
        mask = rows.expand(peaks.shape[1], peaks.shape[2], -1).expand_as(peaks)
        return float(peaks[mask].mean())

    enc = [layer.self_attn.weights for layer in model.encoder_layers]
    cross = [layer.src_attn.weights for layer in model.decoder_layers]
    return {"heldout_max_weight_self": mean_peak(enc, src_rows),
            "heldout_max_weight_cross": mean_peak(cross, tgt_rows)}


def parameter_figures(model: EncoderDecoder) -> dict[str, int]:
    enc_layer = sum(p.numel() for p in model.encoder_layers[0].parameters())
    dec_layer = sum(p.numel() for p in model.decoder_layers[0].parameters())
    return {"param_count": model.get_num_params(), "params_embedding": model.embedding.numel(),
            "params_encoder_layer": enc_layer, "params_decoder_layer": dec_layer}


def training_summary() -> dict:
    """The shipped training log's last record and recipe."""
    log = json.loads((ARTIFACTS / "training_log.json").read_text())
    final = log["log"][-1]
    return {"train_config": log["train_config"], "steps": final["step"], "seconds": final["seconds"],
            "heldout_exact_match": final["heldout_exact_match"], "heldout_loss": final["heldout_loss"],
            "checkpoints_averaged": final["averaged"]}


def model_figures(model: EncoderDecoder) -> dict:
    """Everything model-level the article quotes, computed (once, at start-up) from the model."""
    c = model.cfg
    return {**parameter_figures(model), **attention_peaks(model, heldout_numbers()),
            "heldout_exact_match": training_summary()["heldout_exact_match"],
            "vocab_size": c.vocab_size, "d_model": c.d_model, "n_heads": c.n_heads, "d_k": c.d_k,
            "d_ff": c.d_ff, "n_layers": c.n_layers, "sqrt_d_model": c.d_model ** 0.5}
