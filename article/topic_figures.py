"""Which figures each "Go deeper" page draws for the reader's input (article/deeper.py's Tables)."""

from __future__ import annotations

from collections.abc import Callable

from article import deeper_model as m
from article import deeper_trace as t
from article.deeper import Reader, Table

Figures = Callable[[Reader], list[Table]]

TOPICS: dict[str, Figures] = {  # by the page's slug (content/topics/SLUG.md)
    "tokenisation": t.tokens, "embeddings-and-tying": t.embeddings, "positional-encoding": t.positions,
    "attention": t.attention_row, "multi-head-attention": t.heads_of_row, "causal-masking": t.causal_mask,
    "softmax-and-logits": t.temperatures, "layernorm-and-residuals": t.layer_norm,
    "cross-entropy": t.losses, "rnns": t.path_lengths, "counting-parameters": m.parameters_by_block,
    "flops": m.flops, "dropout": m.dropout_draw, "adam": m.adam_schedule,
    "autoregressive-generation-and-beam-search": m.beam_table,
}


def figures_for(slug: str, reader: Reader) -> list[Table]:
    """The topic's figures for this reader's input ([] for a topic with none)."""
    make = TOPICS.get(slug)
    return make(reader) if make else []
