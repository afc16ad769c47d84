"""The loaded model and everything computed from it, with the trace and beam caches.

One `ModelService` is built at start-up: it loads the weights once, lists the parameters once,
computes the model-level figures once, and then answers per-input requests from bounded LRU caches
keyed by (request, weights version): a trace request is the number, the parts switched off and the
training snapshot. Traces are computed in a worker thread (torch releases the GIL) under a capacity
limiter, so a flood of requests queues instead of oversubscribing the cores.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import numpy as np
import torch

from app.documents.content import Fact
from app.documents.schemas import (
    Beam,
    BeamStep,
    Facts,
    Hypothesis,
    ModelCard,
    ModelFigures,
    ParameterInfo,
    ServedTraceHeader,
    Specials,
    TrainingSummary,
    weights_url,
)
from app.service.time_machine import Checkpoints
from app.serving.serialize import dumps
from app.serving.trace_bytes import CachedTrace
from app.settings import settings
from article.stats import attention_peaks_per_head, model_figures, training_summary
from article.tour import TourStep, load_tour
from model import models
from model.data import heldout_numbers
from model.decode import EXTRA_LENGTH, length_penalty
from model.numbers import join_german
from model.transformer import EncoderDecoder
from model.translate import Translator
from model.vocab import VOCAB
from recorder import parameters, trace, weights_version

BEAM_SIZE, BEAM_ALPHA = 4, 0.6
LENGTH_PENALTY = "lp(Y) = ((5 + |Y|) / 6)^alpha, |Y| counting </s>; score = log p / lp(Y)"
LENGTH_PENALTY_LENGTHS = range(1, 17)  # the output lengths /api/beam lists lp(Y) for


class BusyError(RuntimeError):
    """Too many requests are already waiting for the model."""


class ByteLRU:
    """A thread-safe LRU cache bounded by the total size of its values, in bytes."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self.size = 0
        self.hits = 0  # tests read it: one trace per number, however spelt
        self._items: OrderedDict[Any, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Any) -> Any | None:
        with self._lock:
            item = self._items.get(key)
            if item is None:
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return item[0]

    def put(self, key: Any, value: Any, nbytes: int) -> None:
        with self._lock:
            if key in self._items:
                self.size -= self._items.pop(key)[1]
            self._items[key] = (value, nbytes)
            self.size += nbytes
            while self.size > self.max_bytes and len(self._items) > 1:
                self.size -= self._items.popitem(last=False)[1][1]

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: Any) -> bool:
        with self._lock:
            return key in self._items


@dataclass(frozen=True)
class TraceRequest:
    """What a trace is of: the input, the parts switched off and the training snapshot (app/service/deps.py
    `trace_request` builds it, checked). The cache key and the ETag are made of all of it, so a new field
    keeps them distinct."""

    number: int
    ablation: tuple[str, ...] = ()  # model/ablation.py part ids, in the model's order
    checkpoint: int | None = None  # a training snapshot's step (app/service/time_machine.py); None: the trained model

    @classmethod
    def of(cls, req: TraceRequest | int) -> TraceRequest:
        return req if isinstance(req, TraceRequest) else cls(int(req))

    def tag(self) -> str:
        """This request in an ETag: the number, then any ablation, then any snapshot."""
        snapshot = [] if self.checkpoint is None else [f"c{self.checkpoint}"]
        return "-".join([str(self.number), *self.ablation, *snapshot])


