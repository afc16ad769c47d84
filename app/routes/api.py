"""The JSON API under /api: model card, weights, trace (JSON or NDJSON), beam search, ledger, number words."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterable

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import Response, StreamingResponse

from app.documents.query_forms import REQUIRED_QUERY, query_forms
from app.documents.schemas import (
    Beam,
    ErrorResponse,
    Facts,
    Health,
    ModelCard,
    NumberWords,
    Trace,
    TraceStreamHeader,
    Weights,
)
from app.service.deps import (
    CheckpointQuery,
    ChosenModelDep,
    InputQuery,
    ServiceDep,
    TraceRequestDep,
    parse_checkpoint,
    parse_input,
)
from app.service.number_words import number_words_body
from app.service.time_machine import Checkpoints
from app.serving.delivery import COMPACT, SAFETENSORS, accepts_media, ndjson_writes, once_compressed, wants_safetensors
from app.serving.once import once_response
from app.serving.serialize import dumps
from app.serving.trace_bytes import CachedTrace
from app.settings import settings
from app.startup.health import health_doc

router = APIRouter(prefix="/api", tags=["api"])
NDJSON = "application/x-ndjson"
BAD_INPUT = {
    422: {
        "model": ErrorResponse,
        "description": "The input is not a number the model can read, or the model is not one of the shipped ones",
    }
}
# DataUnavailable and BusyError (app/main.py): a route that loads a model (?model=) or runs one says so
UNAVAILABLE = {
    503: {
        "model": ErrorResponse,
        "description": "The model or a data file it needs is not available (the message names which), "
        "or the model is busy: try again after Retry-After",
    }
}
NOT_MODIFIED = {304: {"description": "Not modified: the If-None-Match ETag is current"}}


def document_queries(spec: dict) -> dict:
    """The OpenAPI document `spec` (changed in place) with each query parameter app/service/deps.py reads given
    the texts it accepts (app/documents/query_forms.py), and input= required. deps.py declares them as
    optional text, so that a missing input= is refused with the same words as a blank one (as the page's own
    refusals are, static/js/numbers.js) rather than with FastAPI's "Field required"."""
    forms = query_forms(Checkpoints().steps)  # the default model's snapshots: the modern model has none
    for operations in spec.get("paths", {}).values():
        for operation in operations.values():
            for param in operation.get("parameters", []):
                if param["in"] == "query" and param["name"] in forms:
                    param["schema"] = forms[param["name"]]
                    param["required"] = param["name"] in REQUIRED_QUERY
    return spec


def json_response(body: bytes, headers: dict[str, str] | None = None, status_code: int = 200) -> Response:
    return Response(body, status_code=status_code, media_type="application/json", headers=headers)


def etag_matches(request: Request, etag: str) -> bool:
    given = request.headers.get("if-none-match", "")
    tags = {t.strip().removeprefix("W/") for t in given.split(",")}
    return "*" in tags or etag in tags


def cached(
    request: Request, etag: str, body: bytes, media_type: str = "application/json", br: bytes | None = None
) -> Response:
    """A response the browser may keep but must revalidate; 304 when its copy is current. `br`: the body
    already Brotli-compressed for a client that accepts br (app/serving/delivery.py), sent as it is."""
    headers = {"ETag": etag, "Cache-Control": "no-cache"}
    if etag_matches(request, etag):
        return Response(status_code=304, headers=headers)
    if br is not None:
        return Response(br, media_type=media_type, headers={**headers, "Content-Encoding": "br"})
    return Response(body, media_type=media_type, headers=headers)


@router.get(
    "/model",
    response_model=ModelCard,
    summary="The model card",
    responses={**NOT_MODIFIED, **BAD_INPUT, **UNAVAILABLE},
)
async def get_model(request: Request, chosen: ChosenModelDep) -> Response:
    """Configuration, vocabulary, parameter count and shapes, model-level figures, training summary,
    and the weights version (a hash of the weights)."""
    return await once_response(request, chosen.card, "application/json")


