"""The go-deeper pages for the reader's input: /topics/SLUG?input=N draws the topic's figures
(article/deeper.py) for that number. The tables read off one input's trace are the page's
(article/topic_figures.py PAGE_TOPICS): static/js/deeper.js computes them in the browser; for the default
input the server renders them from app/startup/prerender.py's result, which is the same code run ahead, so a reader
without JavaScript sees them, and for another input it leaves their place to the script (the page says that
they need JavaScript). The other tables (the model's) are computed here from the trace. The input is read by the
page's own rule (app/routes/pages.py `checked_page_request`, the API's parser and messages): a bad one is said
beside the field and the figures are the default input's, as on the article. Each topic's figures are
kept per (topic, number, weights version) in a small LRU; the trace they are read from is recorded in a
worker thread, as the API's are."""

from __future__ import annotations

import subprocess
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

import anyio
import orjson

from app.service.model_service import ModelService
from app.startup.prerender import DEFAULT_INPUT, prerendered
from article.deeper import Column, Reader, Table
from article.topic_figures import PAGE_TOPICS, TOPICS, figures_for
from model.numbers import to_english
from recorder import trace

CACHED = 256  # the model topics' figure lists kept (5 topics × about 50 inputs)


@dataclass
class DeeperPage:
    """What templates/deeper.html draws: the input as typed, the number shown, its words, any error."""

    text: str
    number: int
    english: str
    error: str = ""
    tables: list[Table] = field(default_factory=list)  # rendered here
    page_tables: bool = False  # the topic's tables are the page's (static/js/deeper.js computes them)
    pending: bool = False  # ... and the script is to compute them: none rendered here
    default: int = DEFAULT_INPUT  # the input whose page has them for a reader without JavaScript (when Node ran)


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
    tables = figures_for(
        slug, Reader(trace(model, number, svc.params, svc.version, lens=False), model, svc.params, beam)
    )
    with _lock:
        _cache[key] = tables
        while len(_cache) > CACHED:
            _cache.popitem(last=False)
    return tables


BEAM_TOPIC = "autoregressive-generation-and-beam-search"


def table_of(doc: dict) -> Table:
    """A table as static/compute/topic_tables.js writes it."""
    return Table(
        doc["id"],
        doc["title"],
        doc["caption"],
        [Column(c["name"], c["format"], c["bar"]) for c in doc["columns"]],
        doc["rows"],
    )


def default_tables(svc: ModelService, slug: str) -> list[Table]:
    """The page's tables of the topic for the default input, as the page computes them (app/startup/prerender.py)."""
    return [table_of(t) for t in prerendered("topics", svc, DEFAULT_INPUT)["topics"].get(slug, [])]


async def deeper_page(svc: ModelService, slug: str, text: str, number: int, error: str) -> DeeperPage | None:
    """The page's figures for `number` (the default's when the input was bad); None for a topic with none."""
    english = " ".join(to_english(number))
    if slug in PAGE_TOPICS:
        if number != DEFAULT_INPUT:
            return DeeperPage(text, number, english, error, page_tables=True, pending=True)
        try:
            tables = await anyio.to_thread.run_sync(default_tables, svc, slug)
        except (OSError, RuntimeError, subprocess.TimeoutExpired):  # no Node here: the script computes them
            return DeeperPage(text, number, english, error, page_tables=True, pending=True)
        return DeeperPage(text, number, english, error, tables, page_tables=True)
    if slug not in TOPICS:
        return None
    beam = orjson.loads(await svc.beam(number)) if slug == BEAM_TOPIC else None
    tables = await svc.run(lambda n: compute(svc, slug, n, beam), number)
    return DeeperPage(text, number, english, error, tables)
