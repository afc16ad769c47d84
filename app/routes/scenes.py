"""GET /site/scene/<model>/<file>: the scene structures the static build writes (app/service/scenes.py: per source
length <n>.json.gz, per shape <n>-<m>.diff.json.gz; the same whatever parts are switched off),
answered by the served app at the very same URL with the same bytes, so that the served page, once the
server is cut, builds a new input's scene in the browser as the static page does (static/js/api.js
keepForOffline keeps the structure of the loaded input's shape; static/compute/scene_source.js reads it).

Each file is made on first asking from the loaded model (40–70 ms of a core, in the model's worker threads)
and kept in a bounded cache; a client revalidates its copy with the body's ETag. A model that is not shipped
is a 422 as for ?model=; a file name the build does not write (a shape outside scene/structure.py
`shapes_of`) a JSON 404.
"""

from __future__ import annotations

from functools import partial
from typing import Annotated

from fastapi import APIRouter, Path, Request
from fastapi.responses import Response
from starlette.exceptions import HTTPException

from app.documents.schemas import NotFound
from app.routes.api import BAD_INPUT, NOT_MODIFIED, UNAVAILABLE
from app.service.model_choice import MODEL_HELP, chosen, parse_model
from app.service.model_service import ByteLRU
from app.service.scenes import STRUCTURE, NoSceneFile, body_of, file_of_name
from app.serving.once import once_response
from model import models

router = APIRouter(tags=["static build"])
GZIP = "application/gzip"
_bodies = ByteLRU(16 * 2**20)  # ~900 structures of ~18 KB: both models' common shapes
NOT_FOUND = {404: {"model": NotFound, "description": "No such scene file: the shape is not one the page may meet"}}
# documented, not checked by FastAPI: a bad name gets the app's own refusal (422 for a model, 404 for a file)
ModelName = Annotated[str, Path(description=MODEL_HELP, json_schema_extra={"enum": list(models.NAMES)})]
FILE_NAMES = r"^[0-9]{1,3}(?:-[0-9]{1,3}\.diff)?\.json\.gz$"  # whole_number's n and m of 1–3 ASCII digits
FileName = Annotated[
    str,
    Path(
        description=f"<n>.json.gz or <n>-<m>{STRUCTURE}: n source pieces, m decoder rows",
        json_schema_extra={"pattern": FILE_NAMES},
    ),
]


def _body(svc, what: tuple[str, int, int]) -> bytes:
    key = (svc.name, svc.version, *what)
    body = _bodies.get(key)
    if body is None:
        body = body_of(svc, *what)
        _bodies.put(key, body, len(body))
    return body


@router.get(
    "/site/scene/{model}/{file}",
    response_class=Response,
    summary="A graph shape's scene structure, as the static build writes it (gzip JSON)",
    responses={
        **BAD_INPUT,
        **NOT_FOUND,
        **UNAVAILABLE,
        **NOT_MODIFIED,
        200: {"content": {GZIP: {}}, "description": "gzip-compressed JSON"},
    },
)
async def get_scene_file(request: Request, model: ModelName, file: FileName) -> Response:
    name = parse_model(model)  # a bad name: ModelNameError, 422 with the accepted names
    try:
        what = file_of_name(name, file)
    except NoSceneFile as e:
        raise HTTPException(404, str(e)) from None
    svc = (await chosen(request.app.state, name)).service
    body = await svc.run(partial(_body, svc), what)
    return await once_response(request, body, GZIP)
