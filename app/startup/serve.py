"""The run command, `python -m app` (README): checks the shipped files once, then serves with bounds.

- **Start-up**: the browser libraries and every shipped file (app/service/shipped.py) are checked in this
  process before any worker starts: a missing or altered one ends it with one line and exit 3, under
  any worker count (uvicorn's own supervisor exits 0 when a worker fails to boot; here a worker that
  fails to boot makes the exit 3 too).
- **Bounded connections** (no client holds a worker): uvicorn's h11 parser, and a request head over `MAX_HEAD_BYTES`
  refused with 431 (h11 alone refuses only a head still incomplete past its limit, not one that
  arrives in one read; httptools reads heads of any size: 20 connections of 16 MB kept 62–200 MB); the whole
  head must arrive within `HEAD_TIMEOUT_S` of the connection opening or of the previous response
  (uvicorn has no such timer: a client sending a byte a second, or nothing, held its socket for ever),
  an idle keep-alive connection closes after `KEEP_ALIVE_S`, and at most `MAX_CONNECTIONS` are served
  at once (more get 503). bench/bench_flood.py measures other clients' latency and memory under a header
  flood and slow clients. Behind a proxy (README), the proxy's own limits come first.
"""

from __future__ import annotations

import argparse
import asyncio

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.supervisors import Multiprocess

from app.settings import settings

MAX_HEAD_BYTES = 16 * 1024  # a request line and headers; the longest page address is under 2 KB
HEAD_TIMEOUT_S = 10.0
KEEP_ALIVE_S = 5
MAX_CONNECTIONS = 256


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline and a size limit for each request head: a connection whose
    head is not complete `HEAD_TIMEOUT_S` after it opened (or after the last response) is closed, and
    one whose head passes `MAX_HEAD_BYTES` gets 431 and is closed."""

    head_timeout_s = HEAD_TIMEOUT_S
    max_head_bytes = MAX_HEAD_BYTES

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._head_timer: asyncio.TimerHandle | None = None
        self._arm_head_timer()

    def _arm_head_timer(self) -> None:
        self._cancel_head_timer()
        self._head_timer = self.loop.call_later(self.head_timeout_s, self._head_too_slow)

    def _cancel_head_timer(self) -> None:
        if getattr(self, "_head_timer", None) is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_too_slow(self) -> None:
        self._head_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()  # nothing has been answered on it: closing is all a 408 would say

    def data_received(self, data: bytes) -> None:
        if self.conn.their_state is h11.IDLE:  # h11 alone would take a whole head that arrives in one read
            self._head_bytes = getattr(self, "_head_bytes", 0) + len(data)
            if self._head_bytes > self.max_head_bytes:
                self._refuse_head()
                return
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._cancel_head_timer()  # the head is in: the request runs as long as it takes

    def _refuse_head(self) -> None:
        self._cancel_head_timer()
        if not self.transport.is_closing():
            self.transport.write(
                b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            )
            self.transport.close()

    def on_response_complete(self) -> None:
        self._head_bytes = 0
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_timer()
        super().connection_lost(exc)


def config(host: str, port: int, workers: int, access_log: bool = True, app="app.main:app") -> uvicorn.Config:
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        workers=workers,
        http=BoundedH11Protocol,
        access_log=access_log,
        h11_max_incomplete_event_size=MAX_HEAD_BYTES,
        timeout_keep_alive=KEEP_ALIVE_S,
        limit_concurrency=MAX_CONNECTIONS,
        proxy_headers=False,
        server_header=False,
    )


def check_before_serving() -> None:
    """The checks create_app makes (app/main.py), once here, so that they print one line, not one per worker:
    the browser libraries, the shipped files (exit 3 and one line), the page's bundle."""
    from app.service.shipped import ROOT, require_shipped
    from app.serving.delivery import require_vendor
    from app.startup.bundle import require_bundle

    require_vendor(ROOT / "node_modules")
    require_shipped()
    require_bundle(ROOT)


def serve(host: str, port: int, workers: int, access_log: bool = True) -> int:
    cfg = config(host, port, workers, access_log)
    if workers == 1:
        server = uvicorn.Server(cfg)
        server.run()
        return 0 if server.started else 3
    supervisor = Multiprocess(cfg, sockets=[cfg.bind_socket()])
    supervisor.run()
    return 3 if any(p.exitcode == 3 for p in supervisor.processes) else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m app", description="Serve the app with bounded connections.")
    p.add_argument("--host", default=settings.host)
    p.add_argument("--port", type=int, default=settings.port)
    p.add_argument(
        "--workers",
        type=int,
        default=settings.processes,
        help="server processes (each loads the models and keeps its own caches)",
    )
    p.add_argument("--no-access-log", dest="access_log", action="store_false", help="no line per request")
    args = p.parse_args(argv)
    if args.workers > 1:
        check_before_serving()  # a single worker imports the app in this process anyway
    return serve(args.host, args.port, args.workers, args.access_log)
