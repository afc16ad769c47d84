"""The article's figures as the app serves them: JSON at /api/figures/{name} (drawn by static/js/figures.js)
and HTML rendered on the server into the article's <figure data-figure=NAME>, so that every figure reads
as tables without JavaScript; figures.js then draws the charts into the figure's empty `.chart-slot`s.

Model figures (positional encoding, softmax saturation, schedules, training curves, parameter count,
attention sharpness per head) are computed by article/figures.py, once at start-up, from the loaded
model. Research-desk figures are the desk's view files (written by `python -m research`, read by
app/service/research_views.py without importing research/), re-read when a file changes, so results committed
while the server runs appear without a restart; an experiment with no results yet is served with its
record and `status: "not yet run"`, never with made-up numbers. `figure_body` is the one lookup by name.

One template per figure in templates/figures/ (the research desk's share research.html); the HTML
shows exactly what /api/figures/NAME serves, and the beam search's what /api/beam serves.

Reproduce any figure's data with one command: `python -m app.figures NAME` (prints the JSON).
"""

from __future__ import annotations

import json
import re
import sys
import threading
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import Response
from jinja2 import Environment
from pydantic import BaseModel, Field

from app.documents.schemas import ErrorResponse, NotFound
from app.service import research_views, time_machine
from app.serving.once import once_response
from app.serving.serialize import dumps
from article import figures as article_figures

router = APIRouter(prefix="/api/figures", tags=["figures"])

MODEL_FIGURES = {
    "pe-pattern": "The positional-encoding table PE (positions × d_model), step 5",
    "pe-rotation": "PE(pos + k) against R_k · PE(pos): the largest difference, step 5",
    "softmax-saturation": "Largest softmax weight and Σp(1−p) against d_k, with and without 1/√d_k, step 8",
    "attention-stat": "Mean largest attention weight per row over the held-out numbers, per layer and head, step 7",
    "lr-schedule": "The learning-rate schedule: the paper's base model and the miniature, step 21",
    "training-curves": "The miniature's training log: loss, learning rate, held-out exact match, step 21",
    "time-machine": "Training snapshots: loss, held-out exact match and alignment at each, step 21",
    "param-count": "The parameter count by hand from the live shapes; base and big at V = 37\u2009000, step 25",
    "head-gallery": "Every attention head measured over the held-out numbers (research/gallery/heads.json), step 28",
}
RESEARCH = research_views.names()  # figure name -> view file, e.g. research-ablations -> ablations.json
NAMES = [*MODEL_FIGURES, *RESEARCH]
# a whole figure, or with data-part one part of a research figure (its chart and its folded data)
PLACEHOLDER = re.compile(r'<figure data-figure="([a-z0-9-]+)"(?: data-part="[a-z0-9_]+")?></figure>')
WITH_PART = re.compile(r'<figure data-figure="([a-z0-9-]+)"(?: data-part="([a-z0-9_]+)")?></figure>')
PARTIAL = re.compile(r'<figure data-partial="([a-z0-9-]+)"></figure>')  # replaced whole: figure-1, attention-by-word


class Figure(BaseModel):
    name: str = Field(description="the figure's name, as in the article's <figure data-figure=…>")
    title: str
    data: dict[str, Any] = Field(description="the figure's data; its shape depends on the figure")


class FigureList(BaseModel):
    names: list[str]


# ---- the data: model figures computed once, research figures read from the desk's view files -------


def model_figure_data(model, attention: dict | None = None) -> dict[str, dict]:
    from article.stats import attention_peaks_per_head
    from model.data import heldout_numbers
    from model.train import TrainConfig

    log = article_figures.training_curves()
    cfg = log["train_config"]
    warmup = cfg.get("warmup", TrainConfig().warmup)
    return {
        "pe-pattern": article_figures.pe_pattern(50, model.cfg.d_model),
        "pe-rotation": article_figures.pe_rotation(model.cfg.d_model),
        "softmax-saturation": article_figures.softmax_saturation(),
        "attention-stat": attention or attention_peaks_per_head(model, heldout_numbers()),
        "lr-schedule": article_figures.lr_schedules(model.cfg.d_model, warmup, cfg["steps"]),
        "training-curves": log,
        "time-machine": time_machine.figure_data(),
        "param-count": article_figures.parameter_count(model),
        "head-gallery": article_figures.head_gallery(),
    }


def compute_model_figures(model, attention: dict | None = None) -> dict[str, bytes]:
    """Every model figure's response body, ready to send; `attention` reuses the service's per-head peaks."""
    return {
        name: dumps(Figure(name=name, title=MODEL_FIGURES[name], data=data))
        for name, data in model_figure_data(model, attention).items()
    }


def research_body(name: str) -> bytes:
    data = research_views.read(RESEARCH[name])
    return dumps(Figure(name=name, title=f"Research desk: {data['title']}", data=data))


