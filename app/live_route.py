"""GET /api/live: the recipe of the article's live figures (article/recipe.py), for the page, which computes a
trace's figures itself (static/local/derived.js), whether the server or the page ran the network.

One document per model (?model=, checked by app/deps.py's `ChosenModelDep`; a bad name is a 422 JSON error),
built on first asking and kept; its ETag is the weights version, so a client's copy is revalidated with 304.
The static build writes it at `site_path("/api/live?model=NAME")` (app/site.py).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import Field

from app.api import BAD_INPUT
from app.deps import ChosenModelDep
from app.once import once_response
from app.schemas import Document
from app.serialize import dumps
from app.service import ModelService
from article.recipe import RECIPE_FORMAT, live_recipe

router = APIRouter(prefix="/api", tags=["api"])
_bodies: dict[str, bytes] = {}  # by weights version: the recipe's JSON body


class LiveRecipe(Document):
    """What a client needs to compute a trace's live figures from its nodes."""

    format: str = Field(description=RECIPE_FORMAT)
    nodes: dict[str, Any] = Field(description="the ids of the nodes the figures read: single nodes, each "
                                              "head's blocks of the worked sub-layer (`worked_heads`), the last "
                                              "decoder layer's cross-attention weights per head")
    names: dict[str, str] = Field(description="the reader's name of each block a question names, by id")
    constants: dict[str, Any] = Field(description="ε_ls, the tie, d_model, d_k, heads, dropout, the end marker, "
                                                  "the vocabulary, the pieces step 16 looks for")
    parameters: dict[str, Any] = Field(description="step 25's station and its tensors (id, the article's "
                                                   "symbol, size), which the question counts")
    sentences: dict[str, str | dict[str, str]] = Field(
        description="every sentence of the figures (article/sentence_table.py): a template with {name}, "
                    "{name:.Nm} (N decimals, a true minus), {name:.Nf} (N decimals) or {name:g} (six "
                    "significant digits); a list is {item, sep}")
    topics: dict[str, Any] = Field(description="what the go-deeper pages' tables for one input read "
                                               "(static/local/topic_tables.js): node ids and constants")


def live_body(svc: ModelService) -> bytes:
    body = _bodies.get(svc.version)
    if body is None:
        body = _bodies[svc.version] = dumps(LiveRecipe(**live_recipe(svc.translator.model)).model_dump())
    return body


@router.get("/live", response_model=LiveRecipe, summary="The recipe of the article's live figures",
            responses={**BAD_INPUT, 304: {"description": "Not modified: the If-None-Match ETag is current"}})
async def get_live(request: Request, chosen: ChosenModelDep) -> Response:
    svc = chosen.service
    return await once_response(request, live_body(svc), "application/json", f'"{svc.version}.live"')
