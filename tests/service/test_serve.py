"""The run command's bounds on request heads, slow and silent clients (app/startup/serve.py),
checked on a tiny app served with the same settings, and the one memory budget of every model's caches."""

from __future__ import annotations

import socket
import threading
import time

import pytest
import uvicorn

from app.startup import serve
from tests.conftest import free_port


async def tiny(scope, receive, send):
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"ok"})


@pytest.fixture(scope="module")
def bounded_port():
    saved = serve.BoundedH11Protocol.head_timeout_s
    serve.BoundedH11Protocol.head_timeout_s = 1.0  # the deadline under test, shorter than the shipped 10 s
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
    serve.BoundedH11Protocol.head_timeout_s = saved


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
    assert cfg.timeout_keep_alive == serve.KEEP_ALIVE_S and cfg.limit_concurrency == serve.MAX_CONNECTIONS


def test_every_model_shares_one_cache_budget(client):
    """Item 5: the modern model's traces go into the default model's cache (one budget for the process)."""
    state = client.app.state
    assert client.get("/api/trace", params={"input": "4711", "model": "modern"}).status_code == 200
    modern = state.models["modern"].service
    assert modern.traces is state.service.traces and modern.beams is state.service.beams
