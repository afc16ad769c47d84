"""GET /api/trace.onnx: the trace of one request as an ONNX model file, beside the stage's PNG and CSV.

The same request as /api/trace (input, ablate, checkpoint, model; checked by app/api.py's
`trace_request`), built by recorder/onnx_model.py: open the file in Netron to see the graph, or run it
with any ONNX runtime to get every tensor the stage draws.
"""

from __future__ import annotations

from functools import partial

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from app.api import ABLATE_HELP, BAD_INPUT, INPUT_HELP, etag_matches, trace_request
from app.model_choice import MODEL_HELP
from app.service import ModelService, TraceRequest
from app.time_machine import CHECKPOINT_HELP
from model import models
from recorder import ONNX_MEDIA_TYPE, ONNX_OPSET, onnx_bytes, trace

router = APIRouter(prefix="/api", tags=["api"])
ONNX_FILE = {"content": {ONNX_MEDIA_TYPE: {"schema": {"type": "string", "format": "binary"}}},
             "description": "A .onnx file (an ONNX ModelProto)"}

ONNX_DOC = f"""The same trace as `/api/trace`, as an ONNX model (opset {ONNX_OPSET}): the parameters are
initializers, each trace node is an ONNX node under its id, and every node's value is a named graph
output, so [Netron](https://netron.app) draws the whole graph and an ONNX runtime reproduces every tensor.
The graph has no inputs: it is the computation of this one input (the token ids are constants).
Slice's ranges become int64 initializers (`onnx.starts.8`, …), and today's recipe's RotaryEmbedding,
which the opset defines for (batch, sequence, hidden), runs on a batch of one between an Unsqueeze and a
Squeeze. Passes `onnx.checker.check_model(full_check=True)` (tests/test_onnx.py)."""


def file_name(model: str, req: TraceRequest) -> str:
    """anatomy-42.onnx; the model, the parts switched off and the snapshot, when given, named too."""
    return "anatomy-" + "-".join([*([] if model == models.DEFAULT else [model]), req.tag()]) + ".onnx"


def build(svc: ModelService, req: TraceRequest) -> bytes:
    """The request's trace, recorded afresh (the trace cache keeps serialised JSON, not nodes), as ONNX."""
    snap = None if req.checkpoint is None else svc.checkpoints.get(req.checkpoint)
    model, params, version = (snap.model, snap.params, snap.version) if snap else \
        (svc.translator.model, svc.params, svc.version)
    t = trace(model, req.number, params, version, ablation=req.ablation)
    return onnx_bytes(t, params, "" if snap is None else f"Weights after {snap.step} training steps.")


@router.get("/trace.onnx", summary="The trace as an ONNX model (open it in Netron)", description=ONNX_DOC,
            response_class=Response,
            responses={**BAD_INPUT, 200: ONNX_FILE,
                       304: {"description": "Not modified: the If-None-Match ETag is current"}})
async def get_trace_onnx(request: Request, input: str | None = Query(None, description=INPUT_HELP),
                         ablate: str | None = Query(None, description=ABLATE_HELP),
                         checkpoint: str | None = Query(None, description=CHECKPOINT_HELP),
                         model: str | None = Query(None, description=MODEL_HELP)) -> Response:
    svc, req = await trace_request(request, input, ablate, checkpoint, model)
    etag = f'"{svc.version}-{req.tag()}.onnx"'  # as /api/trace's: the snapshots ship with the model
    headers = {"ETag": etag, "Cache-Control": "no-cache",
               "Content-Disposition": f'attachment; filename="{file_name(model or models.DEFAULT, req)}"'}
    if etag_matches(request, etag):
        return Response(status_code=304, headers=headers)
    body = await svc.run(partial(build, svc), req)
    return Response(body, media_type=ONNX_MEDIA_TYPE, headers=headers)
