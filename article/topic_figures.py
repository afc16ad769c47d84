"""Which figures each "Go deeper" page draws for the reader's input.

Two kinds. The tables read off one input's trace (its tokens, their rows of E, an attention row, …) are
the page's: static/compute/topic_tables.js computes them in the browser, and app/startup/prerender.py runs it for the
default input so that the server can render them for a reader without JavaScript; PAGE_TOPICS names those
pages (tests/page/test_deeper.py holds it equal to the module's list). The tables that come from the model's
shapes, its config, its training log or the beam search are computed here, in Python (article/deeper_model.py).
"""

from __future__ import annotations

from collections.abc import Callable

from article import deeper_model as m
from article.deeper import Reader, Table

Figures = Callable[[Reader], list[Table]]

PAGE_TOPICS = (
    "tokenisation",
    "embeddings-and-tying",
    "positional-encoding",
    "attention",
    "multi-head-attention",
    "causal-masking",
    "softmax-and-logits",
    "layernorm-and-residuals",
    "cross-entropy",
    "rnns",
)

TOPICS: dict[str, Figures] = {  # by the page's slug (content/topics/SLUG.md)
    "counting-parameters": m.parameters_by_block,
    "flops": m.flops,
    "dropout": m.dropout_draw,
    "adam": m.adam_schedule,
    "autoregressive-generation-and-beam-search": m.beam_table,
}


def figures_for(slug: str, reader: Reader) -> list[Table]:
    """The topic's figures computed here for this reader's input ([] for a topic with none)."""
    make = TOPICS.get(slug)
    return make(reader) if make else []
