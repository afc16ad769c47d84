"""Per-head ablation of last-layer cross-attention, at inference.

A head is removed by zeroing its d_k input columns of W^O: the concatenation's slice for head h
then contributes nothing to the output (W^O's bias stays). Model weights are copied, never edited
in place. Scored on held-out numbers whose German has an "und" (a reordered tens-ones pair) and on
those without.
"""

from __future__ import annotations

import copy

import torch

from model.numbers import to_german_pieces
from model.train import exact_match, heldout_loss
from model.transformer import EncoderDecoder


def has_und(n: int) -> bool:
    return "und" in to_german_pieces(n)


def without_heads(model: EncoderDecoder, heads: list[int], layer: int = -1) -> EncoderDecoder:
    """A copy of the model with the given cross-attention heads of one decoder layer switched off."""
    ablated = copy.deepcopy(model)
    attn = ablated.decoder_layers[layer].src_attn
    with torch.no_grad():
        for h in heads:
            attn.w_o.weight[:, h * attn.d_k : (h + 1) * attn.d_k] = 0.0
    ablated.eval()
    return ablated


def head_ablation(model: EncoderDecoder, numbers: list[int]) -> list[dict]:
    """Exact match and loss with no head, each single head, and every head removed."""
    subsets = {"with_und": [n for n in numbers if has_und(n)], "without_und": [n for n in numbers if not has_und(n)]}
    h = model.cfg.n_heads
    rows = []
    for label, heads in [("none", [])] + [(f"head {i}", [i]) for i in range(h)] + [("all", list(range(h)))]:
        m = without_heads(model, heads)
        row = {"ablated": label, "heads": heads}
        for name, subset in subsets.items():
            row[name] = {
                "n": len(subset),
                "exact_match": exact_match(m, subset) if subset else None,
                "loss": heldout_loss(m, subset) if subset else None,
            }
        rows.append(row)
    return rows