@router.get(
    "/weights",
    response_model=Weights,
    summary="Every parameter tensor",
    responses={
        200: {
            "content": {SAFETENSORS: {"schema": {"type": "string", "format": "binary"}}},
            "description": "The parameters, as JSON or (with `Accept: application/octet-stream`) safetensors",
        },
        **NOT_MODIFIED,
        422: {"model": ErrorResponse, "description": "The model or the checkpoint is not a stored one"},
        **UNAVAILABLE,
    },
)
async def get_weights(request: Request, chosen: ChosenModelDep, checkpoint: CheckpointQuery = None) -> Response:
    """Every parameter under its trace id (weight matrices as (d_in, d_out)), flattened row-major.
    The ETag is the weights version; send it back as If-None-Match to get 304 Not Modified."""
    svc = chosen.service
    step = parse_checkpoint(svc, checkpoint)
    binary = wants_safetensors(request)  # the same numbers as raw little-endian float32 (app/serving/delivery.py)
    if step is None:
        version, body = svc.version, chosen.weights(binary)
    else:
        body = await anyio.to_thread.run_sync(svc.checkpoints.weights_body, step, binary)
        version = svc.checkpoints.get(step).version
    etag = f'"{version}.safetensors"' if binary else f'"{version}"'
    # compressed once per coding and kept (app/serving/once.py): 719 KB of JSON, never compressed per request
    return await once_response(
        request, body, SAFETENSORS if binary else "application/json", etag, {"Vary": "Accept, Accept-Encoding"}
    )


async def _stream(writes: Iterable[bytes]) -> AsyncIterator[bytes]:
    for w in writes:
        yield w


async def _stream_response(request: Request, entry: CachedTrace) -> StreamingResponse:
    """The NDJSON lines, header first, in writes of about 64 KiB (whole lines only); to a client that
    accepts br, the same writes Brotli-compressed once and kept with the trace (app/serving/delivery.py)."""
    headers = {"Cache-Control": "no-cache", "Vary": "Accept, Accept-Encoding"}
    writes = once_compressed(request, entry.br_writes, entry.stream_br)
    if writes is not None:
        return StreamingResponse(_stream(writes), media_type=NDJSON, headers={**headers, "Content-Encoding": "br"})
    return StreamingResponse(_stream(ndjson_writes(entry.ndjson())), media_type=NDJSON, headers=headers)


TRACE_DOC = f"""The trace of one input: the input as number, English and German; the source and
target tokens; every intermediate tensor as a graph node named after its ONNX operator, with its
inputs, attributes, shape and row-major data; and the derived figures the article quotes.

**Masked scores**: JSON has no −∞, so −∞ is written as `null` (the only non-finite value a trace
holds: the decoder's masked self-attention scores, `dec.L.self.hH.masked`, and `const.neg_inf`).

**Ablation**: `ablate=dec.1.cross.h3,enc.0.ffn` switches parts off. Greedy decoding runs without them,
and the graph multiplies each one's output by a zero constant (`part.gate`, a Constant, and
`part.off`, a Mul; a sub-layer's branch then adds nothing to the residual sum), so re-executing the
nodes gives the ablated output. The header's `ablation` lists them; nothing ablated is today's trace.

**Logit lens**: after the output nodes come `lens.dec.L.logits`, `.probs` and `.tokens` per decoder
layer L (that layer's output through Eᵀ and the softmax); nothing on the forward path reads them. The
header's `lens` names them and gives each position's three most probable pieces.

**Compact**: send `Accept: {COMPACT}` for the same trace with each float32 node's values as raw
little-endian float32 bytes (an 8-byte header length, a JSON header, then the data; app/serving/trace_bytes.py
describes the layout): about half the bytes, and no numbers to parse. The page's own client asks for it.

**Streaming**: send `Accept: {NDJSON}` (or use `/api/trace/stream`) for newline-delimited JSON:
first a header (everything but `nodes`, plus `node_count`), then one node per line in the order
computed."""


