"""The run command, `python -m app` (README): checks the shipped files once, then serves with bounds.

- **Start-up**: the browser libraries and every shipped file (app/service/shipped.py) are checked in this
  process before any worker starts: a missing or altered one ends it with one line and exit 3, under
  any worker count (uvicorn's own supervisor exits 0 when a worker fails to boot; here a worker that
  fails to boot makes the exit 3 too).
- **Bounded connections** (no client holds what others need): uvicorn's h11 parser with the deadlines and
  limits of `BoundedH11Protocol` below: a head over `MAX_HEAD_BYTES` is 431 (httptools reads heads of any
  size: 20 connections of 16 MB kept 62–200 MB); a head must arrive within `HEAD_TIMEOUT_S`, a body within
  `BODY_TIMEOUT_S` of its head, and a response must be taken at `SEND_MIN_BYTES` a `SEND_WINDOW_S` (uvicorn
  has none of these timers: a byte a second, a trickled body or a reader that never reads held the socket
  for ever); an idle keep-alive connection closes after `KEEP_ALIVE_S`; one client address holds at most
  `settings.connections_per_client` connections (app/serving/client_limits.py), the process
  `MAX_CONNECTIONS`. bench/bench_harden.py measures other clients' latency and memory under floods and slow
  clients. Behind a proxy (README), the proxy's own limits come first.
- **A busy port** exits `PORT_BUSY` (75), which a supervisor may retry, unlike the 3 of a damaged file.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import socket
import sys
from collections import Counter

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.supervisors import Multiprocess

from app.serving.client_limits import FULL, MAX_CONNECTIONS, TOO_MANY, refused_with, trusted_proxies
from app.settings import settings

MAX_HEAD_BYTES = 16 * 1024  # a request line and headers; the longest page address is under 2 KB
HEAD_TIMEOUT_S = 10.0
REFUSED_HEAD_TIMEOUT_S = 2.0  # a connection over a limit: time enough for its head, to answer it 503
BODY_TIMEOUT_S = 10.0  # no route reads a body: a browser sends none
SEND_WINDOW_S = 10.0
SEND_MIN_BYTES = 16 * 1024  # a reader must take this much of what waits for it in each window (1.6 KB/s)
KEEP_ALIVE_S = 5
PORT_BUSY = 75  # EX_TEMPFAIL: the port may be free later, so a supervisor may retry (3 says do not)


class CountingTransport:
    """A transport that counts the bytes written to it, so that the protocol can tell what the client took."""

    def __init__(self, transport: asyncio.Transport):
        self._transport = transport
        self.written = 0

    def write(self, data: bytes) -> None:
        self.written += len(data)
        self._transport.write(data)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str):
        return getattr(self._transport, name)


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with deadlines and limits, so that no client holds what others need:

    - a head must be complete `HEAD_TIMEOUT_S` after the connection opened (or after the last response), and
      must end within `MAX_HEAD_BYTES` (else 431 and close);
    - a body must be complete `BODY_TIMEOUT_S` after its head;
    - while bytes wait to be sent, the client must take `SEND_MIN_BYTES` of them (or all) every
      `SEND_WINDOW_S`, else the connection is cut (a reader that never reads held it for ever);
    - one client address holds at most `settings.connections_per_client` connections and the process at
      most `MAX_CONNECTIONS`; the one over a limit has its request answered 503 (app/serving/client_limits.py)
      and closed, and one over twice the limit is closed at once. A trusted proxy's connections are not
      counted here: the app counts the requests of the client it names."""

    head_timeout_s = HEAD_TIMEOUT_S
    refused_head_timeout_s = REFUSED_HEAD_TIMEOUT_S
    body_timeout_s = BODY_TIMEOUT_S
    send_window_s = SEND_WINDOW_S
    max_head_bytes = MAX_HEAD_BYTES
    per_client: Counter[str] = Counter()  # open connections by client address, in this process

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self.counted = CountingTransport(transport)
        super().connection_made(self.counted)  # type: ignore[arg-type]
        self._raw = transport
        self._head_timer: asyncio.TimerHandle | None = None
        self._body_timer: asyncio.TimerHandle | None = None
        self._head_bytes, self._head_tail = 0, b""
        self._sent_at_check, self._waiting_at_check = 0, 0
        self._send_timer = self.loop.call_later(self.send_window_s, self._check_sending)
        host = self.client[0] if self.client else ""
        self._counted_as = "" if host in trusted_proxies() else host
        if self._counted_as:
            self.per_client[self._counted_as] += 1
        over = self._over_limit()
        self._refused = over is not None
        if over:
            self.app = refused_with(self.app, over[1])  # answered 503 by the app's ClientLimits
            if over[0] > 2:  # far over: no answer is owed
                self._raw.close()
                return
        self._arm_head_timer()

    def _over_limit(self) -> tuple[float, str] | None:
        """How far over a limit this connection is (a ratio above 1) and what to tell the client, or None."""
        mine = self.per_client[self._counted_as] / settings.connections_per_client if self._counted_as else 0
        everyone = len(self.connections) / MAX_CONNECTIONS
        if mine > 1:
            return mine, TOO_MANY
        if everyone > 1:
            return everyone, FULL
        return None

    # -- the head ------------------------------------------------------------------------------------

    def _arm_head_timer(self) -> None:
        self._cancel(self._head_timer)
        wait = self.refused_head_timeout_s if self._refused else self.head_timeout_s
        self._head_timer = self.loop.call_later(wait, self._head_too_slow)

    @staticmethod
    def _cancel(timer: asyncio.TimerHandle | None) -> None:
        if timer is not None:
            timer.cancel()

    def _head_too_slow(self) -> None:
        self._head_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()  # nothing has been answered on it: closing is all a 408 would say

    def _head_too_long(self, data: bytes) -> bool:
        """Whether the head being read runs past `max_head_bytes`: counted up to its blank line, so that a
        body or pipelined requests sent with it are not counted (h11 alone takes a whole head of any size
        that arrives in one read)."""
        seen = self._head_tail + data
        end = seen.find(b"\r\n\r\n")
        if end >= 0:
            too_long = self._head_bytes - len(self._head_tail) + end + 4 > self.max_head_bytes
            self._head_bytes, self._head_tail = -1, b""  # the head is in: no more counting till the next
            return too_long
        self._head_bytes += len(data)
        self._head_tail = seen[-3:]
        return self._head_bytes > self.max_head_bytes

    def data_received(self, data: bytes) -> None:
        if self.conn.their_state is h11.IDLE and self._head_bytes >= 0 and self._head_too_long(data):
            self._refuse_head()
            return
        super().data_received(data)
        state = self.conn.their_state
        if state is not h11.IDLE:
            self._cancel(self._head_timer)  # the head is in: the request runs as long as it takes
            self._head_timer = None
        if state is h11.SEND_BODY and self._body_timer is None:
            self._body_timer = self.loop.call_later(self.body_timeout_s, self._body_too_slow)
        elif state is not h11.SEND_BODY and self._body_timer is not None:
            self._cancel(self._body_timer)
            self._body_timer = None

    def _body_too_slow(self) -> None:
        self._body_timer = None
        if self.conn.their_state is h11.SEND_BODY:
            self._raw.abort()  # each trickled byte reset uvicorn's keep-alive timer

    def _refuse_head(self) -> None:
        self._cancel(self._head_timer)
        if not self.transport.is_closing():
            self.transport.write(
                b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            )
            self.transport.close()

    # -- sending -------------------------------------------------------------------------------------

    def _check_sending(self) -> None:
        """Every `send_window_s`: a client that took less than `SEND_MIN_BYTES` of what waited for it at the
        last check (and still has bytes waiting) is cut off; close() would wait for it to read them."""
        waiting = self._raw.get_write_buffer_size()
        sent = self.counted.written - waiting
        owed = min(SEND_MIN_BYTES, self._waiting_at_check)
        if waiting and owed and sent - self._sent_at_check < owed:
            self._raw.abort()
            return
        self._sent_at_check, self._waiting_at_check = sent, waiting
        self._send_timer = self.loop.call_later(self.send_window_s, self._check_sending)

    def on_response_complete(self) -> None:
        self._head_bytes, self._head_tail = 0, b""
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        for timer in (self._head_timer, self._body_timer, self._send_timer):
            self._cancel(timer)
        if self._counted_as:
            self.per_client[self._counted_as] -= 1
            if not self.per_client[self._counted_as]:
                del self.per_client[self._counted_as]
            self._counted_as = ""
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
        limit_concurrency=None,  # the protocol's limits answer with the app's headers; uvicorn's 503 has none
        proxy_headers=bool(trusted_proxies()),  # the client a trusted proxy names is the one the limits count
        forwarded_allow_ips=settings.trusted_proxies or None,
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


def listening_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.create_server((host, port), family=family, backlog=2048)
    sock.set_inheritable(True)  # the worker processes serve it
    return sock


def serve(host: str, port: int, workers: int, access_log: bool = True) -> int:
    cfg = config(host, port, workers, access_log)
    try:
        sock = listening_socket(host, port)
    except OSError as e:  # uvicorn would log it and exit 1, or 3 through the start-up check below
        print(f"anatomy: cannot listen on {host}:{port}: {e.strerror or e}", file=sys.stderr)
        return PORT_BUSY if e.errno in (errno.EADDRINUSE, errno.EADDRNOTAVAIL) else 1
    if workers == 1:
        server = uvicorn.Server(cfg)
        server.run(sockets=[sock])
        return 0 if server.started else 3
    supervisor = Multiprocess(cfg, sockets=[sock])
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