@dataclass
class ModelService:
    translator: Translator
    params: dict[str, np.ndarray]
    version: str
    figures: dict
    attention: dict  # each attention head's mean peak weight over the held-out numbers
    training: dict
    traces: ByteLRU
    beams: ByteLRU
    limiter: anyio.CapacityLimiter
    max_waiting: int
    tour: list[TourStep] = field(default_factory=load_tour)  # content/steps front matter: the stage's tour
    checkpoints: Checkpoints = field(default_factory=Checkpoints)  # training snapshots (app/service/time_machine.py)
    name: str = models.DEFAULT  # which shipped miniature (model/models.py): its traces name its weights
    _waiting: int = 0

    @classmethod
    def load(
        cls,
        cache_bytes: int | None = None,
        workers: int | None = None,
        max_waiting: int = 256,
        model: str = models.DEFAULT,
    ) -> ModelService:
        # Two cores: two traces at once, each on one thread. The matrices are 32 wide, so torch's
        # intra-op threads cost more in hand-offs than they gain, and with two requests in flight
        # they would oversubscribe the cores (bench/bench_api.py measures both settings).
        torch.set_num_threads(settings.torch_threads)
        workers = workers or settings.workers
        cache_bytes = cache_bytes or settings.cache_mb * 2**20  # ~500 traces
        tr = Translator.load(models.weights_path(model))  # model/models.py: the shipped miniatures
        tr.model.eval()
        attention = attention_peaks_per_head(tr.model, heldout_numbers())
        folder = models.DIRECTORIES[model]
        return cls(
            tr,
            parameters(tr.model),
            weights_version(tr.model),
            model_figures(tr.model, attention, folder),
            attention,
            training_summary(folder),
            ByteLRU(cache_bytes),
            ByteLRU(8 * 2**20),
            anyio.CapacityLimiter(workers),
            max_waiting,
            # the time machine's snapshots are of the 2017 run; another model has none
            checkpoints=Checkpoints() if model == models.DEFAULT else Checkpoints(None),
            name=model,
        )

    # -- per-input work, cached -------------------------------------------------------------

    def weights_for(self, req: TraceRequest) -> tuple[EncoderDecoder, dict[str, np.ndarray], str]:
        """The model, parameters and version that answer `req`: a training snapshot's, or the trained one's."""
        if req.checkpoint is None:
            return self.translator.model, self.params, self.version
        snap = self.checkpoints.get(req.checkpoint)
        return snap.model, snap.params, snap.version

    def trace_sync(self, req: TraceRequest | int) -> CachedTrace:
        req = TraceRequest.of(req)
        model, params, version = self.weights_for(req)
        key = (req, version)  # a snapshot's weights have their own version
        hit = self.traces.get(key)
        if hit is not None:
            return hit
        t = trace(model, req.number, params, version, ablation=req.ablation)
        header = ServedTraceHeader.of(
            t.header(), model=self.name, checkpoint=req.checkpoint, weights_url=weights_url(self.name, req.checkpoint)
        )
        entry = CachedTrace.build(header, t.nodes)
        self.traces.put(key, entry, entry.nbytes)
        return entry

    def beam_sync(self, number: int) -> bytes:
        key = (number, self.version)
        hit = self.beams.get(key)
        if hit is not None:
            return hit
        body = dumps(self.beam_doc(number))
        self.beams.put(key, body, len(body))
        return body

    def beam_doc(self, number: int) -> Beam:
        result, best_pieces = self.translator.beam(number, BEAM_SIZE, BEAM_ALPHA)
        source = VOCAB.source_tokens(number)

        def hyp(h) -> Hypothesis:  # model.decode's Hypothesis, its token ids as tokens
            return Hypothesis(
                tokens=VOCAB.tokens_of(h.tokens), log_prob=h.log_prob, length_penalty=h.length_penalty, score=h.score
            )

        def step(s: dict) -> BeamStep:
            # alive hypotheses have no length penalty or score yet: null, not the placeholders 1 and 0
            return BeamStep(
                step=s["step"],
                alive=[Hypothesis(**{**h, "length_penalty": None, "score": None}) for h in s["alive"]],
                finished=[Hypothesis(**h) for h in s["finished"]],
            )

        return Beam(
            weights_version=self.version,
            number=number,
            source_tokens=source,
            beam_size=BEAM_SIZE,
            alpha=BEAM_ALPHA,
            max_length=len(source) + EXTRA_LENGTH,
            length_penalty=LENGTH_PENALTY,
            length_penalties={str(n): length_penalty(n, BEAM_ALPHA) for n in LENGTH_PENALTY_LENGTHS},
            steps=[step(s) for s in result.steps],
            finished=[hyp(h) for h in result.finished],
            best=hyp(result.best),
            german_pieces=best_pieces,
            german=join_german(best_pieces),
        )

    async def run(self, fn: Callable[[Any], Any], number: Any) -> Any:
        """Run `fn(number)` in a worker thread, at most `limiter` at once; refuse a flood."""
        if self._waiting >= self.max_waiting:
            raise BusyError("the model is busy; try again in a moment")
        self._waiting += 1
        try:
            return await anyio.to_thread.run_sync(fn, number, limiter=self.limiter)
        finally:
            self._waiting -= 1

    async def trace(self, req: TraceRequest | int) -> CachedTrace:
        req = TraceRequest.of(req)
        hit = None if req.checkpoint is not None else self.traces.get((req, self.version))
        return hit if hit is not None else await self.run(self.trace_sync, req)

    async def beam(self, number: int) -> bytes:
        hit = self.beams.get((number, self.version))
        return hit if hit is not None else await self.run(self.beam_sync, number)

    # -- model-level documents, computed once -----------------------------------------------

    def model_doc(self) -> ModelCard:
        return ModelCard(
            weights_version=self.version,
            config=self.translator.model.cfg,
            vocabulary=list(VOCAB.tokens),
            specials=Specials(
                pad=VOCAB.tokens[VOCAB.pad_id], bos=VOCAB.tokens[VOCAB.bos_id], eos=VOCAB.tokens[VOCAB.eos_id]
            ),
            parameter_count=self.figures["param_count"],
            parameters=[ParameterInfo(id=k, shape=list(v.shape)) for k, v in self.params.items()],
            figures=ModelFigures(**self.figures),
            training=TrainingSummary(**self.training),
        )

    @staticmethod
    def facts_doc(facts: list[Fact]) -> Facts:
        return Facts(count=len(facts), facts=facts)
