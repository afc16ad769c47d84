"""GET /api/live: the recipe of the article's live figures (article/recipe.py), for the page, which computes a
trace's figures itself (static/compute/derived.js), whether the server or the page ran the network.

One document per model (?model=, checked by app/service/deps.py's `ChosenModelDep`; a bad name is a 422 JSON error),
built on first asking and kept; its ETag is the weights version, so a client's copy is revalidated with 304.
The static build writes it at `site_path("/api/live?model=NAME")` (app/site/build.py).
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from app.routes.api import BAD_INPUT, NOT_MODIFIED, UNAVAILABLE
from app.service.deps import ChosenModelDep
from app.service.live_recipe import LiveRecipe, live_body
from app.serving.once import once_response

router = APIRouter(prefix="/api", tags=["api"])


@router.get(
    "/live",
    response_model=LiveRecipe,
    summary="The recipe of the article's live figures",
    responses={**BAD_INPUT, **UNAVAILABLE, **NOT_MODIFIED},
)
async def get_live(request: Request, chosen: ChosenModelDep) -> Response:
    svc = chosen.service
    return await once_response(request, live_body(svc), "application/json", f'"{svc.version}.live"')