@router.get(
    "/trace",
    response_model=Trace,
    summary="Every tensor of one translation",
    description=TRACE_DOC,
    responses={
        **NOT_MODIFIED,
        **BAD_INPUT,
        **UNAVAILABLE,
        200: {
            "content": {
                NDJSON: {"schema": {"type": "string"}},
                COMPACT: {"schema": {"type": "string", "format": "binary"}},
            },
            "description": "The trace, as JSON, NDJSON or the compact form",
        },
    },
)
async def get_trace(request: Request, asked: TraceRequestDep) -> Response:
    t0 = time.perf_counter()
    entry = await asked.run()
    timing = f"trace;dur={1000 * (time.perf_counter() - t0):.2f}"
    # the page's client: float32 bytes, no number formatting (app/serving/trace_bytes.py)
    if accepts_media(request, COMPACT):
        resp = cached(request, f'"{asked.service.version}-{asked.request.tag()}.compact"', entry.compact, COMPACT)
    elif accepts_media(request, NDJSON):
        resp = await _stream_response(request, entry)
    else:
        etag = f'"{asked.service.version}-{asked.request.tag()}"'
        br = None if etag_matches(request, etag) else once_compressed(request, entry.br, entry.body_br)
        resp = cached(request, etag, entry.body, br=br)
    resp.headers["Vary"] = "Accept, Accept-Encoding"
    if settings.server_timing:  # 0.02 ms found against ~20 ms computed would tell anyone which inputs others asked for
        resp.headers["Server-Timing"] = timing
    return resp


@router.get(
    "/trace/stream",
    response_model=TraceStreamHeader,
    summary="The trace, streamed as NDJSON",
    responses={
        **BAD_INPUT,
        **UNAVAILABLE,
        200: {
            "content": {NDJSON: {"schema": {"type": "string"}}},
            "description": "A TraceStreamHeader line, then node_count TraceNode lines",
        },
    },
)
async def get_trace_stream(request: Request, asked: TraceRequestDep) -> Response:
    """The same trace as `/api/trace`, as newline-delimited JSON: the header first (with `node_count`),
    then one node per line in the order computed, so a client can draw while the rest arrives."""
    return await _stream_response(request, await asked.run())


@router.get("/beam", response_model=Beam, summary="Beam search, step by step", responses={**BAD_INPUT, **UNAVAILABLE})
async def get_beam(svc: ServiceDep, input: InputQuery = None) -> Response:
    """Beam search with beam 4 and length penalty α = 0.6 (§6.1 of the paper): every step's alive and
    finished hypotheses with their log-probabilities, penalties and scores; the finished list; the best."""
    return json_response(await svc.beam(parse_input(input)))


@router.get("/facts", response_model=Facts, summary="The fact ledger", responses=NOT_MODIFIED)
async def get_facts(request: Request) -> Response:
    """Every number the article takes from the literature: id, value, what it is, and the source
    sentence or table row it is quoted from (content/facts.tsv)."""
    return await once_response(request, request.app.state.facts_body, "application/json")


@router.get(
    "/numbers", response_model=NumberWords, summary="The number words and the input's rules", responses=NOT_MODIFIED
)
async def get_numbers(request: Request) -> Response:
    """The English words and German pieces of 0–999 999 (model/numbers.py), the vocabulary, and what a
    reader may type with every refusal's message template (model/parse.py): the data that
    static/js/numbers.js spells and reads numbers from, in the browser, as this server does."""
    return await once_response(request, await anyio.to_thread.run_sync(number_words_body), "application/json")


health_router = APIRouter(tags=["health"])


@health_router.get(
    "/healthz",
    response_model=Health,
    summary="Health: each model and data set",
    responses={503: {"model": Health, "description": "A model or data set is not available"}},
)
async def healthz(request: Request) -> Response:
    """`ok` and the weights version once the model is loaded, and whether each shipped model and data set
    is usable (its files as recorded in app/service/shipped.sha256); 503 with the reason when one is not."""
    doc = health_doc(request.app.state)
    return json_response(dumps(doc), {"Cache-Control": "no-store"}, 200 if doc.status == "ok" else 503)
