"""Builds the app: `uvicorn app.main:app`. The model and the content load once, at start-up."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.exceptions import HTTPException

from app.documents.content import load_content
from app.documents.schemas import ErrorDetail, ErrorResponse
from app.routes import api, embed, figures, live, onnx, pages, program, scenes
from app.routes.api import json_response
from app.service.deps import InputError
from app.service.model_choice import ACCEPTED_MODELS, ChosenModel, ModelNameError, loaded
from app.service.model_service import BusyError, ModelService
from app.service.shipped import DataUnavailable, require_shipped
from app.serving.client_limits import ClientLimits
from app.serving.delivery import STARTUP_FAILURE, VENDOR, add_compression, require_vendor, vendor_files
from app.serving.head import HeadAsGet
from app.serving.internal_errors import InternalErrors
from app.serving.once import OnceFiles
from app.serving.security import SecurityHeaders, content_security_policy, csp_hash
from app.serving.serialize import dumps
from app.startup import prerender
from app.startup.bundle import require_bundle
from model import models
from model.parse import ACCEPTED

ROOT = Path(__file__).resolve().parent.parent
NODE_MODULES = ROOT / "node_modules"
DESCRIPTION = (
    """A trained miniature of the 2017 encoder-decoder Transformer (English number words →
German number pieces), dissected: its configuration, its weights, and every intermediate tensor of
one translation as a self-describing graph of ONNX-style operations.

Inputs: """
    + ACCEPTED
    + ". Anything else is answered with 422 and a message saying what is accepted."
)


def error(status: int, message: str, headers: dict[str, str] | None = None, accepted: str = ACCEPTED) -> Response:
    return json_response(dumps(ErrorResponse(detail=ErrorDetail(message=message, accepted=accepted))), headers, status)


def default_figures(svc: ModelService) -> dict:
    """The default input's live figures, computed by the page's code (kept in bundle/prerendered/, or
    computed now under Node); without them the article would show empty numbers: one line and exit 3."""
    try:
        return prerender.prerendered("figures", svc)["figures"]
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        print(
            f"anatomy: the article's numbers for the default input could not be computed ({e}); run "
            "`python3 -m app.prerender` where Node is installed (scripts/setup.sh does)",
            file=sys.stderr,
        )
        raise SystemExit(STARTUP_FAILURE) from None


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    state = app.state
    if not hasattr(state, "service"):
        state.service = ModelService.load()
    svc: ModelService = state.service
    loaded(state)[models.DEFAULT] = ChosenModel.of(svc)  # its card and weights bodies, made once
    # the article's numbers for the default input, as the page's own code computes them (app/startup/prerender.py)
    state.content = load_content(live={**svc.figures, **default_figures(svc)})
    state.facts_body = dumps(svc.facts_doc(state.content.facts))
    state.figure_bodies = figures.compute_model_figures(svc.translator.model, svc.attention)
    yield


def add_error_handlers(app: FastAPI) -> None:
    """Every error the app answers is JSON with a message a reader can act on, and never a stack trace."""

    @app.exception_handler(InputError)
    async def bad_input(request: Request, exc: InputError) -> Response:
        return error(422, str(exc), accepted=exc.accepted)

    @app.exception_handler(ModelNameError)
    async def bad_model(request: Request, exc: ModelNameError) -> Response:
        return error(422, str(exc), accepted=exc.accepted)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> Response:
        where = "; ".join(f"{'.'.join(map(str, e.get('loc', ())))}: {e.get('msg', '')}" for e in exc.errors())
        return error(422, f"invalid request ({where[:300]}); accepted: {ACCEPTED}")

    @app.exception_handler(DataUnavailable)
    async def unavailable(request: Request, exc: DataUnavailable) -> Response:
        return error(503, str(exc), accepted=ACCEPTED_MODELS)

    @app.exception_handler(BusyError)
    async def busy(request: Request, exc: BusyError) -> Response:
        return error(503, str(exc), {"Retry-After": "1"})

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        return json_response(dumps({"detail": {"message": str(exc.detail)}}), exc.headers, exc.status_code)

    @app.exception_handler(Exception)
    async def internal(request: Request, exc: Exception) -> Response:  # never a stack trace
        return json_response(dumps({"detail": {"message": "internal error"}}), None, 500)


def openapi_document(app: FastAPI) -> dict:
    """FastAPI's OpenAPI document, built once, with the query parameters' accepted forms (app/routes/api.py)."""
    if app.openapi_schema is None:
        api.document_queries(FastAPI.openapi(app))  # FastAPI.openapi builds and keeps app.openapi_schema
    return app.openapi_schema


def create_app() -> FastAPI:
    require_vendor(NODE_MODULES)  # without `npm ci`: one line and exit, not a 500 for every /vendor file
    shipped = require_shipped()  # a missing or altered weights or data file: one line and exit 3
    bundle = require_bundle(ROOT)  # the page's JavaScript, built from the sources as they are (app/startup/bundle.py)
    app = FastAPI(
        title="Anatomy of the Transformer",
        version="1",
        description=DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    app.openapi = partial(openapi_document, app)
    app.state.shipped = shipped
    app.include_router(api.router)
    app.include_router(onnx.router)  # /api/trace.onnx
    app.include_router(program.router)  # /api/program: the graph the page's engine runs
    app.include_router(live.router)  # /api/live: the recipe of the live figures a browser computes
    app.include_router(scenes.router)  # /site/scene/…: the shapes' structures the page adds each input's parts to
    app.include_router(api.health_router)
    app.include_router(figures.router)
    app.include_router(pages.router)
    app.include_router(embed.router)  # /embed: the one view another site may frame (app/serving/security.py)
    app.mount("/static", OnceFiles(ROOT / "static"), name="static")  # each file compressed once (app/serving/once.py)
    app.mount("/bundle", OnceFiles(bundle.folder, bundle.files), name="bundle")  # what the pages load
    served = vendor_files(NODE_MODULES)
    for name, (folder, _) in VENDOR.items():
        app.mount(f"/vendor/{name}", OnceFiles(NODE_MODULES / folder, served[name]), name=name)

    add_error_handlers(app)
    app.add_middleware(InternalErrors)  # innermost: a fault answers with the headers the layers outside add
    add_compression(app)
    app.add_middleware(ClientLimits)  # a request over a client's limits: 503 with the headers added outside
    app.add_middleware(SecurityHeaders, csp=content_security_policy(csp_hash(pages.IMPORT_MAP)))
    app.add_middleware(HeadAsGet)  # outermost: a HEAD gets the GET's headers, compression's included
    return app


app = create_app()
