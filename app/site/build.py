"""The static build: the app rendered into a folder that a plain file server serves.

`python -m app.site build DIR` starts the app in this process (its lifespan run, no socket), asks it
for every page, every file it serves and every API document the pages read, and writes each answer's
exact bytes into DIR; `python -m http.server -d DIR` then serves the site. Pages are rendered with
`app.state.site_build = True` (templates/base.html then says so in <meta name="anatomy-site">, which
static/js/site.js `isStaticSite` reads). Nothing is rendered twice: the pages are the app's own; only
their links to API documents (a figure's data, the about page's /api/trace?input=42) are pointed at
those documents' files, which are built too.

Where a thing lies in DIR:
- a page at its path, as DIR/<path>/index.html (/ → DIR/index.html; the file server redirects
  /ledger to /ledger/ and answers its index.html), every URL it names relative to its own file (`relative_urls`):
  the folder works wherever a host puts it, at its root or under a path (/course/anatomy/);
- a file the app serves (/static, /bundle, /vendor) at its own path;
- an API document at `site_path(url)`: /api/a/b?y=2&x=1 → /site/api/a/b/x=1&y=2.json, the query's
  parameters sorted by name (none: index), .bin for a binary body (the weights as safetensors);
  static/js/site.js `sitePath` is the same rule (tests/site/test_site.py holds them equal);
- a scene structure (scene/structure.py) at /site/scene/<model>/<n>-<m>.diff.json.gz, gzip, as its difference
  from the base of its source length (<n>.json.gz: app/service/json_diff.py), one per shape whatever parts are
  switched off (every part's gate has its place: scene/gates.py; app/service/scenes.py; the served app answers
  the same URLs: app/routes/scenes.py);
- what was built, with sizes, in /site/index.json.

Every GET route of the app is a page, a document, a mounted folder, or named in SERVER_ONLY with why
the static site has no copy of it (tests/site/test_site.py fails for a route that is none of these).
"""

from __future__ import annotations

import argparse
import html
import re
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote, urlencode, urlsplit

import anyio.from_thread
import orjson

from app.service.scenes import scene_files
from app.serving.serialize import dumps
from app.serving.site_paths import site_path
from app.site.urls import SITE_TAG, relative_urls

SITE_FORMAT = "anatomy-site/1"
MANIFEST = "/site/index.json"
# The routes the static site has no copy of, and why: each answers for an input or the server itself,
# and the static page computes what it needs in the browser instead (static/compute/). (The default
# input's trace and beam, which pages link to, are written as the documents of those links.)
SERVER_ONLY = {
    "/api/trace": "one input's trace: the static page computes it (static/compute/trace.js computeTrace)",
    "/api/trace/stream": "the same trace, streamed: computed in the browser as /api/trace is",
    "/api/beam": "one input's beam search: computed in the browser (static/compute/trace.js computeBeam)",
    "/api/trace.onnx": "one input's trace as an ONNX model: made by the server's onnx package only",
    "/healthz": "the server's health: a folder of files has none",
}
OWN_PATH = ("/openapi.json",)  # documents a page asks for by their own path (Swagger UI on /docs)
# The values a page route's path parameters take: every topic the content has
PAGE_PARAMETERS: dict[str, Callable[[object], list[str]]] = {"slug": lambda state: sorted(state.content.topics)}
BINARY = "application/octet-stream"


def model_query(name: str) -> str:
    """`?model=` as the page asks it (static/js/page.js; app/documents/schemas.py weights_url): none for the default."""
    from model import models  # here, not at the top: model/ imports torch, which site_path's users need not

    return "" if name == models.DEFAULT else "?" + urlencode({"model": name})


@dataclass(frozen=True)
class Document:
    """An API document the static pages read: `url` as the page spells it, `binary` when it is asked
    with Accept: application/octet-stream (the weights as safetensors)."""

    url: str
    binary: bool = False

    @property
    def path(self) -> str:
        return site_path(self.url, self.binary)


def site_documents(site: InProcess) -> Iterator[Document]:
    """Every API document the static pages read, the one list of them (a part that needs another adds
    it here): each model's card, program and weights (the trained model's and every training snapshot's,
    at the URLs the program names), the number words, the ledger, and every figure. (What no route
    answers, such as the scene structures, is made by the build itself: `scene_files`.)"""
    from model import models

    for name in models.NAMES:
        yield Document(f"/api/model{model_query(name)}")
        program = Document(f"/api/program{model_query(name)}")
        yield program
        yield Document(f"/api/live{model_query(name)}")  # the live figures' recipe (static/compute/derived.js)
        weights = site.json(program.url)["weights"]
        for url in (weights["trained"], *weights["checkpoints"].values()):
            yield Document(url, binary=True)
    yield from (Document("/api/numbers"), Document("/api/facts"), Document("/api/figures"))
    for name in site.json("/api/figures")["names"]:
        yield Document(f"/api/figures/{quote(name)}")


# ---- the app, asked in this process -----------------------------------------------------------------


