"""GET /api/trace.onnx: the trace of one request as an ONNX model file, beside the stage's PNG and CSV.

The same request as /api/trace (input, ablate, checkpoint, model; checked once by app/service/deps.py's
`TraceRequestDep`), built by recorder/onnx_model.py: open the file in Netron to see the graph, or run it
with any ONNX runtime to get every tensor the stage draws.
"""

from __future__ import annotations

from functools import partial

from fastapi import APIRouter, Request
from fastapi.responses import Response

from app.routes.api import BAD_INPUT, NOT_MODIFIED, UNAVAILABLE, etag_matches
from app.service.deps import ModelQuery, TraceRequestDep
from app.service.model_service import ModelService, TraceRequest
from model import models
from recorder import ONNX_MEDIA_TYPE, ONNX_OPSET, onnx_bytes, trace

router = APIRouter(prefix="/api", tags=["api"])
ONNX_FILE = {
    "content": {ONNX_MEDIA_TYPE: {"schema": {"type": "string", "format": "binary"}}},
    "description": "A .onnx file (an ONNX ModelProto)",
}

ONNX_DOC = f"""The same trace as `/api/trace`, as an ONNX model (opset {ONNX_OPSET}): the parameters are
initializers, each trace node is an ONNX node under its id, and every node's value is a named graph
output, so [Netron](https://netron.app) draws the whole graph and an ONNX runtime reproduces every tensor.
The graph has no inputs: it is the computation of this one input (the token ids are constants).
Slice's ranges become int64 initializers (`onnx.starts.8`, …), and today's recipe's RotaryEmbedding,
which the opset defines for (batch, sequence, hidden), runs on a batch of one between an Unsqueeze and a
Squeeze. Passes `onnx.checker.check_model(full_check=True)` (tests/recorder/test_onnx.py)."""


def file_name(model: str, req: TraceRequest) -> str:
    """anatomy-42.onnx; the model, the parts switched off and the snapshot, when given, named too."""
    return "anatomy-" + "-".join([*([] if model == models.DEFAULT else [model]), req.tag()]) + ".onnx"


def build(svc: ModelService, req: TraceRequest) -> bytes:
    """The request's trace, recorded afresh (the trace cache keeps serialised JSON, not nodes), as ONNX."""
    model, params, version = svc.weights_for(req)
    t = trace(model, req.number, params, version, ablation=req.ablation)
    note = "" if req.checkpoint is None else f"Weights after {req.checkpoint} training steps."
    return onnx_bytes(t, params, note)


@router.get(
    "/trace.onnx",
    summary="The trace as an ONNX model (open it in Netron)",
    description=ONNX_DOC,
    response_class=Response,
    responses={**BAD_INPUT, **UNAVAILABLE, 200: ONNX_FILE, **NOT_MODIFIED},
)
async def get_trace_onnx(request: Request, checked: TraceRequestDep, model: ModelQuery = None) -> Response:
    svc, req = checked.service, checked.request
    etag = f'"{svc.version}-{req.tag()}.onnx"'  # as /api/trace's: the snapshots ship with the model
    headers = {
        "ETag": etag,
        "Cache-Control": "no-cache",
        "Content-Disposition": f'attachment; filename="{file_name(model or models.DEFAULT, req)}"',
    }
    if etag_matches(request, etag):
        return Response(status_code=304, headers=headers)
    body = await svc.run(partial(build, svc), req)
    return Response(body, media_type=ONNX_MEDIA_TYPE, headers=headers)
