"""Unchanging bodies compressed once and served from memory with their ETag, so a page asked often costs no
compression per request.

The weights (the model's and each snapshot's), the model card, the ledger, the figures, the page
without parameters, the app's own files under /static and the browser libraries under /vendor do not
change while the app runs (or change only with the file they are read from). Compressing them per request
cost 11–16 ms of the event loop's CPU each (the weights: 719 KB), so 8 clients fetching the weights
pushed /healthz from 1.5 ms to 319 ms. Here each body is compressed once per coding the client asks for
(Brotli, zstd or gzip, in that order of preference), the first time it is asked for, in a worker thread,
and kept, keyed by the body's own hash; the ETag is that hash (or the caller's, e.g. the weights
version), so a client's copy is revalidated with 304 and no body. The per-request compressor
(app/serving/delivery.py) sees the Content-Encoding and leaves these responses alone.
"""

from __future__ import annotations

import gzip
import hashlib
import mimetypes
import os
import threading
from collections import OrderedDict
from pathlib import Path

import anyio
import brotli
import zstandard
from fastapi import Request
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException
from starlette.responses import Response
from starlette.types import Scope

from app.serving.delivery import compression_enabled, quality

CODINGS = ("br", "zstd", "gzip")  # preferred first, when the client accepts several equally
MIN_SIZE = 1024  # below this, compression saves less than the header costs
TEXT_TYPES = ("text/", "application/json", "application/javascript", "image/svg+xml", "font/ttf")
BROTLI_QUALITY = 9  # 0.2 s of a core for the weights once (11: 2 s, 12 % smaller)
STORE_BYTES = 32 * 2**20  # the compressed forms kept: all vendor files and every snapshot's weights, each coding


# the levels for a body asked for many times (the weights, the libraries), and for one that may be asked for
# once (a reader's page: Brotli 9 took about 40 ms of a 444 KB article, 5 about 5 ms, for 8 % more bytes)
LEVELS = {"br": BROTLI_QUALITY, "zstd": 12, "gzip": 9}
QUICK_LEVELS = {"br": 5, "zstd": 3, "gzip": 6}


def compress(body: bytes, coding: str, levels: dict[str, int] = LEVELS) -> bytes:
    if coding == "br":
        return brotli.compress(body, quality=levels["br"])
    if coding == "zstd":
        return zstandard.ZstdCompressor(level=levels["zstd"]).compress(body)
    return gzip.compress(body, compresslevel=levels["gzip"], mtime=0)


class Store:
    """Compressed forms by (body hash, coding), made once (one maker per key), kept up to `max_bytes`."""

    def __init__(self, max_bytes: int = STORE_BYTES, levels: dict[str, int] = LEVELS):
        self.max_bytes, self.size, self.levels = max_bytes, 0, levels
        self.made = 0  # how many compressions ran (tests: once per body and coding)
        self._items: OrderedDict[tuple[str, str], bytes] = OrderedDict()
        self._making: dict[tuple[str, str], threading.Lock] = {}
        self._lock = threading.Lock()

    def kept(self, digest: str, coding: str) -> bytes | None:
        """The compressed form if it has been made, else None (without waiting for one being made)."""
        with self._lock:
            hit = self._items.get((digest, coding))
            if hit is not None:
                self._items.move_to_end((digest, coding))
            return hit

    def get(self, digest: str, coding: str, body: bytes) -> bytes:
        key = (digest, coding)
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
                return hit
            making = self._making.setdefault(key, threading.Lock())
        with making:  # a second asker waits for the first's result instead of compressing again
            with self._lock:
                hit = self._items.get(key)
            if hit is None:
                hit = compress(body, coding, self.levels)
                self._keep(key, hit)
        with self._lock:
            self._making.pop(key, None)
        return hit

    def _keep(self, key: tuple[str, str], value: bytes) -> None:
        with self._lock:
            self.made += 1
            self._items[key] = value
            self.size += len(value)
            while self.size > self.max_bytes and len(self._items) > 1:
                self.size -= len(self._items.popitem(last=False)[1])


STORE = Store()


def digest_of(body: bytes) -> str:
    return hashlib.blake2b(body, digest_size=12).hexdigest()


def chosen_coding(request: Request, media_type: str, size: int) -> str | None:
    """The coding to send: the best of br, zstd, gzip the client accepts, for a compressible body."""
    if not compression_enabled() or size < MIN_SIZE or not media_type.startswith(TEXT_TYPES):
        return None
    header = request.headers.get("accept-encoding", "")
    best = max(CODINGS, key=lambda c: (quality(header, c, ("*",)), -CODINGS.index(c)))
    return best if quality(header, best, ("*",)) > 0 else None


def not_modified(request: Request, etag: str) -> bool:
    tags = {t.strip().removeprefix("W/") for t in request.headers.get("if-none-match", "").split(",")}
    return "*" in tags or etag in tags


async def once_response(
    request: Request,
    body: bytes,
    media_type: str,
    etag: str | None = None,
    headers: dict[str, str] | None = None,
    digest: str | None = None,
    store: Store = STORE,
) -> Response:
    """`body` with its ETag (the caller's, or its hash), 304 for a current copy, compressed once per coding.
    A caller's ETag names its body (the weights version), so it keys the kept forms too: no hashing."""
    digest = digest or etag or digest_of(body)
    etag = etag or f'"{digest}"'
    head = {"ETag": etag, "Cache-Control": "no-cache", "Vary": "Accept-Encoding", **(headers or {})}
    if not_modified(request, etag):
        return Response(status_code=304, headers=head)
    coding = chosen_coding(request, media_type, len(body))
    if coding is None:
        return Response(body, media_type=media_type, headers=head)
    packed = store.kept(digest, coding) or await anyio.to_thread.run_sync(store.get, digest, coding, body)
    return Response(packed, media_type=media_type, headers={**head, "Content-Encoding": coding})


class OnceFiles(StaticFiles):
    """StaticFiles whose files are read once (again when their size or time stamp changes) and sent by
    `once_response`; `files`, when given, are the only paths it answers for (404 for the rest)."""

    def __init__(self, directory: Path, files: frozenset[str] | None = None):
        super().__init__(directory=directory, check_dir=False)
        self.files = files
        self._bodies: dict[str, tuple[tuple[int, int], bytes, str]] = {}

    async def get_response(self, path: str, scope: Scope) -> Response:
        if "\x00" in path:  # no file has a NUL in its name (and the file system refuses to look one up)
            raise HTTPException(404, "Not Found")
        if self.files is not None and path.replace(os.sep, "/") not in self.files:
            raise HTTPException(404, "Not Found")
        full, st = await anyio.to_thread.run_sync(self.lookup_path, path)
        if st is None or not full or not Path(full).is_file():
            raise HTTPException(404, "Not Found")
        stamp = (st.st_size, st.st_mtime_ns)
        hit = self._bodies.get(full)
        if hit is None or hit[0] != stamp:
            body = await anyio.to_thread.run_sync(Path(full).read_bytes)
            hit = self._bodies[full] = (stamp, body, digest_of(body))
        media_type = mimetypes.guess_type(full)[0] or "application/octet-stream"  # as StaticFiles sends it
        return await once_response(Request(scope), hit[1], media_type, digest=hit[2])
