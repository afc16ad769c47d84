"""How the app's bytes travel: compression, the weights as safetensors, and the browser libraries.

- **Compression**: starlette-compress negotiates zstd, Brotli or gzip from Accept-Encoding for every
  text response worth it (HTML, CSS, JavaScript, JSON, SVG; not the binary weights, which would shrink
  by 1 %). The NDJSON trace stream is registered as a streaming type, so each write the app makes is
  flushed through the compressor at once: the stream still arrives line by line, only smaller.
  `ANATOMY_COMPRESS=0` turns it off (bench/bench_delivery.py measures the page both ways). A trace's
  compact form is compressed per request too (zstd, a median six-digit trace 465 → 158 KiB in about 1 ms
  idle): no kept form is made for it, so a cold trace the page asks for queues no background Brotli.
- **Precompressed traces**: a cached trace's JSON body, and its NDJSON stream, are Brotli-compressed
  once, at a quality a per-request compressor cannot afford (the longest trace, 777 777, goes from
  811 KB to under 200 KB), and kept with the trace: later requests cost no compression. That takes
  up to 0.9 s of a core, which a cold request must not wait for: the first request for a form is
  compressed per request by the middleware (a few ms, about 15 % larger), and the kept form is made
  in one background thread meanwhile (`precompress_later`). The stream is one Brotli stream flushed
  after every write, so it still decodes write by write as it arrives.
- **Weights as safetensors**: `/api/weights` sent with `Accept: application/octet-stream` answers the
  same parameters as raw little-endian float32 in the safetensors layout (an 8-byte header length, a
  JSON header of dtype, shape and byte offsets, then the data), with the same ETag/304 behaviour;
  `weights_body` makes either form of any set of parameters (the shipped model's, a snapshot's).
- **Browser libraries**: the files the pages load from node_modules are listed here, and only they (with
  the fonts KaTeX's CSS names) are served; the app refuses to start, with one line naming what is
  missing, when `npm ci` has not been run.
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

import brotli
import numpy as np
from fastapi import FastAPI, Request
from safetensors.numpy import save
from starlette_compress import CompressMiddleware, add_compress_type

from app.documents.schemas import Weights
from app.serving.serialize import dumps
from app.settings import settings

T = TypeVar("T")
NDJSON = "application/x-ndjson"
SAFETENSORS = "application/octet-stream"
COMPACT = "application/vnd.anatomy.trace"  # a trace's compact form (app/serving/trace_bytes.py)
STARTUP_FAILURE = 3  # uvicorn's and gunicorn's exit code for a worker that cannot boot: they stop, not respawn
TRACE_BROTLI_QUALITY = 8  # ~0.1 s for a long trace, once; 4 (the per-request level) is ~5 % larger
# Traces above this size are compressed at quality 10: since the logit lens and the teaching figures were
# added, the longest (777 777, 811 KB) is 210 KB at quality 8 and 184 KB at 10, which costs ~1 s of one
# core on a loaded machine, paid once per trace and form, for the few longest inputs only.
LONG_TRACE_BYTES = 600_000
LONG_TRACE_BROTLI_QUALITY = 10


def brotli_quality(size: int) -> int:
    return LONG_TRACE_BROTLI_QUALITY if size > LONG_TRACE_BYTES else TRACE_BROTLI_QUALITY


# /vendor/<name> → the node_modules folder it serves, and the files the pages load from it
VENDOR: dict[str, tuple[str, tuple[str, ...]]] = {
    "three": ("three", ("build/three.module.js", "build/three.core.js")),
    "katex": ("katex/dist", ("katex.min.js", "katex.min.css", "contrib/auto-render.min.js")),
    "swagger-ui": ("swagger-ui-dist", ("swagger-ui-bundle.js", "swagger-ui.css")),
    "chartjs": ("chart.js/dist", ("chart.umd.min.js",)),
}


FONT_URL = re.compile(r"url\((fonts/[^)\s]+)\)")


def vendor_files(node_modules: Path) -> dict[str, frozenset[str]]:
    """The files each /vendor/<name> serves: the ones the pages load, and the fonts KaTeX's CSS names;
    nothing else of the npm package (no package.json, no swagger petstore page)."""
    served = {name: set(files) for name, (_, files) in VENDOR.items()}
    css = node_modules / VENDOR["katex"][0] / "katex.min.css"
    if css.is_file():
        served["katex"] |= set(FONT_URL.findall(css.read_text()))
    return {name: frozenset(files) for name, files in served.items()}


def compression_enabled() -> bool:
    return settings.compress


def add_compression(app: FastAPI) -> None:
    """Compress responses by Accept-Encoding (zstd, then br, then gzip), the NDJSON stream included."""
    if compression_enabled():
        add_compress_type(NDJSON, streaming=True)  # flush after every write: incremental, compressed
        add_compress_type(COMPACT)  # its JSON header shrinks tenfold, its float32 data by a half: 465 → 158 KiB
        app.add_middleware(CompressMiddleware, minimum_size=1024)


def missing_vendor_files(node_modules: Path) -> list[str]:
    return [
        f"{folder}/{f}" for folder, files in VENDOR.values() for f in files if not (node_modules / folder / f).is_file()
    ]


def require_vendor(node_modules: Path) -> None:
    """Stop the process (exit 3, so a multi-worker supervisor stops too) with one line naming the missing
    browser libraries, instead of serving the pages and answering 500 for every /vendor file."""
    missing = missing_vendor_files(node_modules)
    if missing:
        print(
            f"anatomy: the browser libraries are missing from {node_modules} ({', '.join(missing)}); "
            "run `npm ci` in the project folder, then start again",
            file=sys.stderr,
            flush=True,
        )
        raise SystemExit(STARTUP_FAILURE)


def quality(header: str, name: str, wildcards: tuple[str, ...] = ()) -> float:
    """The q-value `header` (an Accept or Accept-Encoding value) gives `name`: its own entry's when it has
    one, else the best wildcard's; 0 when neither is named (or q is not a number)."""
    own, wild = None, 0.0
    for item in header.split(","):
        token, *params = (p.strip() for p in item.split(";"))
        token = token.lower()
        if token != name and token not in wildcards:
            continue
        q = next((p[2:].strip() for p in params if p.lower().startswith("q=")), "1")
        try:
            value = min(max(float(q), 0.0), 1.0)
        except ValueError:
            value = 0.0
        if token == name:
            own = value if own is None else max(own, value)
        else:
            wild = max(wild, value)
    return own if own is not None else wild


