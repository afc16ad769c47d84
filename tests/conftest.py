"""Shared fixtures: one app (the model loads once per test session) and, for browser tests, a real
uvicorn server on a free loopback port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

ROOT = Path(__file__).resolve().parent.parent


def pytest_configure(config: pytest.Config) -> None:
    """The suite runs against the bundle readers get (app/startup/bundle.py): when it is missing or older than the
    sources, it is built once here (`npm run build`, about a second), before any worker imports the app."""
    from app.startup.bundle import BUILD, problems

    if hasattr(config, "workerinput") or not problems(ROOT):
        return
    run = subprocess.run(BUILD.split(), cwd=ROOT, capture_output=True, text=True, timeout=300)
    if run.returncode != 0 or problems(ROOT):
        raise pytest.UsageError(f"`{BUILD}` failed: {(run.stderr or run.stdout)[-2000:]}")


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked `node` runs the page's JavaScript: without Node it fails, saying how to install it,
    rather than skip and let a green run hide that the page's code went unchecked."""
    import shutil

    if item.get_closest_marker("node") and shutil.which("node") is None:
        pytest.fail(
            "Node is not installed: `bash scripts/setup.sh` installs it (the page's code runs under it)", pytrace=False
        )


@pytest.fixture(scope="session")
def client() -> Iterator[TestClient]:
    from app.main import app

    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def served(
    cwd: Path, log_dir: Path, env: dict[str, str] | None = None, what: str = "the server", wait_s: float = 120
) -> Iterator[str]:
    """`uvicorn app.main:app` started in `cwd` on a free loopback port, until /healthz answers; yields its
    base URL and stops it afterwards. A server that dies or does not answer in `wait_s` fails the test
    with the end of its log."""
    port = free_port()
    log = (log_dir / "uvicorn.log").open("w+")
    proc = subprocess.Popen(
        [
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
        ],
        cwd=cwd,
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env or {**os.environ},
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                if httpx.get(url + "/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                pytest.fail(f"{what} did not start:\n{log.read()[-3000:]}")
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="session")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`uvicorn app.main:app` in a subprocess; yields its base URL."""
    with served(ROOT, tmp_path_factory.mktemp("server"), wait_s=90) as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium, driven by Playwright (never Playwright's own browser download)."""
    from tests.browser import CHROMIUM, CHROMIUM_ARGS, has_chromium

    sync_api = pytest.importorskip("playwright.sync_api")
    if not has_chromium():
        pytest.skip("Debian's chromium is not installed (scripts/setup.sh --with-browser installs it)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()
