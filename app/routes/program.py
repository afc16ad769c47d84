"""GET /api/program: the model's graph as a program free of the input's length (recorder/program.py), for a
client that computes every trace itself (static/engine/ runs it in the page).

One document per model (?model=, checked by app/service/deps.py's `ChosenModelDep`; a bad name is a 422 JSON
error), built on first asking and kept; its ETag is the weights version, so a client's copy is revalidated
with 304. The document names where the parameters are sent (`weights`: the trained model's and each
training snapshot's /api/weights) and the decoding rules (the length limit, beam search's settings).
"""

from __future__ import annotations

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import Response

from app.routes.api import BAD_INPUT, NOT_MODIFIED, UNAVAILABLE
from app.service.deps import ChosenModelDep
from app.service.program import PROGRAM_DOC, cached_program, program_body
from app.serving.once import once_response

router = APIRouter(prefix="/api", tags=["api"])


@router.get(
    "/program",
    summary="The model's graph as a length-free program",
    description=PROGRAM_DOC,
    responses={**BAD_INPUT, **UNAVAILABLE, **NOT_MODIFIED},
)
async def get_program(request: Request, chosen: ChosenModelDep) -> Response:
    svc = chosen.service
    body = cached_program(svc) or await anyio.to_thread.run_sync(program_body, svc)
    return await once_response(request, body, "application/json", f'"{svc.version}.program"')
