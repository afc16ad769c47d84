"""Server-rendered pages: the article at /, the ledger, about, topic pages and the API docs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
import orjson
from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, Response
from fastapi.templating import Jinja2Templates

from app.routes import figures
from app.routes.deeper import deeper_page
from app.service import research_views
from app.service.deps import InputError, check_trace
from app.service.model_choice import ModelNameError, chosen, parse_model
from app.service.model_service import ByteLRU, ModelService, TraceRequest
from app.service.shipped import DataUnavailable, shown_name, unreadable
from app.serving.once import QUICK_LEVELS, Store, digest_of, once_response
from article import figure1
from article.format import format_number
from article.lecture import load_lecture
from model import ids, models
from model.parse import MAX_INPUT_CHARS
from recorder import trace
from scene.build import structure_of

ROOT = Path(__file__).resolve().parents[2]
templates = Jinja2Templates(directory=ROOT / "templates")  # autoescapes .html templates
templates.env.filters["number"] = format_number  # {{ value|number("int") }}: article/format.py's formats
templates.env.globals.update(zip=zip, shade_paths=figures.shade_paths)
router = APIRouter(include_in_schema=False)
DEFAULT_INPUT = "42"

# The one inline script; its sha256 goes into the Content-Security-Policy (app/main.py).
IMPORT_MAP = '{"imports": {"three": "/vendor/three/build/three.module.js"}}'


_figure1: dict[str, dict[str, figure1.PlacedBox]] = {}


def figure1_boxes(svc: ModelService) -> dict[str, figure1.PlacedBox]:
    """Figure 1's boxes with their steps for the served model, placed on its scene's structure (of 42: the
    blocks and the tour do not depend on the input), once per weights version."""
    if svc.version not in _figure1:
        model = svc.translator.model
        scene = structure_of(trace(model, 42, svc.params, svc.version), model.cfg, svc.params, svc.tour)
        _figure1[svc.version] = figure1.place(scene)
    return _figure1[svc.version]


def page(request: Request, name: str, status_code: int = 200, **context) -> HTMLResponse:
    # a page rendered into the static build (app/site/build.py) says so: static/js/site.js reads it
    return templates.TemplateResponse(
        request, name, {"import_map": IMPORT_MAP, "site_build": site_build(request), **context}, status_code=status_code
    )


@router.get("/", response_class=HTMLResponse)
async def index(
    request: Request,
    input: str | None = None,
    ablate: str | None = None,
    checkpoint: str | None = None,
    model: str | None = None,
) -> Response:
    """The article; with ?input= (and ?ablate=, ?checkpoint=) its live values are filled for that trace before
    any script runs. With ?model= the stage draws another shipped miniature (app/service/model_choice.py); the
    article's text and figures stay the 2017 model's, and the page says so."""
    state = request.app.state
    text, number = DEFAULT_INPUT, int(DEFAULT_INPUT)
    model_name, req, error = await checked_page_request(state, input, ablate, checkpoint, model)
    if input is not None or ablate or checkpoint:
        text = (input if input is not None else DEFAULT_INPUT)[:MAX_INPUT_CHARS]
        if req is not None:
            number = req.number
    # the address as it changes the page: any other parameter (?x=1) gives the page without parameters
    key = ("index", state.service.version, site_build(request), model_name, text, req, error, files_read())
    beam = None
    if key not in READER_PAGES and "beam" in figure_names(state.content):  # (kept pages: see the topic route)
        beam = orjson.loads(await state.service.beam(number))
    return await reader_page(request, key, lambda: index_page(request, model_name, text, number, req, error, beam))


def index_page(
    request: Request, model_name: str, text: str, number: int, req: TraceRequest | None, error: str, beam: dict | None
) -> HTMLResponse:
    """The article for one checked address (in a worker thread: about 20 ms of CPU, 444 KB of HTML)."""
    state = request.app.state
    content, svc = state.content, state.service
    # the article's live numbers are the default input's (app/startup/prerender.py); the page's script computes
    # another input's (and the parts switched off, the snapshot) and fills them in
    steps = [(s, s.html) for s in content.steps]
    # every figure's data as tables in the HTML (readable without scripts); the beam for this input
    rendered = {n: h for n in figure_names(content) if (h := figures.figure_html(templates.env, state, n)) is not None}
    if beam is not None:
        rendered["beam"] = figures.render(templates.env, "beam", beam)
    steps = [(s, figures.fill(html, rendered)) for s, html in steps]
    fig1 = templates.env.get_template("figure1.html").module
    boxes, layers = figure1_boxes(svc), svc.translator.model.cfg.n_layers
    partials = {
        "figure-1": str(fig1.overview(boxes, layers)),
        "attention-by-word": templates.env.get_template("attention_words.html").render(),
        "part-ablation": part_ablation_html(svc.version),
    }
    steps = [(s, figures.fill_partials(html, partials)) for s, html in steps]
    return page(
        request,
        "index.html",
        content=content,
        steps=steps,
        input_value=text,
        input_error=error,
        model=svc.figures,
        training=svc.training,
        version=svc.version,
        figure_names=figures.NAMES,
        deeper_input=number,
        live_pending=model_name == models.DEFAULT
        and req is not None
        and (number != int(DEFAULT_INPUT) or bool(req.ablation) or req.checkpoint is not None),
        figure1_map=str(fig1.map(boxes, layers)),
        model_name=model_name if model_name != models.DEFAULT else "",
        model_title=models.TITLES[model_name],
        lecture=load_lecture(),
        lecture_json=lecture_json(),
    )


def files_read() -> tuple:
    """What the pages read from files that may change while the app runs (the research views, step 29's
    table), by size and time: a kept page is one made from the files as they are now."""
    try:
        st = PART_ABLATION.stat()
        table = (st.st_size, st.st_mtime_ns)
    except OSError:
        table = None
    return (research_views.stamp(), table)


_figure_names: dict[int, frozenset[str]] = {}


def figure_names(content) -> frozenset[str]:
    """The figures the article's steps name (their placeholders), read once per loaded content."""
    if id(content) not in _figure_names:
        _figure_names[id(content)] = frozenset(n for s in content.steps for n in figures.PLACEHOLDER.findall(s.html))
    return _figure_names[id(content)]


