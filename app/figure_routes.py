"""The article's figures as JSON at /api/figures/{name}, drawn by static/js/figures.js.

Model figures (positional encoding, softmax saturation, schedules, training curves, parameter count,
attention sharpness per head) are computed once at start-up from app/figures.py and the loaded model.
Research-desk figures come from research.results.load(…) and are re-read when a results file
changes, so results committed while the server runs appear without a restart; an experiment with no
results yet is served with its record and `status: "not yet run"`, never with made-up numbers.

Reproduce any figure's data with one command: `python -m app.figure_routes NAME` (prints the JSON).
"""

from __future__ import annotations

import math
import sys
import threading
from pathlib import Path
from typing import Any

import markdown
from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import Response
from pydantic import BaseModel, Field

from app import figures, time_machine
from app.format import format_number
from app.service import dumps

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
RESEARCH = {"research-ablations": "ablations", "research-extrapolation": "extrapolation",
            "research-alignment": "alignment", "research-followups": "followups"}
LABEL_KEYS = ("study", "variant", "words", "layer", "convention", "who", "ablated", "subset")
HIDDEN_KEYS = {"seeds", "counts", "description"}


class Figure(BaseModel):
    name: str = Field(description="the figure's name, as in the article's <figure data-figure=…>")
    title: str
    data: dict[str, Any] = Field(description="the figure's data; its shape depends on the figure")


class FigureList(BaseModel):
    names: list[str]


# ---- model figures, computed once ------------------------------------------------------------------

def model_figure_data(model, attention: dict | None = None) -> dict[str, dict]:
    from model.data import heldout_numbers
    from model.stats import attention_peaks_per_head
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


# ---- research figures, re-read when their files change ----------------------------------------------

def _html(text: str) -> str:
    return markdown.markdown(text or "", extensions=["tables"]) if text else ""


def _fmt(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(_fmt(v) for v in value)
    if isinstance(value, float):
        return format_number(value, "fixed3" if 0 <= value <= 1 else "sig4")
    if isinstance(value, int) and not isinstance(value, bool):
        return format_number(value, "int")
    return format_number(value)  # None as a dash, a boolean as yes or no, text as it is


def _cell(value: Any) -> str:
    if isinstance(value, dict) and "values" in value:
        vals = [v for v in value["values"] if v is not None]
        if value.get("mean") is None:
            return "–"
        return _fmt(value["mean"]) + (f" ({', '.join(_fmt(v) for v in vals)})" if len(vals) > 1 else "")
    return _fmt(value)


def summary_view(rows: list[dict]) -> dict:
    """The summary rows as a table of strings, and the main metric per row (mean and each seed) for a plot."""
    if not rows:
        return {"columns": [], "rows": [], "chart": None}
    columns = [c for c in rows[0] if c not in HIDDEN_KEYS]
    for r in rows[1:]:
        columns += [c for c in r if c not in HIDDEN_KEYS and c not in columns]
    table = [[_cell(r.get(c)) for c in columns] for r in rows]
    metric = next((c for c in columns for r in rows
                   if isinstance(r.get(c), dict) and "values" in r[c] and r[c].get("mean") is not None), None)
    chart = None
    if metric:
        labels = [" · ".join(_fmt(r[k]) for k in LABEL_KEYS if r.get(k) is not None) or f"row {i + 1}"
                  for i, r in enumerate(rows)]
        stat = [r.get(metric) if isinstance(r.get(metric), dict) else {} for r in rows]
        chart = {"metric": metric, "labels": labels,
                 "mean": [s.get("mean") for s in stat],
                 "values": [[v for v in s.get("values", []) if isinstance(v, int | float) and math.isfinite(v)]
                            for s in stat],
                 "series": {"variant": [r.get("variant") for r in rows], "words": [r.get("words") for r in rows]}}
    return {"columns": columns, "rows": table, "chart": chart}


def research_data(experiment: str) -> dict:
    from research.results import load

    rec = load(experiment)
    parts = rec.get("parts") or [rec]
    runs = rec.get("runs") or []
    return {"experiment": experiment, "title": rec.get("title", experiment),
            "status": "results" if runs else "not yet run", "runs": len(runs),
            **{f"{k}_html": _html(rec.get(k, "")) for k in ("claim", "hypothesis", "design")},
            "verdict_html": _html(rec.get("verdict", "")) if runs else "",
            "command": rec.get("command", f"python -m research {experiment}"),
            "parts": [{"experiment": p.get("experiment"), "title": p.get("title"),
                       "status": "results" if p.get("runs") else "not yet run", "runs": len(p.get("runs") or []),
                       "command": p.get("command"),
                       "verdict_html": _html(p.get("verdict", "")) if p.get("runs") else "",
                       **summary_view(p.get("summary") or [])}
                      for p in parts]}


def _research_stamp() -> tuple:
    root = Path(__file__).resolve().parent.parent / "research"
    files = sorted([*(root / "results").glob("*.json"), *(root / "records").glob("*.md")])
    return tuple((f.name, f.stat().st_mtime_ns) for f in files)


_research_cache: dict[str, tuple[tuple, bytes]] = {}
_research_lock = threading.Lock()


def research_body(name: str) -> bytes:
    experiment = RESEARCH[name]
    stamp = _research_stamp()
    with _research_lock:
        hit = _research_cache.get(name)
        if hit and hit[0] == stamp:
            return hit[1]
    try:
        data = research_data(experiment)
    except Exception as e:  # a half-written results file must not break the page
        data = {"experiment": experiment, "title": experiment, "status": "not available",
                "error": f"{type(e).__name__}: {str(e)[:200]}", "command": f"python -m research {experiment}",
                "parts": []}
    body = dumps(Figure(name=name, title=f"Research desk: {data['title']}", data=data))
    with _research_lock:
        _research_cache[name] = (stamp, body)
    return body


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
