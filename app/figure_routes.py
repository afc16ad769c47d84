"""The article's figures as JSON at /api/figures/{name}, drawn by static/js/figures.js.

Model figures (positional encoding, softmax saturation, schedules, training curves, parameter count,
attention sharpness per head) are computed once at start-up from article/figures.py and the loaded model.
Research-desk figures are the desk's view files (written by `python -m research`, read by
app/research_views.py without importing research/), re-read when a file changes, so results committed
while the server runs appear without a restart; an experiment with no results yet is served with its
record and `status: "not yet run"`, never with made-up numbers.

Reproduce any figure's data with one command: `python -m app.figure_routes NAME` (prints the JSON).
"""

from __future__ import annotations

import sys
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import Response
from pydantic import BaseModel, Field

from app import research_views, time_machine
from app.serialize import dumps
from article import figures

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


class Figure(BaseModel):
    name: str = Field(description="the figure's name, as in the article's <figure data-figure=…>")
    title: str
    data: dict[str, Any] = Field(description="the figure's data; its shape depends on the figure")


class FigureList(BaseModel):
    names: list[str]


# ---- model figures, computed once ------------------------------------------------------------------

def model_figure_data(model, attention: dict | None = None) -> dict[str, dict]:
    from article.stats import attention_peaks_per_head
    from model.data import heldout_numbers
    from model.train import TrainConfig

    log = figures.training_curves()
    cfg = log["train_config"]
    warmup = cfg.get("warmup", TrainConfig().warmup)
    return {
        "pe-pattern": figures.pe_pattern(50, model.cfg.d_model),
        "pe-rotation": figures.pe_rotation(model.cfg.d_model),
        "softmax-saturation": figures.softmax_saturation(),
        "attention-stat": attention or attention_peaks_per_head(model, heldout_numbers()),
        "lr-schedule": figures.lr_schedules(model.cfg.d_model, warmup, cfg["steps"]),
        "training-curves": log,
        "time-machine": time_machine.figure_data(),
        "param-count": figures.parameter_count(model),
        "head-gallery": figures.head_gallery(),
    }


def compute_model_figures(model, attention: dict | None = None) -> dict[str, bytes]:
    """Every model figure's response body, ready to send; `attention` reuses the service's per-head peaks."""
    return {name: dumps(Figure(name=name, title=MODEL_FIGURES[name], data=data))
            for name, data in model_figure_data(model, attention).items()}


# ---- research figures: the desk's view files (app/research_views.py), re-read when they change ------------

def research_body(name: str) -> bytes:
    data = research_views.read(RESEARCH[name])
    return dumps(Figure(name=name, title=f"Research desk: {data['title']}", data=data))


# ---- routes --------------------------------------------------------------------------------------

@router.get("", response_model=FigureList, summary="The figures' names")
async def list_figures() -> Response:
    return Response(dumps(FigureList(names=[*MODEL_FIGURES, *RESEARCH])), media_type="application/json")


@router.get("/{name}", response_model=Figure, summary="One figure's data",
            responses={404: {"description": "No figure of that name"}})
async def get_figure(request: Request, name: str) -> Response:
    """The data behind one of the article's figures (names from `/api/figures`); model figures are
    computed once at start-up, research figures from the committed results."""
    bodies: dict[str, bytes] = getattr(request.app.state, "figure_bodies", {})
    if name in bodies:
        body = bodies[name]
    elif name in RESEARCH:
        body = research_body(name)
    else:
        raise HTTPException(404, f"no figure '{name[:60]}'; known: {', '.join([*MODEL_FIGURES, *RESEARCH])}")
    return Response(body, media_type="application/json", headers={"Cache-Control": "no-cache"})


def main(argv: list[str]) -> int:
    names = [*MODEL_FIGURES, *RESEARCH]
    if len(argv) != 1 or argv[0] not in names:
        print(f"usage: python -m app.figure_routes NAME   (NAME: {', '.join(names)})", file=sys.stderr)
        return 2
    name = argv[0]
    if name in RESEARCH:
        sys.stdout.write(research_body(name).decode() + "\n")
        return 0
    from model.translate import Translator

    model = Translator.load().model
    sys.stdout.write(dumps(Figure(name=name, title=MODEL_FIGURES[name],
                                  data=model_figure_data(model)[name])).decode() + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
