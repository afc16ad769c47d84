"""What the benches share: the app served on loopback (started, waited for and stopped one way) and a
minimal keep-alive HTTP/1.1 GET client (far less client CPU than httpx, so that on a small machine a
benchmark measures the server rather than its clients). Benches do not import tests/; this is their
counterpart of tests/conftest.py's `served()`."""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(
    port: int,
    root: Path = ROOT,
    env: dict[str, str] | None = None,
    workers: int = 1,
    timeout: float = 240,
    launcher: str = "uvicorn",
) -> subprocess.Popen:
    """`uvicorn app.main:app` from `root` on 127.0.0.1:port; returns once /healthz has answered 4 times per
    worker process (each loads the model: several answers make it likely that every one is up)."""
    cmd = [
        sys.executable,
        "-m",
        "uvicorn",
        "app.main:app",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--log-level",
        "warning",
        "--no-access-log",
    ] + (["--workers", str(workers)] if workers > 1 else [])
    if launcher == "app":  # the README's run command (app/startup/serve.py: bounded heads, head-read and idle times)
        cmd = [
            sys.executable,
            "-m",
            "app",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--no-access-log",
        ]
    proc = subprocess.Popen(cmd, cwd=root, env={**os.environ, **(env or {}), "PYTHONPATH": str(root)})
    deadline, ready = time.monotonic() + timeout, 0
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server in {root} exited with {proc.returncode}")
        try:
            ready += httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200
            if ready >= 4 * workers:
                return proc
        except httpx.HTTPError:
            time.sleep(0.3)
    proc.kill()
    raise SystemExit("the server did not start")


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()


class Connection:
    """A keep-alive HTTP/1.1 GET client; `headers` are extra request lines ("Name: value\\r\\n" each)."""

    def __init__(self, port: int, headers: str = ""):
        self.port, self.headers = port, headers
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def get(self, path: str) -> tuple[int, bytes]:
        """The status and the body as sent (Content-Length or chunked; not decoded)."""
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{self.headers}\r\n".encode())
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        fields = {
            k.strip().lower(): v.strip()
            for k, _, v in (line.partition(b":") for line in head.split(b"\r\n")[1:] if line)
        }
        if b"content-length" in fields:
            return status, await self.reader.readexactly(int(fields[b"content-length"]))
        body = b""
        while (n := int((await self.reader.readuntil(b"\r\n")).strip(), 16)) > 0:
            body += (await self.reader.readexactly(n + 2))[:-2]
        await self.reader.readuntil(b"\r\n")
        return status, body

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


def p95(values: list[float]) -> float:
    return sorted(values)[int(len(values) * 0.95)]


def six_digit_inputs(description: str) -> tuple[argparse.Namespace, list[int]]:
    """The benches' common arguments (--url: a running server, else one started; --count random six-digit
    inputs from --seed) and those inputs: the same inputs for every bench that compares with another."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--url")
    ap.add_argument("--count", type=int, default=20)
    ap.add_argument("--seed", type=int, default=25)
    a = ap.parse_args()
    return a, random.Random(a.seed).sample(range(100_000, 1_000_000), a.count)