def accepts(request: Request, coding: str) -> bool:
    """Whether Accept-Encoding names `coding` (or *) with a quality above 0."""
    return quality(request.headers.get("accept-encoding", ""), coding, ("*",)) > 0


def accepts_media(request: Request, media_type: str) -> bool:
    """Whether Accept names `media_type` itself with a quality above 0 (`*/*` asks for the default, JSON)."""
    return quality(request.headers.get("accept", ""), media_type) > 0


def once_compressed(request: Request, made: T | None, make: Callable[[], T]) -> T | None:
    """A cached trace's kept Brotli form for a client that accepts br: `made` when it exists. None
    otherwise (or with compression off), and the response is compressed per request; the first time,
    `make()` is queued to make the kept form in the background (it takes up to 0.9 s of a core)."""
    if not compression_enabled() or not accepts(request, "br"):
        return None
    if made is None:
        precompress_later(make)
    return made


# One thread makes the kept forms, in the order asked (brotli releases the GIL: requests go on meanwhile).
# The queue is bounded: under a flood of new inputs a trace whose turn does not come is queued again
# when it is next asked for, and meanwhile it is compressed per request.
PRECOMPRESSOR = ThreadPoolExecutor(max_workers=1, thread_name_prefix="precompress")
PRECOMPRESS_QUEUE = 16
_queued: set[tuple[int, str]] = set()
_queue_lock = threading.Lock()


def precompress_later(make: Callable[[], object]) -> bool:
    """Queue `make` (a cached trace's bound method that makes and keeps a form) unless that form is
    already queued or the queue is full; True when queued."""
    key = (id(getattr(make, "__self__", make)), getattr(make, "__name__", ""))
    with _queue_lock:
        if key in _queued or len(_queued) >= PRECOMPRESS_QUEUE:
            return False
        _queued.add(key)

    def run() -> None:
        try:
            make()
        finally:
            with _queue_lock:
                _queued.discard(key)

    PRECOMPRESSOR.submit(run)
    return True


def precompressed_all() -> None:
    """Wait until every queued form is made (tests and benches; the one thread works in order)."""
    PRECOMPRESSOR.submit(lambda: None).result()


def precompress(body: bytes) -> bytes:
    return brotli.compress(body, mode=brotli.MODE_TEXT, quality=brotli_quality(len(body)))


def ndjson_writes(lines: Iterator[bytes], chunk: int = 64 * 1024) -> Iterator[bytes]:
    """The NDJSON lines as the stream writes them: the header alone, then about 64 KiB of whole lines."""
    yield next(lines)
    batch: list[bytes] = []
    size = 0
    for line in lines:
        batch.append(line)
        size += len(line)
        if size >= chunk:
            yield b"".join(batch)
            batch, size = [], 0
    if batch:
        yield b"".join(batch)


def brotli_writes(writes: Iterable[bytes]) -> list[bytes]:
    """One Brotli stream of `writes`, flushed after each, so that each decodes on arrival."""
    writes = list(writes)
    c = brotli.Compressor(mode=brotli.MODE_TEXT, quality=brotli_quality(sum(map(len, writes))))
    out = [c.process(w) + c.flush() for w in writes]
    out[-1] += c.finish()
    return out


def wants_safetensors(request: Request) -> bool:
    return accepts_media(request, SAFETENSORS)


def weights_safetensors(params: dict[str, np.ndarray], version: str) -> bytes:
    """Every parameter as little-endian float32 in the safetensors layout. safetensors orders the header
    by name; the metadata keeps the parameters' own order (the JSON document's), comma-separated."""
    tensors = {k: np.ascontiguousarray(v, dtype="<f4") for k, v in params.items()}
    return save(tensors, metadata={"weights_version": version, "order": ",".join(params)})


def weights_body(params: dict[str, np.ndarray], version: str, binary: bool = False) -> bytes:
    """What /api/weights sends for these parameters: the Weights document as JSON, or as safetensors."""
    return weights_safetensors(params, version) if binary else dumps(Weights.of(params, version))