def site_build(request: Request) -> bool:
    return bool(getattr(request.app.state, "site_build", False))


# Pages for readers' addresses, rendered once per address as it changes the page (about 36 articles), and
# their compressed forms (apart from the unchanging files', so that readers' inputs do not push those out).
READER_PAGES = ByteLRU(16 * 2**20)
PAGE_STORE = Store(16 * 2**20, QUICK_LEVELS)
_renders: anyio.CapacityLimiter | None = None


async def reader_page(request: Request, key: tuple, render: Callable[[], HTMLResponse]) -> Response:
    """The page `render` makes for the address `key` names: made in a worker thread, one at a time (on the event
    loop it held every other client for 20–95 ms), kept, and compressed once per coding with its ETag."""
    global _renders
    hit = READER_PAGES.get(key)
    if hit is None:
        _renders = _renders or anyio.CapacityLimiter(1)
        body = bytes((await anyio.to_thread.run_sync(render, limiter=_renders)).body)
        hit = (body, digest_of(body))
        READER_PAGES.put(key, hit, len(body))
    return await once_response(
        request,
        hit[0],
        "text/html; charset=utf-8",
        headers={"Cache-Control": "no-cache"},
        digest=hit[1],
        store=PAGE_STORE,
    )


def lecture_json() -> str:
    """The lecture path as JSON for the page's data block (static/js/page/lecture.js), safe inside <script>."""
    return orjson.dumps(load_lecture().as_data()).decode().replace("</", "<\\/")


async def unchanging(request: Request, page_response: HTMLResponse) -> Response:
    """A page that is the same for every reader (until its content changes): sent with its ETag and
    compressed once per coding (app/serving/once.py). A page for a reader's address: `reader_page`."""
    return await once_response(
        request, page_response.body, "text/html; charset=utf-8", headers={"Cache-Control": "no-cache"}
    )


async def checked_page_request(
    state, input: str | None, ablate: str | None, checkpoint: str | None, model: str | None
) -> tuple[str, TraceRequest | None, str]:
    """The page's parameters checked together, as the API would check them for the model they name: the
    model's name (the default when it is bad or not available), the trace request (None when a parameter
    is bad) and the message that says what was wrong and what the page shows instead."""
    try:
        name = parse_model(model)
        svc = (await chosen(state, name)).service
    except (ModelNameError, DataUnavailable) as e:
        name, svc = models.DEFAULT, None
        error = f"{e}; the stage shows the default model"
    else:
        error = ""
    try:
        req = check_trace(svc or state.service, input if input is not None else DEFAULT_INPUT, ablate, checkpoint)
    except (InputError, DataUnavailable) as e:  # a bad parameter, or the snapshots' file damaged
        return name, None, "; ".join(filter(None, (str(e), error)))  # the API's own words for the same request
    return name, req, error


