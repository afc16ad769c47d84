"""The "Go deeper" pages' figures computed in Python: for each topic, tables from the model's shapes, its
config, the shipped training log and the beam search the app ran for the reader's number
(article/deeper_model.py). The tables read off one input's trace (its tokens, an attention row, …) are the
page's own, computed in JavaScript (static/compute/topic_tables.js), in the same form;
article/topic_figures.py says which topic draws which.

A figure is a `Table`: a title, a caption saying what to notice (true for every input), columns with
their number format (article/format.py) and rows of plain values. templates/deeper.html draws it as an
HTML table, with a bar beside each value of a column marked `bar` (a weight in 0…1). The numbers are
kept as numbers, so that tests/page/test_deeper.py can recompute each of them from the model on its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from model.transformer import EncoderDecoder
from recorder import Trace


@dataclass
class Column:
    label: str
    fmt: str = "text"  # a format of article/format.py
    bar: bool = False  # draw a bar of the value (a weight in 0…1) beside it


@dataclass
class Table:
    key: str  # the figure's name on the page: <figure data-deeper=KEY>
    title: str
    caption: str  # what to notice, in words true for every input
    columns: list[Column]
    rows: list[list] = field(default_factory=list)  # the first cell of each row heads it (<th scope=row>)


@dataclass
class Reader:
    """What a topic page's figures are computed from: the reader's input, traced."""

    trace: Trace
    model: EncoderDecoder
    params: dict[str, np.ndarray]
    beam: dict | None = None  # the app's beam search for the number (/api/beam's document)

    def value(self, node_id: str) -> np.ndarray:
        return self.trace.node(node_id).value.astype(np.float64)
