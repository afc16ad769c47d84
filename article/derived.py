"""The article's per-input live figures (`data-live` keys): numbers read off a recorder trace's own
tensors, the teaching steps' among them (article/lessons.py). The trace document carries them in its
`derived` block (the schema is the recorder's `Derived`); the recorder leaves them to this module, since
it reads no article code."""

from __future__ import annotations

import numpy as np

from article import live_nodes as at
from article.exercises import exercises
from article.lessons import teaching_figures
from article.loss import loss_figures
from article.sentences import listed
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
    first_sum = t.node(at.FIRST_SUM).value[0]
    hidden = t.node(at.FFN_HIDDEN).value
    probs = t.node(at.PROBS).value
    chosen = t.node(at.TOKENS).value
    p_chosen = probs[np.arange(len(chosen)), chosen]
    worst = int(p_chosen.argmin())
    losses = -np.log(p_chosen.astype(np.float64))  # each piece's cross-entropy, unsmoothed
    cross = np.mean([t.node(i).value for i in at.last_cross_weights(cfg.n_layers, cfg.n_heads)], axis=0)
    pieces = [tok for tok in t.output_tokens if tok != EOS]
    return {
        "number": t.number,
        "english": listed("words", [{"word": w} for w in to_english(t.number)]),
        "german": join_german(pieces),
        "german_pieces": listed("words", [{"word": w} for w in pieces]),
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
        "cross_alignment": listed("cross_alignment", [{"reads": t.target_tokens[r], "writes": t.output_tokens[r],
                                                       "source": t.source_tokens[int(cross[r].argmax())]}
                                                      for r in range(len(t.output_tokens))]),
        "position_losses": listed("position_losses", [{"token": tok, "loss": loss}
                                                      for tok, loss in zip(t.output_tokens, losses, strict=True)]),
        "mean_position_loss": float(losses.mean()),
        "least_certain_reads": t.target_tokens[worst],
        **teaching_figures(t),
        **loss_figures(t),  # step 20: the smoothed targets and each position's loss
        "exercises": exercises(t, model),  # issue 24: predict, then reveal
        "logit_lens": listed("lens_layers", [
            {"layer": la.layer + 1, "pieces": listed("lens_pieces", [{"piece": top[0].piece, "p": top[0].p}
                                                                     for top in la.top])} for la in t.lens]),
    }
