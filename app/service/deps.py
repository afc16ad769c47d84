"""The API's typed dependencies (FastAPI's `Depends`), in one place: each query parameter documented
once, the chosen model and its service, and a trace request read and checked once.

A route says what it needs by its parameters' types: `ChosenModelDep` (the miniature ?model= names,
with its card and weights bodies), `ServiceDep` (that miniature's service), `TraceRequestDep`
(?input=, ?ablate=, ?checkpoint= and ?model=, checked). A bad value is an InputError or a
ModelNameError before the route runs, answered with 422 (app/main.py). FastAPI resolves each
dependency once per request and documents its query parameters, with these descriptions, in the
OpenAPI schema.

One rule reads every parameter: an empty value is the same as leaving the parameter out (the default
for ablate=, checkpoint= and model=; for the required input=, the same 422 as when it is missing, as
for spaces only), and a value is taken as written: ' 0 ' or '025' is no checkpoint, ' modern' no model,
refused with the message any other bad value gets. Only the reader's text (input=, read by
model/parse.py) and the items of the ablate= list (comma-separated, spaces around them allowed) are
free in their spacing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Query, Request

from app.service.model_choice import MODEL_HELP, ChosenModel, chosen, parse_model
from app.service.model_service import ModelService, TraceRequest
from app.service.time_machine import CHECKPOINT_HELP, CheckpointError
from app.serving.trace_bytes import CachedTrace
from model.ablation import accepted as ablation_accepted
from model.ablation import parse_ablation
from model.parse import ACCEPTED, parse_number, refused

INPUT_HELP = f"The number to run: {ACCEPTED}."
ABLATE_HELP = (
    "Parts to switch off, comma-separated: heads such as `dec.1.cross.h2`, sub-layers such as "
    "`enc.0.ffn` or `dec.1.self` (model/ablation.py). Greedy decoding runs without them and the graph "
    "multiplies each one's output by a zero constant (`part.gate`, `part.off`)."
)

InputQuery = Annotated[str | None, Query(description=INPUT_HELP)]
AblateQuery = Annotated[str | None, Query(description=ABLATE_HELP)]
CheckpointQuery = Annotated[str | None, Query(description=CHECKPOINT_HELP)]
ModelQuery = Annotated[str | None, Query(description=MODEL_HELP)]


class InputError(ValueError):
    """A reader's input the model cannot take; answered with 422 and what is accepted."""

    def __init__(self, message: str, accepted: str = ACCEPTED):
        super().__init__(message)
        self.accepted = accepted


ABLATE_REFUSED = "ablate: {message}"  # a bad ?ablate= part's message: model/ablation.py's, named
INPUT_MISSING = "the input parameter is missing or blank"  # a reason, as model/parse.py MESSAGES' are


def parse_input(text: str | None) -> int:
    """The number ?input= names (model/parse.py); static/js/numbers.js `parseInput` is the same rule."""
    if text is None or not text.strip():
        raise InputError(str(refused(INPUT_MISSING)))
    try:
        return parse_number(text)
    except ValueError as e:
        raise InputError(str(e)) from None


def parse_checkpoint(svc: ModelService, text: str | None) -> int | None:
    """The training snapshot asked for (app/service/time_machine.py), None for the shipped model."""
    try:
        return svc.checkpoints.parse(text)
    except CheckpointError as e:
        raise InputError(str(e), svc.checkpoints.accepted()) from None  # what a checkpoint may be


async def chosen_model(request: Request, model: ModelQuery = None) -> ChosenModel:
    return await chosen(request.app.state, parse_model(model))


ChosenModelDep = Annotated[ChosenModel, Depends(chosen_model)]


async def model_service(model: ChosenModelDep) -> ModelService:
    return model.service


ServiceDep = Annotated[ModelService, Depends(model_service)]


@dataclass(frozen=True)
class CheckedTrace:
    """A trace request, checked, and the service of the model that is to answer it."""

    service: ModelService
    request: TraceRequest

    async def run(self) -> CachedTrace:
        return await self.service.trace(self.request)


def check_trace(
    svc: ModelService, input: str | None, ablate: str | None = None, checkpoint: str | None = None
) -> TraceRequest:
    """One trace request from the query's text, checked against the model `svc` runs (InputError if bad)."""
    number = parse_input(input)
    cfg = svc.translator.model.cfg
    try:
        ablation = parse_ablation(ablate, cfg)
    except ValueError as e:
        raise InputError(ABLATE_REFUSED.format(message=e), ablation_accepted(cfg)) from None
    return TraceRequest(number, ablation, parse_checkpoint(svc, checkpoint))


async def trace_request(
    svc: ServiceDep, input: InputQuery = None, ablate: AblateQuery = None, checkpoint: CheckpointQuery = None
) -> CheckedTrace:
    """Every trace endpoint's request (the page checks its own with `check_trace`, to show errors inline)."""
    return CheckedTrace(svc, check_trace(svc, input, ablate, checkpoint))


TraceRequestDep = Annotated[CheckedTrace, Depends(trace_request)]
