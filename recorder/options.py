"""Which options of `Config` the trace follows, and which it refuses."""

from __future__ import annotations

from dataclasses import fields

from model.transformer import Config

# Every field of Config, each followed by trace() (or refused by check_traceable). A field added to
# Config and not listed here makes trace() refuse every model until the trace learns it.
FOLLOWED_OPTIONS = frozenset(
    {
        "vocab_size",
        "d_model",
        "n_heads",
        "d_k",
        "d_ff",
        "n_layers",
        "dropout",
        "positional",
        "max_len",
        "scale_scores",
        "norm_first",
        "pad_id",
        "norm",
        "ffn",
        "bias",
        "tie_output",
    }
)
TRACED_POSITIONALS = ("sinusoidal", "learned", "rotary")


def check_traceable(cfg: Config) -> None:
    """Raise a ValueError naming each option of `cfg` that trace() does not follow.

    Refused: positional "alibi" (a bias inside the scores that no ONNX operator names), n_layers < 1,
    and any Config field the trace does not know. Dropout is followed by tracing in eval mode.
    """
    refused = [f"{name} (unknown to the trace)" for name in sorted({f.name for f in fields(cfg)} - FOLLOWED_OPTIONS)]
    if cfg.positional not in TRACED_POSITIONALS:
        refused.append(f"positional={cfg.positional!r} (traced: {', '.join(TRACED_POSITIONALS)})")
    if cfg.n_layers < 1:
        refused.append(f"n_layers={cfg.n_layers} (at least one layer per stack)")
    if refused:
        raise ValueError("trace() does not follow " + "; ".join(refused))


def paper_layout(cfg: Config) -> bool:
    """True when the config uses only the paper's layout: post-LayerNorm, ReLU, biases, a tied output and
    sinusoidal or learned positions (the scene words a trace of any other layout apart)."""
    return (
        not cfg.norm_first
        and cfg.norm == "layer"
        and cfg.ffn == "relu"
        and cfg.bias
        and cfg.tie_output
        and cfg.positional in ("sinusoidal", "learned")
    )
