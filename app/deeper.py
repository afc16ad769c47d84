"""The go-deeper pages for the reader's input: /topics/SLUG?input=N draws the topic's figures
(article/deeper.py) for that number, computed on the server from its trace. The input is read by the
page's own rule (app/pages.py `checked_page_request`, the API's parser and messages): a bad one is said
beside the field and the figures are the default input's, as on the article. Each topic's figures are
kept per (topic, number, weights version) in a small LRU; the trace they are read from is recorded in a
worker thread, as the API's are."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

import orjson

from app.service import ModelService
from article.deeper import Reader, Table
from article.topic_figures import TOPICS, figures_for
from model.numbers import to_english
from recorder import trace

CACHED = 256  # topic pages' figure lists kept (15 topics × about 17 inputs)


@dataclass
class DeeperPage:
    """What templates/deeper.html draws: the input as typed, the number shown, its words, any error."""

    text: str
    number: int
    english: str
    error: str = ""
    tables: list[Table] = field(default_factory=list)


_cache: OrderedDict[tuple, list[Table]] = OrderedDict()
_lock = threading.Lock()


def compute(svc: ModelService, slug: str, number: int, beam: dict | None) -> list[Table]:
    """The topic's figures for the number (cached); runs in a worker thread."""
    key = (slug, number, svc.version)
    with _lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    model = svc.translator.model
    tables = figures_for(slug, Reader(trace(model, number, svc.params, svc.version, lens=False), model,
                                      svc.params, beam))
    with _lock:
        _cache[key] = tables
        while len(_cache) > CACHED:
            _cache.popitem(last=False)
    return tables


BEAM_TOPIC = "autoregressive-generation-and-beam-search"


async def deeper_page(svc: ModelService, slug: str, text: str, number: int, error: str) -> DeeperPage | None:
    """The page's figures for `number` (the default's when the input was bad); None for a topic with none."""
    if slug not in TOPICS:
        return None
    beam = orjson.loads(await svc.beam(number)) if slug == BEAM_TOPIC else None
    tables = await svc.run(lambda n: compute(svc, slug, n, beam), number)
    return DeeperPage(text, number, " ".join(to_english(number)), error, tables)
