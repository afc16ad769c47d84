"""The recipe of the article's live figures, one document per model (GET /api/live): what the page needs to
compute a trace's live figures itself (static/compute/derived.js, the one place they are computed) while knowing
no id, no fact about the model and no sentence. It names the nodes the figures read (article/live_nodes.py),
the reader's names of the blocks the exercises ask about, the constants (ε, the tie, the shape numbers the
questions quote, the vocabulary, the pieces the reordering figures look for), the tensors step 25's count
reads, the sentence table (article/sentence_table.py), and what the "go deeper" pages' tables for one input
read (static/compute/topic_tables.js): their nodes and constants."""

from __future__ import annotations

import numpy as np

from article import live_nodes as at
from article.live_nodes import WORKED_WORDS, worked_blocks
from article.sentence_table import SENTENCES
from model import ids
from model.train import TrainConfig
from model.transformer import NORM_EPSILON, EncoderDecoder
from model.vocab import EOS, VOCAB
from recorder import parameters

RECIPE_FORMAT = "anatomy-live/2"
EPSILON = TrainConfig().label_smoothing  # ε_ls of the shipped recipe (training_log.json says the same)
TIE = 0.005  # a weight within this of a row's largest counts as its largest too (the stage cannot tell them apart)
UND = "und"  # the German piece that joins a unit to its tens: ein und zwanzig
# the unit pieces written before "und" and the English word each translates
UNITS_BEFORE_UND = {
    "eins": "one",
    "ein": "one",
    "zwei": "two",
    "drei": "three",
    "vier": "four",
    "fünf": "five",
    "sechs": "six",
    "sieben": "seven",
    "acht": "eight",
    "neun": "nine",
}
SYMBOLS = {"gamma": "γ", "beta": "β"}  # parameters the article writes as a Greek letter


def _nodes(n_layers: int, n_heads: int) -> dict:
    return {
        "worked_station": at.WORKED_STATION,
        "first_sum": at.FIRST_SUM,
        "first_ln": at.FIRST_LN,
        "first_proj": at.FIRST_PROJ,
        "first_q": at.FIRST_Q,
        "ffn_hidden": at.FFN_HIDDEN,
        "scaled": at.SCALED,
        "x0": at.X0,
        "logits": at.LOGITS,
        "probs": at.PROBS,
        "tokens": at.TOKENS,
        "worked_heads": [worked_blocks(at.WORKED_STATION, h) for h in range(n_heads)],
        "first_decoder_weights": ids.head_id(at.FIRST_DECODER_SELF, 0, "weights"),
        "last_cross_weights": at.last_cross_weights(n_layers, n_heads),
    }


def _names(nodes: dict, n_layers: int) -> dict[str, str]:
    """The reader's name (model/ids.py) of every block a question names."""
    named = [
        at.WORKED_STATION,
        at.FFN_HIDDEN,
        at.FIRST_PROJ,
        nodes["first_decoder_weights"],
        at.last_cross(n_layers),
        *nodes["last_cross_weights"],
        *(h[role] for h in nodes["worked_heads"] for role in ("weights", "scores", "out")),
    ]
    return {i: ids.parse(i).reader_name() for i in named}


TEMPERATURES = (0.5, 1.0, 2.0)  # the softmax-and-logits page's temperatures
TOP_LOGITS = 5  # the rows of that table: the largest logits
PE_COLUMNS = 4  # the first few columns of the PE table (fast waves), beside the last two (the slowest pair)


def _topics(n_layers: int) -> dict:
    """The nodes and constants of the go-deeper pages' per-input tables (a node a layout lacks is absent)."""
    sides = ("src", "tgt")
    nodes = {
        **{f"{s}_{part}": ids.join(s, part) for s in sides for part in ("ids", "scaled", "pe")},
        "output_embedding": ids.join("out", "ET"),
        "dec_mask": ids.join("dec", "mask"),
        "last_cross": at.last_cross(n_layers),
    }
    return {
        "nodes": nodes,
        "constants": {
            "norm_epsilon": NORM_EPSILON,
            "n_layers": n_layers,
            "temperatures": list(TEMPERATURES),
            "top_logits": TOP_LOGITS,
            "pe_columns": PE_COLUMNS,
        },
    }


def _symbol(role: str) -> str:
    """W_q → W^Q, b_o → b^O, gamma → γ: a parameter as the article writes it."""
    head, _, tail = role.partition("_")
    return SYMBOLS.get(role, f"{head}^{tail.upper()}" if tail else role)


def station_parameters(params: dict[str, np.ndarray], n_layers: int) -> dict:
    """Step 25's question is about the last decoder layer's cross-attention: its tensors, as data (the page
    counts them and says the question, static/compute/exercises.js)."""
    station = at.last_cross(n_layers)
    return {
        "station": station,
        "tensors": [
            {"id": k, "symbol": _symbol(ids.parse(k).role), "size": int(v.size)}
            for k, v in params.items()
            if ids.parse(k).station == station
        ],
    }


def live_recipe(model: EncoderDecoder) -> dict:
    """The recipe for traces of `model` (its training snapshots share its shapes, so its recipe)."""
    cfg = model.cfg
    nodes = _nodes(cfg.n_layers, cfg.n_heads)
    return {
        "format": RECIPE_FORMAT,
        "nodes": nodes,
        "names": _names(nodes, cfg.n_layers),
        "constants": {
            "label_smoothing": EPSILON,
            "tie": TIE,
            "d_model": cfg.d_model,
            "d_k": cfg.d_k,
            "n_heads": cfg.n_heads,
            "dropout": cfg.dropout,
            "eos": EOS,
            "und": UND,
            "units_before_und": UNITS_BEFORE_UND,
            "worked_words": WORKED_WORDS,
            "vocabulary": list(VOCAB.tokens),
        },
        "parameters": station_parameters(parameters(model), cfg.n_layers),
        "sentences": SENTENCES,
        "topics": _topics(cfg.n_layers),
    }
