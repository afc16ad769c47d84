"""The JSON API under /api: model card, weights, trace (JSON or NDJSON), beam search, ledger."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response, StreamingResponse

from app.model_choice import MODEL_HELP, chosen, parse_model
from app.schemas import Beam, ErrorResponse, Facts, Health, ModelCard, Trace, TraceStreamHeader, Weights
from app.service import CachedTrace, ModelService, dumps
from model.parse import ACCEPTED, parse_number

router = APIRouter(prefix="/api", tags=["api"])
NDJSON = "application/x-ndjson"
INPUT_HELP = f"The number to run: {ACCEPTED}."
BAD_INPUT = {422: {"model": ErrorResponse, "description": "The input is not a number the model can read, "
                                                         "or the model is not one of the shipped ones"}}


class InputError(ValueError):
    """A reader's input the model cannot take; answered with 422 and what is accepted."""


def parse_input(text: str | None) -> int:
    if text is None:
        raise InputError(f"the input parameter is missing; accepted: {ACCEPTED}")
    try:
        return parse_number(text)
    except ValueError as e:
        raise InputError(str(e)) from None


def service(request: Request) -> ModelService:
    return request.app.state.service


def json_response(body: bytes, headers: dict[str, str] | None = None, status_code: int = 200) -> Response:
    return Response(body, status_code=status_code, media_type="application/json", headers=headers)


def etag_matches(request: Request, etag: str) -> bool:
    given = request.headers.get("if-none-match", "")
    tags = {t.strip().removeprefix("W/") for t in given.split(",")}
    return "*" in tags or etag in tags


def cached(request: Request, etag: str, body: bytes, media_type: str = "application/json") -> Response:
    """A response the browser may keep but must revalidate; 304 when its copy is current."""
    headers = {"ETag": etag, "Cache-Control": "no-cache"}
    if etag_matches(request, etag):
        return Response(status_code=304, headers=headers)
    return Response(body, media_type=media_type, headers=headers)


@router.get("/model", response_model=ModelCard, summary="The model card")
async def get_model(request: Request, model: str | None = Query(None, description=MODEL_HELP)) -> Response:
    """Configuration, vocabulary, parameter count and shapes, model-level figures, training summary,
    and the weights version (a hash of the weights)."""
    return json_response((await chosen(request, parse_model(model)))[1])


@router.get("/weights", response_model=Weights, summary="Every parameter tensor",
            responses={304: {"description": "Not modified: the If-None-Match ETag is current"}})
async def get_weights(request: Request, model: str | None = Query(None, description=MODEL_HELP)) -> Response:
    """Every parameter under its trace id (weight matrices as (d_in, d_out)), flattened row-major.
    The ETag is the weights version; send it back as If-None-Match to get 304 Not Modified."""
    svc, _, body = await chosen(request, parse_model(model))
    return cached(request, f'"{svc.version}"', body)


async def _stream(entry: CachedTrace, chunk: int = 64 * 1024) -> AsyncIterator[bytes]:
    """The NDJSON lines, header first, sent in writes of about 64 KiB (whole lines only)."""
    lines = entry.ndjson()
    yield next(lines)
    batch: list[bytes] = []
    size = 0
    for line in lines:
        batch.append(line)
        size += len(line)
        if size >= chunk:
            yield b"".join(batch)
            batch, size = [], 0
    if batch:
        yield b"".join(batch)


def _stream_response(entry: CachedTrace) -> StreamingResponse:
    return StreamingResponse(_stream(entry), media_type=NDJSON,
                             headers={"Cache-Control": "no-cache", "Vary": "Accept"})


TRACE_DOC = f"""The trace of one input (SPEC §4): the input as number, English and German; the source and
target tokens; every intermediate tensor as a graph node named after its ONNX operator, with its
inputs, attributes, shape and row-major data; and the derived figures the article quotes.

**Masked scores**: JSON has no −∞, so −∞ is written as `null` (the only non-finite value a trace
holds: the decoder's masked self-attention scores, `dec.L.self.hH.masked`, and `const.neg_inf`).

**Streaming**: send `Accept: {NDJSON}` (or use `/api/trace/stream`) for newline-delimited JSON:
first a header (everything but `nodes`, plus `node_count`), then one node per line in the order
computed."""


@router.get("/trace", response_model=Trace, summary="Every tensor of one translation", description=TRACE_DOC,
            responses={**BAD_INPUT, 200: {"content": {NDJSON: {"schema": {"type": "string"}}},
                                          "description": "The trace, as JSON or NDJSON"}})
async def get_trace(request: Request, input: str | None = Query(None, description=INPUT_HELP),
                    model: str | None = Query(None, description=MODEL_HELP)) -> Response:
    n = parse_input(input)
    svc = (await chosen(request, parse_model(model)))[0]
    t0 = time.perf_counter()
    entry = await svc.trace(n)
    timing = f"trace;dur={1000 * (time.perf_counter() - t0):.2f}"
    if NDJSON in request.headers.get("accept", ""):
        resp = _stream_response(entry)
    else:
        resp = cached(request, f'"{svc.version}-{n}"', entry.body)
    resp.headers["Vary"] = "Accept"
    resp.headers["Server-Timing"] = timing  # time to compute (or find) the trace, for bench/
    return resp


@router.get("/trace/stream", response_model=TraceStreamHeader, summary="The trace, streamed as NDJSON",
            responses={**BAD_INPUT, 200: {"content": {NDJSON: {"schema": {"type": "string"}}},
                                          "description": "A TraceStreamHeader line, then node_count "
                                                         "TraceNode lines"}})
async def get_trace_stream(request: Request, input: str | None = Query(None, description=INPUT_HELP),
                           model: str | None = Query(None, description=MODEL_HELP)) -> Response:
    """The same trace as `/api/trace`, as newline-delimited JSON: the header first (with `node_count`),
    then one node per line in the order computed, so a client can draw while the rest arrives."""
    n = parse_input(input)
    return _stream_response(await (await chosen(request, parse_model(model)))[0].trace(n))


@router.get("/beam", response_model=Beam, summary="Beam search, step by step", responses=BAD_INPUT)
async def get_beam(request: Request, input: str | None = Query(None, description=INPUT_HELP),
                   model: str | None = Query(None, description=MODEL_HELP)) -> Response:
    """Beam search with beam 4 and length penalty α = 0.6 (§6.1 of the paper): every step's alive and
    finished hypotheses with their log-probabilities, penalties and scores; the finished list; the best."""
    n = parse_input(input)
    return json_response(await (await chosen(request, parse_model(model)))[0].beam(n))


@router.get("/facts", response_model=Facts, summary="The fact ledger")
async def get_facts(request: Request) -> Response:
    """Every number the article takes from the literature: id, value, what it is, and the source
    sentence or table row it is quoted from (content/facts.tsv)."""
    return json_response(request.app.state.facts_body)


health_router = APIRouter(tags=["health"])


@health_router.get("/healthz", response_model=Health, summary="Liveness")
async def healthz(request: Request) -> Response:
    """`ok` and the weights version, once the model is loaded."""
    return json_response(dumps(service(request).health_doc()))