PART_ABLATION = ROOT / "research" / "results" / "part_ablation.json"  # written by python -m research.part_ablation


def part_ablation_table(path: Path = PART_ABLATION) -> dict | None:
    """The committed per-part table, read as data (the app never imports research/): the model, the
    held-out set and per part its scores, without the per-number strings; None before it has been run."""
    if not path.exists():
        return None
    doc = orjson.loads(path.read_bytes())
    return {
        **{k: v for k, v in doc.items() if k != "rows"},
        "rows": [
            {**{k: v for k, v in r.items() if k != "correct_bits"}, "name": part_name(r["part"])} for r in doc["rows"]
        ],
    }


def part_name(part: str) -> str:
    """A row's part as a reader counts it ("decoder 2 · cross-attention · head 4"); the id stays beside it."""
    return "nothing (every part on)" if part == "none" else ids.parse(part).reader_name()


def part_ablation_html(version: str) -> str:
    """Step 29's table of every part switched off (research/part_ablation.py), with its switches; a file
    gone or damaged while the app runs is "not available" with the reason, not a 500."""
    table, reason = None, ""
    try:
        table = part_ablation_table(PART_ABLATION)
        if table is None:
            reason = unreadable(FileNotFoundError(), shown_name(PART_ABLATION))
    except Exception as e:  # noqa: BLE001
        reason = unreadable(e, shown_name(PART_ABLATION))
    return templates.env.get_template("part_ablation.html").render(
        table=table, reason=reason, version=version, command="python -m research.part_ablation"
    )


@router.get("/ledger", response_class=HTMLResponse)
async def ledger(request: Request) -> Response:
    content = request.app.state.content
    return await unchanging(
        request, page(request, "ledger.html", facts=content.facts, uses=content.fact_uses, unused=content.unused_facts)
    )


@router.get("/about", response_class=HTMLResponse)
async def about(request: Request) -> Response:
    svc = request.app.state.service
    return await unchanging(
        request,
        page(
            request,
            "about.html",
            version=svc.version,
            figures=svc.figures,
            training=svc.training,
            lecture=load_lecture(),
        ),
    )


@router.get("/lesson", response_class=HTMLResponse)
async def lesson(request: Request) -> Response:
    """The teacher's one-page lesson plan: the lecture path's steps (content/lecture.yaml), each with its
    minutes, key line, a question for the room and inputs to try; light and printable on one page."""
    content = request.app.state.content
    titles = {s.number: s.title for s in content.steps}
    return await unchanging(request, page(request, "lesson.html", lecture=load_lecture(), titles=titles))


@router.get("/topics/{slug}", response_class=HTMLResponse)
async def topic(request: Request, slug: str, input: str | None = None) -> Response:
    """A go-deeper page, with its figures for ?input= (the default's, and the message, when it is bad)."""
    state = request.app.state
    t = state.content.topics.get(slug)
    if t is None:
        raise HTTPException(404, f"no topic page '{slug[:60]}'")
    _, req, error = await checked_page_request(state, input, None, None, None)
    text = (input if input is not None else DEFAULT_INPUT)[:MAX_INPUT_CHARS]
    key = ("topic", slug, state.service.version, site_build(request), text, req, error, files_read())
    figures_page = None
    if key not in READER_PAGES:  # (kept pages are put on the event loop: still kept in reader_page below)
        number = req.number if req else int(DEFAULT_INPUT)
        figures_page = await deeper_page(state.service, slug, text, number, error)
    refs = state.content.references_in(t.html)
    return await reader_page(
        request, key, lambda: page(request, "topic.html", topic=t, deeper=figures_page, references=refs)
    )


@router.get("/docs", response_class=HTMLResponse)
async def docs(request: Request) -> Response:
    """Swagger UI from the local copy in node_modules (no CDN, no inline script)."""
    return await unchanging(request, page(request, "docs.html"))
