"""The scene of a trace as the page computes it (static/compute/page_parts.js, run under Node by
scripts/page-parts.mjs), for Python's renderer, the notebook: the input's own parts (the axes' words, row
names, threads, token labels, the worked row, the windows) are the page's, so each per-input rule is written
once, in the page. What the page reads is written here from its sources: the shape's structure
(scene/structure.py, as the server serves it at /site/scene/<model>/<n>.json.gz) and the model's recipe
(article/recipe.py, /api/live).

    page_parts_of(trace, model, params, tour, name) → {"derived": the live figures, "scene": the scene's JSON}
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import orjson

from article.recipe import live_recipe
from article.tour import TourStep
from model.transformer import EncoderDecoder
from scene.structure import shape_trace, structure_document

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "page-parts.mjs"


def structure_of_shape(
    model: EncoderDecoder, params: dict[str, np.ndarray], tour: list[TourStep], name: str, n: int, m: int
) -> dict:
    """The structure document of the model's shape (n, m), as the server serves it (structure_for_shape)."""
    doc = structure_document(shape_trace(model.cfg, params, n, m), model.cfg, params, tour)
    return {"format": doc["format"], "model": name, "n": n, "m": m, **doc}


def page_parts_of(trace, model: EncoderDecoder, params: dict[str, np.ndarray], tour: list[TourStep], name: str) -> dict:
    """The live figures and the scene the page computes for `trace` (recorder's Trace) of the model `name`."""
    n, m = len(trace.source_tokens), len(trace.target_tokens)
    folder = f"/site/scene/{name}"
    documents = {
        "/api/live": live_recipe(model),
        f"{folder}/{n}.json.gz": structure_of_shape(model, params, tour, name, n, m),
        f"{folder}/{n}-{m}.diff.json.gz": None,
    }  # the base is this shape's own: no difference
    served = {**trace.to_json(), "model": name}
    return run_page_parts({"documents": documents, "cases": [{"trace": served, "model": ""}]})[0]


def run_page_parts(job: dict) -> list[dict]:
    """scripts/page-parts.mjs over a job ({documents: {url: JSON or null}, cases: [{trace, model}]}): each
    case's {derived, scene}, as the page computes them."""
    if shutil.which("node") is None:
        raise RuntimeError("the page's parts are computed by the page's code under Node, which is not installed")
    run = subprocess.run(
        ["node", "--no-warnings", str(SCRIPT)],
        cwd=ROOT,
        capture_output=True,
        timeout=300,
        input=orjson.dumps(job, option=orjson.OPT_SERIALIZE_NUMPY),
    )
    if run.returncode != 0:
        raise RuntimeError(f"scripts/page-parts.mjs failed: {run.stderr.decode()[-2000:]}")
    return json.loads(run.stdout)["cases"]
