"""The recipe of the article's live figures (article/recipe.py) as one document per model, built on first
asking and kept by weights version: /api/live sends it (app/routes/live.py), the prerender and the static
build write it."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from app.documents.schemas import Document
from app.service.model_service import ModelService
from app.serving.serialize import dumps
from article.recipe import RECIPE_FORMAT, live_recipe

_bodies: dict[str, bytes] = {}  # by weights version: the recipe's JSON body


class LiveRecipe(Document):
    """What a client needs to compute a trace's live figures from its nodes."""

    format: str = Field(description=RECIPE_FORMAT)
    nodes: dict[str, Any] = Field(
        description="the ids of the nodes the figures read: single nodes, each "
        "head's blocks of the worked sub-layer (`worked_heads`), the last "
        "decoder layer's cross-attention weights per head"
    )
    names: dict[str, str] = Field(description="the reader's name of each block a question names, by id")
    constants: dict[str, Any] = Field(
        description="ε_ls, the tie, d_model, d_k, heads, dropout, the end marker, "
        "the vocabulary, the pieces step 16 looks for"
    )
    parameters: dict[str, Any] = Field(
        description="step 25's station and its tensors (id, the article's symbol, size), which the question counts"
    )
    sentences: dict[str, str | dict[str, str]] = Field(
        description="every sentence of the figures (article/sentence_table.py): a template with {name}, "
        "{name:.Nm} (N decimals, a true minus), {name:.Nf} (N decimals) or {name:g} (six "
        "significant digits); a list is {item, sep}"
    )
    topics: dict[str, Any] = Field(
        description="what the go-deeper pages' tables for one input read "
        "(static/compute/topic_tables.js): node ids and constants"
    )


def live_body(svc: ModelService) -> bytes:
    body = _bodies.get(svc.version)
    if body is None:
        body = _bodies[svc.version] = dumps(LiveRecipe(**live_recipe(svc.translator.model)).model_dump())
    return body