class BuildError(RuntimeError):
    """A page, file or document the app did not answer with 200: the build stops and names it."""


class InProcess:
    """The app with its lifespan run, asked over ASGI in this process: each answer's exact body,
    uncompressed (Accept-Encoding: identity), as a browser reads it; any status but 200 a BuildError."""

    def __init__(self, app):
        self.app = app

    def __enter__(self) -> InProcess:
        self._portal_cm = anyio.from_thread.start_blocking_portal()
        self.portal = self._portal_cm.__enter__()
        self._life = self.portal.wrap_async_context_manager(self.app.router.lifespan_context(self.app))
        self._life.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._life.__exit__(*exc)
        self._portal_cm.__exit__(*exc)

    def get(self, url: str, accept: str = "application/json") -> bytes:
        status, body = self.portal.call(self._get, url, accept)
        if status != 200:
            raise BuildError(f"{url} answered {status}: {body[:300].decode(errors='replace')}")
        return body

    def json(self, url: str):
        return orjson.loads(self.get(url))

    async def _get(self, url: str, accept: str) -> tuple[int, bytes]:
        parts = urlsplit(url)
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "GET",
            "scheme": "http",
            "path": unquote(parts.path),
            "raw_path": parts.path.encode(),
            "query_string": parts.query.encode(),
            "root_path": "",
            "client": ("127.0.0.1", 0),
            "server": ("site.invalid", 80),
            "headers": [(b"host", b"site.invalid"), (b"accept", accept.encode()), (b"accept-encoding", b"identity")],
        }
        status, chunks = 0, []

        async def receive() -> dict:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: dict) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await self.app(scope, receive, send)
        return status, b"".join(chunks)


# ---- what the app answers: its routes and mounted folders -------------------------------------------


def get_routes(routes) -> Iterator[object]:
    """Every route of `routes`, those of included routers too (FastAPI ≥ 0.16x keeps them apart)."""
    for r in routes:
        inner = getattr(r, "original_router", None)
        if inner is not None:
            yield from get_routes(inner.routes)
        else:
            yield r


def page_urls(app) -> list[str]:
    """Every HTML page: the GET routes that answer HTML, each path parameter over PAGE_PARAMETERS."""
    from fastapi.responses import HTMLResponse

    out = []
    for r in get_routes(app.routes):
        if getattr(r, "response_class", None) is not HTMLResponse or "GET" not in (r.methods or ()):
            continue
        names = list(r.param_convertors)
        if not names:
            out.append(r.path)
        for name in names:  # one parameter a page, today's only kind (/topics/{slug})
            out += [r.path.replace(f"{{{name}}}", quote(v)) for v in PAGE_PARAMETERS[name](app.state)]
    return out


def mounted_files(app, source_maps: bool = False) -> Iterator[str]:
    """The URL of every file the app's mounted folders serve (/static, /bundle, /vendor/…): a folder
    that lists its files (app/serving/once.py OnceFiles.files) serves those only; the others all they hold.
    The bundle's source maps (3.5 MB) only when asked: no page loads them, only a browser's devtools."""
    for r in app.routes:
        files = getattr(getattr(r, "app", None), "files", False)
        folder = getattr(getattr(r, "app", None), "directory", None)
        if folder is None or files is False:
            continue
        names = (
            files
            if files is not None
            else (p.relative_to(folder).as_posix() for p in Path(folder).rglob("*") if p.is_file())
        )
        yield from (
            f"{r.path}/{quote(name)}"
            for name in sorted(names)
            if "__pycache__" not in name and (source_maps or not name.endswith(".map"))
        )


def page_file(url: str) -> str:
    return url.rstrip("/") + "/index.html"


# ---- the build --------------------------------------------------------------------------------------


class Folder:
    """The folder being written: each file under its site path, and how many bytes each kind took."""

    def __init__(self, root: Path):
        self.root = root.resolve()
        self.sizes: dict[str, int] = {}
        self.written: dict[str, list[str]] = {}

    def write(self, kind: str, path: str, body: bytes) -> None:
        target = (self.root / unquote(path).lstrip("/")).resolve()
        if not target.is_relative_to(self.root):  # a URL that would climb out of the folder
            raise BuildError(f"{path} lies outside the site folder")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(body)
        self.sizes[kind] = self.sizes.get(kind, 0) + len(body)
        self.written.setdefault(kind, []).append(path)


def prepare(root: Path) -> None:
    """An empty folder to build into: a new one, an empty one, or an earlier build (emptied); never a
    folder of other files, which the build would mix with or delete."""
    if root.exists() and any(root.iterdir()):
        if not (root / MANIFEST.lstrip("/")).is_file():
            raise BuildError(f"{root} is not empty and holds no earlier build ({MANIFEST}): choose another folder")
        shutil.rmtree(root)
    root.mkdir(parents=True, exist_ok=True)


# a page's link to an API document (the about page's /api/trace?input=42, a figure's data), HTML-escaped
API_LINK = re.compile(r'href="(/api/[^"]*)"')


