"""How the app's bytes travel: compression, the weights as safetensors, and the browser libraries.

- **Compression**: starlette-compress negotiates zstd, Brotli or gzip from Accept-Encoding for every
  text response worth it (HTML, CSS, JavaScript, JSON, SVG; not the binary weights, which would shrink
  by 1 %). The NDJSON trace stream is registered as a streaming type, so each write the app makes is
  flushed through the compressor at once: the stream still arrives line by line, only smaller.
  `ANATOMY_COMPRESS=0` turns it off (bench/bench_delivery.py measures the page both ways).
- **Precompressed traces**: a cached trace's JSON body is Brotli-compressed once, when it is computed,
  at a quality a per-request compressor cannot afford (the longest trace, 777 777, goes from 735 KiB
  to under 200 KB); a client that accepts `br` gets those bytes, with no compression work per request.
- **Weights as safetensors**: `/api/weights` sent with `Accept: application/octet-stream` answers the
  same parameters as raw little-endian float32 in the safetensors layout (an 8-byte header length, a
  JSON header of dtype, shape and byte offsets, then the data), with the same ETag/304 behaviour.
- **Browser libraries**: the files the pages load from node_modules are listed here; the app refuses
  to start, with one line naming what is missing, when `npm ci` has not been run.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import brotli
import numpy as np
from fastapi import FastAPI, Request
from safetensors.numpy import save
from starlette_compress import CompressMiddleware, add_compress_type

NDJSON = "application/x-ndjson"
SAFETENSORS = "application/octet-stream"
STARTUP_FAILURE = 3  # uvicorn's and gunicorn's exit code for a worker that cannot boot: they stop, not respawn
TRACE_BROTLI_QUALITY = 8  # ~0.1 s for the longest trace, once per trace; 4 (the per-request level) leaves it at 204 KB

# /vendor/<name> → the node_modules folder it serves, and the files the pages load from it
VENDOR: dict[str, tuple[str, tuple[str, ...]]] = {
    "three": ("three", ("build/three.module.js", "build/three.core.js")),
    "katex": ("katex/dist", ("katex.min.js", "katex.min.css", "contrib/auto-render.min.js")),
    "swagger-ui": ("swagger-ui-dist", ("swagger-ui-bundle.js", "swagger-ui.css")),
    "chartjs": ("chart.js/dist", ("chart.umd.min.js",)),
}


def compression_enabled() -> bool:
    return os.environ.get("ANATOMY_COMPRESS", "1") != "0"


def add_compression(app: FastAPI) -> None:
    """Compress responses by Accept-Encoding (zstd, then br, then gzip), the NDJSON stream included."""
    if compression_enabled():
        add_compress_type(NDJSON, streaming=True)  # flush after every write: incremental, compressed
        app.add_middleware(CompressMiddleware, minimum_size=1024)


def missing_vendor_files(node_modules: Path) -> list[str]:
    return [f"{folder}/{f}" for folder, files in VENDOR.values() for f in files
            if not (node_modules / folder / f).is_file()]


def require_vendor(node_modules: Path) -> None:
    """Stop the process (exit 3, so a multi-worker supervisor stops too) with one line naming the missing
    browser libraries, instead of serving the pages and answering 500 for every /vendor file."""
    missing = missing_vendor_files(node_modules)
    if missing:
        print(f"anatomy: the browser libraries are missing from {node_modules} ({', '.join(missing)}); "
              "run `npm ci` in the project folder, then start again", file=sys.stderr, flush=True)
        raise SystemExit(STARTUP_FAILURE)


def accepts(request: Request, coding: str) -> bool:
    """Whether Accept-Encoding names `coding` (or *) with a quality above 0."""
    for item in request.headers.get("accept-encoding", "").split(","):
        name, *params = (p.strip() for p in item.split(";"))
        if name.lower() in (coding, "*"):
            q = next((p[2:] for p in params if p.startswith("q=")), "1")
            try:
                return float(q) > 0
            except ValueError:
                return False
    return False


def precompress(body: bytes) -> bytes:
    return brotli.compress(body, mode=brotli.MODE_TEXT, quality=TRACE_BROTLI_QUALITY)


def wants_safetensors(request: Request) -> bool:
    return SAFETENSORS in request.headers.get("accept", "")


def weights_safetensors(params: dict[str, np.ndarray], version: str) -> bytes:
    """Every parameter as little-endian float32 in the safetensors layout. safetensors orders the header
    by name; the metadata keeps the parameters' own order (the JSON document's), comma-separated."""
    tensors = {k: np.ascontiguousarray(v, dtype="<f4") for k, v in params.items()}
    return save(tensors, metadata={"weights_version": version, "order": ",".join(params)})
