"""The article's per-input live figures (`data-live` keys): numbers read off a recorder trace's own
tensors, the teaching steps' among them (article/lessons.py). The trace document carries them in its
`derived` block (the schema is the recorder's `Derived`); the recorder leaves them to this module, since
it reads no article code."""

from __future__ import annotations

import numpy as np

from article.exercises import exercises
from article.lessons import teaching_figures
from article.loss import loss_figures
from model import ids
from model.numbers import join_german, to_english, to_german_pieces
from model.transformer import EncoderDecoder
from model.vocab import EOS
from recorder import Trace


def with_figures(t: Trace, model: EncoderDecoder) -> Trace:
    """The trace `t` with its live figures filled in (the same trace, returned for chaining)."""
    t.derived = derived_figures(t, model)
    return t


def derived_figures(t: Trace, model: EncoderDecoder) -> dict:
    """The per-input numbers the article quotes, each computed from the trace's own tensors."""
    cfg = model.cfg
    first_sum = t.node(ids.join(ids.sublayer_id("enc", 0, "self"), "sum")).value[0]
    hidden = t.node(ids.join(ids.sublayer_id("enc", 0, "ffn"), "hidden")).value
    probs = t.node("out.probs").value
    chosen = t.node("out.tokens").value
    p_chosen = probs[np.arange(len(chosen)), chosen]
    worst = int(p_chosen.argmin())
    losses = -np.log(p_chosen.astype(np.float64))  # each piece's cross-entropy, unsmoothed
    cross_id = ids.sublayer_id("dec", cfg.n_layers - 1, "cross")
    cross = np.mean([t.node(ids.head_id(cross_id, i, "weights")).value for i in range(cfg.n_heads)], axis=0)
    pieces = [tok for tok in t.output_tokens if tok != EOS]
    return {
        "number": t.number,
        "english": " ".join(to_english(t.number)),
        "german": join_german(pieces),
        "german_pieces": " ".join(pieces),
        "reference_german": join_german(to_german_pieces(t.number)),
        "source_tokens": t.source_tokens,
        "target_tokens": t.target_tokens,
        "output_tokens": t.output_tokens,
        "n_source": len(t.source_tokens),
        "n_target": len(t.target_tokens),
        "first_token": t.source_tokens[0],
        "first_token_mean": float(first_sum.mean()),
        "first_token_std": float(first_sum.std()),  # population std, as LayerNorm uses
        "ffn_zero_fraction": float((hidden == 0).mean()),
        "least_certain_prob": float(p_chosen[worst]),
        "least_certain_token": t.output_tokens[worst],
        "least_certain_position": worst,
        # each decoder row named by what it reads and writes, then the source token it rests on most
        "cross_alignment": "; ".join(
            f"{t.target_tokens[r]} → {t.output_tokens[r]}: {t.source_tokens[int(cross[r].argmax())]}"
            for r in range(len(t.output_tokens))),
        "position_losses": ", ".join(f"{tok} {loss:.3f}" for tok, loss in zip(t.output_tokens, losses, strict=True)),
        "mean_position_loss": float(losses.mean()),
        "least_certain_reads": t.target_tokens[worst],
        **teaching_figures(t),
        **loss_figures(t),  # step 20: the smoothed targets and each position's loss
        "exercises": exercises(t, model),  # issue 24: predict, then reveal
        "logit_lens": "; ".join(f"after decoder {la.layer + 1}: "
                                + " ".join(f"{top[0].piece} ({top[0].p:.2f})" for top in la.top) for la in t.lens),
    }
