"""`?model=` on the page and the API: which shipped miniature answers (model/models.py names them).

Each loaded miniature is a `ChosenModel`: its service (with its own trace and beam caches) and the
bodies that do not change while it runs, its model card and its weights. All share the default's trace
and beam caches: one memory budget for the process, however many models are asked for. The default (2017) is loaded
at start-up (app/main.py); another on its first request, and kept. A name not in the list is a
ModelNameError, answered with 422 and the accepted names.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import anyio

from app.service.model_service import ModelService
from app.service.shipped import DataUnavailable
from app.serving.delivery import weights_body
from app.serving.serialize import dumps
from model import models

MODEL_HELP = (
    f"Which miniature: {', '.join(models.NAMES)} (default {models.DEFAULT}): "
    + "; ".join(f"{k} = {v}" for k, v in models.TITLES.items())
    + "."
)
ACCEPTED_MODELS = f"model is one of {', '.join(models.NAMES)} (default {models.DEFAULT})"
_lock = threading.Lock()


class ModelNameError(ValueError):
    """An unknown ?model=; answered with 422 (app/main.py), its `accepted` naming the models."""

    accepted = ACCEPTED_MODELS


def parse_model(text: str | None) -> str:
    """The model's name (the default when absent or empty; app/service/deps.py's rule), or ModelNameError."""
    if not text:
        return models.DEFAULT
    if text not in models.NAMES:
        raise ModelNameError(f"unknown model {text[:40]!r}; {ACCEPTED_MODELS}")
    return text


@dataclass(frozen=True)
class ChosenModel:
    """One loaded miniature: its service, and its model card and weights as the API sends them."""

    service: ModelService
    card: bytes  # /api/model's body
    weights_json: bytes  # /api/weights's body
    weights_safetensors: bytes  # the same parameters for `Accept: application/octet-stream`

    @classmethod
    def of(cls, svc: ModelService) -> ChosenModel:
        return cls(
            svc,
            dumps(svc.model_doc()),
            weights_body(svc.params, svc.version),
            weights_body(svc.params, svc.version, binary=True),
        )

    def weights(self, binary: bool) -> bytes:
        return self.weights_safetensors if binary else self.weights_json


def loaded(state) -> dict[str, ChosenModel]:
    """The app's loaded miniatures by name (the default's put there at start-up, app/main.py)."""
    if not hasattr(state, "models"):
        state.models = {}
    return state.models


def _load(state, name: str) -> ChosenModel:
    with _lock:  # two first requests for one model load it once
        models_now = loaded(state)
        if name not in models_now:
            models_now[name] = ChosenModel.of(_service(state, name))
        return models_now[name]


def _service(state, name: str) -> ModelService:
    """The model's service, or DataUnavailable (503) naming the file that is missing or altered."""
    shipped = getattr(state, "shipped", None)
    problem = shipped.problem(f"model {name}") if shipped is not None else ""
    if not problem:
        try:
            svc = ModelService.load(model=name)
        except Exception as e:  # noqa: BLE001 - files that check out but do not load: still no 500
            problem = f"its files could not be read ({type(e).__name__})"
        else:
            return share_caches(state, svc)
    raise DataUnavailable(f"the {name} model is not available: {problem}")


def share_caches(state, svc: ModelService) -> ModelService:
    """One memory budget and one set of worker threads for the whole process: every model's traces and
    beams go into the default model's caches (ANATOMY_CACHE_MB in all; keys carry the weights version, so
    models never mix), and its traces wait for the same ANATOMY_WORKERS threads (per model, two models
    ran four traces at once on two cores)."""
    default = getattr(state, "service", None)
    if default is not None and default is not svc:
        svc.traces, svc.beams, svc.limiter = default.traces, default.beams, default.limiter
    return svc


async def chosen(state, name: str) -> ChosenModel:
    """The loaded miniature of a parsed model name, loaded in a worker thread on first asking."""
    hit = loaded(state).get(name)
    return hit if hit is not None else await anyio.to_thread.run_sync(_load, state, name)
