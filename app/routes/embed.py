"""The embed view, /embed: only the stage, for the state its address names (input, step, cell, compare,
ablate, checkpoint, model), to sit in another site's frame (a slide, a course page). It is the one route
app/serving/security.py lets another site frame. The server checks the input, the parts, the snapshot and the model
as the article does (pages.checked_page_request) and names the step; the page's scripts read the same
address (static/js/page/address.js) and draw it (static/js/embed.js)."""

from __future__ import annotations

from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from app.routes.pages import checked_page_request, page
from app.serving.whole_numbers import whole_number
from model import models

router = APIRouter(include_in_schema=False)


def embed_step(steps: list, step: str | None) -> tuple[int, str]:
    """The step the address names (1 when it names none) and what was wrong with it."""
    numbers = [s.number for s in steps]
    if step is None or step == "":
        return numbers[0], ""
    number = whole_number(step)
    if number in numbers:
        return number, ""
    first, last = numbers[0], numbers[-1]
    return first, f"no step '{step[:20]}' (the steps are {first}–{last}); the stage shows step {first}"


@router.get("/embed", response_class=HTMLResponse)
async def embed(
    request: Request,
    input: str | None = None,
    step: str | None = None,
    ablate: str | None = None,
    checkpoint: str | None = None,
    model: str | None = None,
) -> HTMLResponse:
    state = request.app.state
    steps = state.content.steps
    model_name, _, error = await checked_page_request(state, input, ablate, checkpoint, model)
    number, step_error = embed_step(steps, step)
    article = {k: v for k, v in request.query_params.items() if k not in ("step", "present")}
    return page(
        request,
        "embed.html",
        step=next(s for s in steps if s.number == number),
        error="; ".join(filter(None, (error, step_error))),
        model_name=model_name if model_name != models.DEFAULT else "",
        article_href=f"/?{urlencode(article)}#step-{number}" if article else f"/#step-{number}",
    )