def site_links(page: bytes) -> tuple[bytes, list[Document]]:
    """A page with each link to an API document pointed at the document's file, and those documents (the
    build writes them too, so that every link of the static site leads somewhere)."""
    linked: list[Document] = []

    def at_file(m: re.Match) -> str:
        linked.append(Document(html.unescape(m.group(1))))
        return f'href="{html.escape(linked[-1].path)}"'

    return API_LINK.sub(at_file, page.decode()).encode(), linked


@dataclass(frozen=True)
class Options:
    source_maps: bool = False  # the bundle's .map files too (for a browser's devtools)
    scene_shapes: Callable[[str, int, int], bool] | None = None  # a quick build: the structures it takes only
    workers: int | None = None  # processes making the scene structures (app/service/scenes.py; 1: this one)


def write_site(site: InProcess, out: Folder, options: Options) -> tuple[dict[str, str], str]:
    """Every page, file and document into `out`; each document's file by its URL, and the scene
    structures' note ("" when they were built)."""
    from app.service.model_choice import chosen

    linked: list[Document] = []
    pages = frozenset(page_urls(site.app))
    for url in sorted(pages):
        page, links = site_links(site.get(url, "text/html"))
        if SITE_TAG.encode() not in page:
            raise BuildError(f"{url} does not say it is the static site's ({SITE_TAG})")
        out.write("pages", page_file(url), relative_urls(page, url, pages))
        linked += links
    for url in [*mounted_files(site.app, options.source_maps), *OWN_PATH]:
        out.write("files", url, site.get(url, "*/*"))
    documents = {doc.path: doc for doc in [*site_documents(site), *linked]}  # each file once
    for doc in documents.values():
        out.write("documents", doc.path, site.get(doc.url, BINARY if doc.binary else "application/json"))
    files, note = scene_files(
        lambda name: site.portal.call(chosen, site.app.state, name).service, options.scene_shapes, options.workers
    )
    for path, body in files:
        out.write("scenes", path, body)
    return {doc.url: doc.path for doc in documents.values()}, note


def manifest(app, out: Folder, documents: dict[str, str], note: str, options: Options) -> dict:
    """What was built (site/index.json): the models with their snapshots, each kind's files and bytes,
    and the routes left to the server with why."""
    from model import models

    state = app.state
    checkpoints = {
        name: [
            int(s)
            for s in orjson.loads((out.root / site_path(f"/api/program{model_query(name)}").lstrip("/")).read_bytes())[
                "weights"
            ]["checkpoints"]
        ]
        for name in models.NAMES
    }
    return {
        "format": SITE_FORMAT,
        "default_model": models.DEFAULT,
        "models": list(models.NAMES),
        "checkpoints": checkpoints,
        "weights_version": state.service.version,
        "documents": documents,
        "built": {kind: sorted(paths) for kind, paths in out.written.items()},
        "bytes": out.sizes,
        "scenes_note": note,
        "server_only": SERVER_ONLY,
        "source_maps": options.source_maps,
        "scenes": "some (a quick build)" if options.scene_shapes else "all",
    }


def build(root: Path, app=None, options: Options = Options()) -> dict:
    """The static site in `root` (see the module's docstring); returns its manifest (the same bytes for
    the same sources: no time stamp)."""
    if app is None:
        from app.main import create_app

        app = create_app()
    app.state.site_build = True  # the pages say they are the static site's (templates/base.html)
    prepare(root)
    out = Folder(root)
    with InProcess(app) as site:
        documents, note = write_site(site, out, options)
    doc = manifest(app, out, documents, note, options)
    out.write("manifest", MANIFEST, dumps(doc))
    return doc


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="python -m app.site",
        description="The static build: the app as a folder "
        "of files that any file server serves (python -m http.server -d DIR).",
    )
    p.add_argument("command", choices=["build"])
    p.add_argument("folder", type=Path, help="where to write the site (new, empty, or an earlier build)")
    p.add_argument("--source-maps", action="store_true", help="add the bundle's source maps (3.5 MB)")
    p.add_argument(
        "--scene-lengths",
        type=lambda t: frozenset(map(int, t.split(","))),
        default=None,
        help="a quick build: the scene structures of these source lengths only (e.g. 3,4)",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help="processes making the scene structures (default: one per core, up to 4; 1: this process)",
    )
    args = p.parse_args(argv)
    lengths = args.scene_lengths
    t0 = time.perf_counter()
    try:
        doc = build(
            args.folder, options=Options(args.source_maps, lengths and (lambda _, n, m: n in lengths), args.workers)
        )
    except BuildError as e:
        print(f"anatomy: the static build failed: {e}", file=sys.stderr)
        return 1
    sizes = ", ".join(f"{kind} {n / 1e6:.1f} MB" for kind, n in doc["bytes"].items())
    print(
        f"built {args.folder} in {time.perf_counter() - t0:.1f} s: {sizes}; "
        f"serve it with python -m http.server -d {args.folder}"
    )
    if doc["scenes_note"]:
        print(f"note: {doc['scenes_note']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