def figure_body(state, name: str) -> bytes | None:
    """The figure's JSON document as /api/figures/NAME sends it; None for a name with no figure. Model
    figures are the bodies computed at start-up (`state.figure_bodies`, app/main.py)."""
    bodies: dict[str, bytes] = getattr(state, "figure_bodies", {})
    if name in bodies:
        return bodies[name]
    if name in RESEARCH:
        return research_body(name)
    return None


# ---- routes --------------------------------------------------------------------------------------


@router.get("", response_model=FigureList, summary="The figures' names")
async def list_figures() -> Response:
    return Response(dumps(FigureList(names=NAMES)), media_type="application/json")


@router.get(
    "/{name}",
    response_model=Figure,
    summary="One figure's data",
    responses={
        304: {"description": "Not modified: the If-None-Match ETag is current"},
        404: {"model": NotFound, "description": "No figure of that name"},
        422: {"model": ErrorResponse, "description": "A request the app cannot read (as every route answers one)"},
    },
)
async def get_figure(request: Request, name: str) -> Response:
    """The data behind one of the article's figures (names from `/api/figures`); model figures are
    computed once at start-up, research figures from the committed results."""
    body = figure_body(request.app.state, name)
    if body is None:
        raise HTTPException(404, f"no figure '{name[:60]}'; known: {', '.join(NAMES)}")
    return await once_response(request, body, "application/json")  # compressed once per version of its data


# ---- the same data as HTML, in the article -------------------------------------------------------

_html_cache: dict[str, tuple[bytes, str]] = {}
_html_lock = threading.Lock()


def shade_paths(
    pattern: list[list[float]], cell: float, left: float, top: float, levels: int = 20
) -> list[tuple[str, str]]:
    """A matrix of weights in 0…1 as SVG paths, one per shade (the weight rounded to 1/levels): (opacity, d).
    One path per shade keeps a gallery of 24 pictures small; the exact weights are in the figure's data."""
    shades: dict[int, list[str]] = {}
    for r, row in enumerate(pattern):
        for c, w in enumerate(row):
            level = round(w * levels)
            if level:
                x, y = left + cell * c, top + cell * r
                shades.setdefault(level, []).append(f"M{x:g} {y:g}h{cell:g}v{cell:g}h-{cell:g}z")
    return [(f"{level / levels:g}", "".join(d)) for level, d in sorted(shades.items())]


def template_name(name: str) -> str:
    return "figures/research.html" if name in RESEARCH else f"figures/{name}.html"


def render(env: Environment, name: str, data: dict) -> str:
    return env.get_template(template_name(name)).render(d=data, b=data, name=name)


def figure_html(env: Environment, state, name: str) -> str | None:
    """The inside of one figure, rendered once per version of its data (None for a name with no figure)."""
    body = figure_body(state, name)
    if body is None:
        return None
    with _html_lock:
        hit = _html_cache.get(name)
        if hit and hit[0] == body:
            return hit[1]
    html = render(env, name, json.loads(body)["data"])
    with _html_lock:
        _html_cache[name] = (body, html)
    return html


def one_part(inner: str, part: str) -> str | None:
    """The rendered research figure's part between its <!-- part:NAME --> marks (None if it has none)."""
    m = re.search(rf"<!-- part:{re.escape(part)} -->(.*?)<!-- /part:{re.escape(part)} -->", inner, re.S)
    return m.group(1) if m else None


def fill(fragment: str, rendered: dict[str, str]) -> str:
    """Each empty <figure data-figure=NAME> with its rendered inside, marked data-server; with
    data-part=PART, only that part of it."""

    def sub(m: re.Match) -> str:
        name, part = m.group(1), m.group(2)
        inner = rendered.get(name)
        if inner is not None and part:
            inner = one_part(inner, part)
            return (
                m.group(0)
                if inner is None
                else (f'<figure data-figure="{name}" data-part="{part}" data-server="true">{inner}</figure>')
            )
        return m.group(0) if inner is None else f'<figure data-figure="{name}" data-server="true">{inner}</figure>'

    return WITH_PART.sub(sub, fragment)


def fill_partials(fragment: str, rendered: dict[str, str]) -> str:
    """Each <figure data-partial=NAME></figure> replaced by its rendered partial (a whole element)."""
    return PARTIAL.sub(lambda m: rendered.get(m.group(1), m.group(0)), fragment)


# ---- python -m app.figures NAME ------------------------------------------------------------------


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in NAMES:
        print(f"usage: python -m app.figures NAME   (NAME: {', '.join(NAMES)})", file=sys.stderr)
        return 2
    name = argv[0]
    if name in RESEARCH:
        sys.stdout.write(research_body(name).decode() + "\n")
        return 0
    from model.translate import Translator

    model = Translator.load().model
    sys.stdout.write(
        dumps(Figure(name=name, title=MODEL_FIGURES[name], data=model_figure_data(model)[name])).decode() + "\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
