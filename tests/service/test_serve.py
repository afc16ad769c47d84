"""The run command's bounds on request heads, slow and silent clients (app/startup/serve.py),
checked on a tiny app served with the same settings, and the one memory budget of every model's caches."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import pytest
import uvicorn

from app.serving.client_limits import TOO_MANY, ClientLimits
from app.serving.security import SecurityHeaders
from app.settings import settings
from app.startup import serve
from tests.conftest import free_port

BIG = 16_000_000  # a body well past what the kernel's send buffer takes (tcp_wmem's 4 MB)


async def tiny_app(scope, receive, send):
    if scope["type"] != "http":
        return
    path = scope["path"]
    if path == "/slow":
        await asyncio.sleep(1.5)
    body = b"x" * BIG if path == "/big" else b"ok"
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": body})


# what the app has around its routes for these limits: the refusals, then every response's headers
tiny = SecurityHeaders(ClientLimits(tiny_app), csp="default-src 'self'")
LIMIT = 4  # connections per client under test
PROXY = "127.0.0.5"  # the trusted proxy's address under test


@pytest.fixture(scope="module")
def bounded_port():
    protocol = serve.BoundedH11Protocol
    saved = {k: getattr(protocol, k) for k in ("head_timeout_s", "body_timeout_s", "send_window_s")}
    saved_limit, saved_proxies = settings.connections_per_client, settings.trusted_proxies
    # the deadlines under test, shorter than the shipped ones
    protocol.head_timeout_s, protocol.body_timeout_s, protocol.send_window_s = 1.0, 1.0, 1.0
    settings.connections_per_client, settings.trusted_proxies = LIMIT, PROXY
    port = free_port()
    cfg = serve.config("127.0.0.1", port, 1, access_log=False, app=tiny)
    cfg.timeout_keep_alive = 1
    server = uvicorn.Server(cfg)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    yield port
    server.should_exit = True
    thread.join(10)
    for k, v in saved.items():
        setattr(protocol, k, v)
    settings.connections_per_client, settings.trusted_proxies = saved_limit, saved_proxies


def connect(port: int, client: str = "127.0.0.1") -> socket.socket:
    """A connection from `client`, one of the loopback addresses (each a different client to the limits)."""
    return socket.create_connection(("127.0.0.1", port), source_address=(client, 0))


def answer(sock: socket.socket, request: bytes = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n") -> bytes:
    sock.settimeout(5)
    sock.sendall(request)
    return sock.recv(65536)


def closed_within(sock: socket.socket, seconds: float, trickle: bool = False) -> float | None:
    """Seconds until the server closes `sock` (None if it is still open after `seconds`)."""
    t0 = time.monotonic()
    sock.settimeout(0.2)
    while time.monotonic() - t0 < seconds:
        try:
            if trickle:
                sock.sendall(b"X")
            if sock.recv(1024) == b"":
                return time.monotonic() - t0
        except TimeoutError:
            continue
        except OSError:
            return time.monotonic() - t0
    return None


def test_a_normal_request_is_answered(bounded_port):
    with socket.create_connection(("127.0.0.1", bounded_port)) as s:
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert s.recv(1024).startswith(b"HTTP/1.1 200")


@pytest.mark.parametrize("size", [serve.MAX_HEAD_BYTES, 100_000, 1_000_000])
def test_a_head_over_the_limit_is_refused(bounded_port, size):
    with socket.create_connection(("127.0.0.1", bounded_port)) as s:
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: ")
        try:
            s.sendall(b"a" * size + b"\r\n\r\n")
        except OSError:
            pass  # refused and closed mid-send
        assert s.recv(1024).startswith((b"HTTP/1.1 431", b"HTTP/1.1 400"))


def test_a_body_sent_with_its_head_is_not_counted_as_head(bounded_port):
    """A 20 KB body in the same write as its head is a body, not a 20 KB head (it was refused with 431)."""
    with connect(bounded_port) as s:
        reply = answer(s, b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 20000\r\n\r\n" + b"b" * 20_000)
    assert reply.startswith(b"HTTP/1.1 200")


def test_pipelined_requests_in_one_write_are_all_answered(bounded_port):
    """600 GETs in one 20 KB write: 600 answers (one 431 and the rest lost, before)."""
    request = b"GET / HTTP/1.1\r\nHost: example\r\n\r\n"
    with connect(bounded_port) as s:
        s.sendall(request * 600)
        s.settimeout(5)
        got = b""
        while got.count(b"HTTP/1.1 200") < 600:
            chunk = s.recv(1 << 16)
            if not chunk:
                break
            got += chunk
    assert len(request * 600) > serve.MAX_HEAD_BYTES and got.count(b"HTTP/1.1 200") == 600


def test_a_silent_client_is_closed_at_the_head_deadline(bounded_port):
    with socket.create_connection(("127.0.0.1", bounded_port)) as s:
        took = closed_within(s, 5)
    assert took is not None and 0.8 < took < 3


def test_a_client_sending_a_byte_at_a_time_is_closed_at_the_head_deadline(bounded_port):
    with socket.create_connection(("127.0.0.1", bounded_port)) as s:
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        took = closed_within(s, 5, trickle=True)
    assert took is not None and took < 3


def test_an_idle_keep_alive_connection_is_closed(bounded_port):
    with socket.create_connection(("127.0.0.1", bounded_port)) as s:
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert s.recv(1024).startswith(b"HTTP/1.1 200")
        took = closed_within(s, 5)
    assert took is not None and took < 3


def test_the_run_command_is_bounded():
    cfg = serve.config("127.0.0.1", 8000, 1)
    assert cfg.http is serve.BoundedH11Protocol and cfg.h11_max_incomplete_event_size == serve.MAX_HEAD_BYTES
    assert cfg.timeout_keep_alive == serve.KEEP_ALIVE_S and cfg.limit_concurrency is None  # the protocol's own


def test_a_trickled_body_is_closed_at_the_body_deadline(bounded_port):
    with connect(bounded_port) as s:
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n")
        t0 = time.monotonic()
        s.settimeout(0.3)
        closed, got = None, b""
        while time.monotonic() - t0 < 5 and closed is None:
            try:
                s.sendall(b"X")  # a byte every 0.3 s: each reset uvicorn's keep-alive timer
                chunk = s.recv(65536)
                got += chunk
                if chunk == b"":
                    closed = time.monotonic() - t0
            except TimeoutError:
                continue
            except OSError:
                closed = time.monotonic() - t0
    assert got.startswith(b"HTTP/1.1 200")  # the app answered the head; the body still had to end in time
    assert closed is not None and closed < 3


def test_a_reader_that_never_reads_is_cut_off(bounded_port):
    with connect(bounded_port) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)  # the kernel keeps a few MB: the rest waits
        s.sendall(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
        time.sleep(3.5)  # reads nothing for three windows
        s.settimeout(5)
        received = 0
        try:
            while chunk := s.recv(1 << 20):  # to the end, or until the server has cut it off
                received += len(chunk)
        except OSError:
            pass
    assert received < BIG  # cut off: the rest never came


def test_a_slow_steady_reader_gets_all_of_it(bounded_port):
    with connect(bounded_port) as s:
        s.sendall(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
        s.settimeout(5)
        received, t0 = 0, time.monotonic()
        while received < BIG + 40:
            chunk = s.recv(256 * 1024)  # well above 16 KB a second, in bursts
            if not chunk:
                break
            received += len(chunk)
            time.sleep(0.01)
    assert received > BIG, (received, time.monotonic() - t0)


def test_one_client_cannot_hold_every_connection(bounded_port):
    """LIMIT slow connections from one address (a slowloris), then one more from it: that one is answered
    503 with Retry-After, the security headers and no-store; another address is served throughout."""
    hogs = [connect(bounded_port, "127.0.0.2") for _ in range(LIMIT)]
    try:
        for h in hogs:
            h.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")  # heads that never end
        with connect(bounded_port, "127.0.0.2") as extra:
            refused = answer(extra)
        head, _, body = refused.partition(b"\r\n\r\n")
        lines = head.lower().split(b"\r\n")
        assert lines[0].startswith(b"http/1.1 503")
        assert b"retry-after: 5" in lines and b"cache-control: no-store" in lines
        assert any(line.startswith(b"content-security-policy:") for line in lines)
        assert TOO_MANY.encode() in body
        with connect(bounded_port, "127.0.0.3") as other:
            assert answer(other).startswith(b"HTTP/1.1 200")
    finally:
        for h in hogs:
            h.close()
    time.sleep(0.2)
    with connect(bounded_port, "127.0.0.2") as again:  # the hogs gone, the address is served again
        assert answer(again).startswith(b"HTTP/1.1 200")


def test_far_over_the_limit_a_connection_is_closed_unanswered(bounded_port):
    socks = [connect(bounded_port, "127.0.0.4") for _ in range(2 * LIMIT + 1)]
    try:
        socks[-1].settimeout(2)
        assert socks[-1].recv(1024) == b""
    finally:
        for s in socks:
            s.close()


def test_behind_a_trusted_proxy_the_client_it_names_is_limited(bounded_port):
    """The proxy's own connections are not counted (it pools many); the requests in flight of each client its
    X-Forwarded-For names are, LIMIT at most: two clients behind it, LIMIT + 2 requests each at once."""
    conns = [(connect(bounded_port, PROXY), who) for who in ("203.0.113.7", "198.51.100.9") for _ in range(LIMIT + 2)]
    try:
        for c, who in conns:
            c.sendall(f"GET /slow HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: {who}\r\n\r\n".encode())
        answers = []
        for c, who in conns:
            c.settimeout(5)
            answers.append((who, c.recv(1024)[:12]))
    finally:
        for c, _ in conns:
            c.close()
    for who in ("203.0.113.7", "198.51.100.9"):
        got = [a for w, a in answers if w == who]
        assert got.count(b"HTTP/1.1 200") == LIMIT and got.count(b"HTTP/1.1 503") == 2, (who, got)


def test_an_untrusted_address_cannot_name_another_client(bounded_port):
    """X-Forwarded-For from an address that is not a trusted proxy is ignored: its connections count as its own."""
    conns = [connect(bounded_port, "127.0.0.6") for _ in range(LIMIT + 1)]
    try:
        for i, c in enumerate(conns):
            c.sendall(f"GET / HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 192.0.2.{i}\r\n\r\n".encode())
        answers = []
        for c in conns:
            c.settimeout(5)
            answers.append(c.recv(1024)[:12])
    finally:
        for c in conns:
            c.close()
    assert answers.count(b"HTTP/1.1 503") == 1


def test_a_busy_port_exits_with_a_code_a_supervisor_may_retry(bounded_port, capsys):
    assert serve.serve("127.0.0.1", bounded_port, 1, access_log=False) == serve.PORT_BUSY == 75
    assert f"cannot listen on 127.0.0.1:{bounded_port}" in capsys.readouterr().err


def test_every_model_shares_one_cache_budget(client):
    """Item 5: the modern model's traces go into the default model's cache (one budget for the process)."""
    state = client.app.state
    assert client.get("/api/trace", params={"input": "4711", "model": "modern"}).status_code == 200
    modern = state.models["modern"].service
    assert modern.traces is state.service.traces and modern.beams is state.service.beams
    assert modern.limiter is state.service.limiter  # and one set of worker threads: ANATOMY_WORKERS in all
