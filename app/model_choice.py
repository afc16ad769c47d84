"""`?model=` on the page and the API: which shipped miniature answers (model/models.py names them).

The default (2017) is the service the app loads at start-up; another is loaded on its first request
and kept, with its own trace and beam caches and its own model card and weights bodies. A name not
in the list is a ModelNameError, answered with 422 and the accepted names.
"""

from __future__ import annotations

import threading

import anyio
from fastapi import Request

from model import models

MODEL_HELP = (f"Which miniature: {', '.join(models.NAMES)} (default {models.DEFAULT}): "
              + "; ".join(f"{k} = {v}" for k, v in models.TITLES.items()) + ".")
ACCEPTED_MODELS = f"model is one of {', '.join(models.NAMES)} (default {models.DEFAULT})"
_lock = threading.Lock()


class ModelNameError(ValueError):
    """An unknown ?model=; answered with 422 (app/main.py), its `accepted` naming the models."""

    accepted = ACCEPTED_MODELS


def parse_model(text: str | None) -> str:
    """The model's name (the default when absent), or ModelNameError."""
    if text is None or text == "":
        return models.DEFAULT
    if text not in models.NAMES:
        raise ModelNameError(f"unknown model {text[:40]!r}; {ACCEPTED_MODELS}")
    return text


def _load(request: Request, name: str):
    from app.delivery import weights_safetensors
    from app.serialize import dumps
    from app.service import ModelService

    state = request.app.state
    with _lock:
        extra = state.__dict__.setdefault("_extra_models", {})
        if name not in extra:
            svc = ModelService.load(model=name)
            extra[name] = (svc, dumps(svc.model_doc()), dumps(svc.weights_doc()),
                           weights_safetensors(svc.params, svc.version))
        return extra[name]


async def chosen(request: Request, name: str) -> tuple:
    """(service, model card body, weights body as JSON, as safetensors) of a parsed model name."""
    state = request.app.state
    if name == models.DEFAULT:
        return state.service, state.model_body, state.weights_body, state.weights_safetensors
    extra = getattr(state, "_extra_models", {})
    if name in extra:
        return extra[name]
    return await anyio.to_thread.run_sync(_load, request, name)
