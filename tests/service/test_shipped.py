"""Every shipped file checked at start-up against app/service/shipped.sha256; /healthz honest.

The damaged copies are of the project folder (code and data copied, the rest linked), started with
`uvicorn app.main:app` as a deployment would, and with `python -m app --workers 2`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from app.service.shipped import MANIFEST, manifest_text, recorded
from tests.conftest import ROOT, free_port, served

COPIED = ("app", "model", "content", "research")  # read through Path(__file__).resolve(): real copies
LINKED = ("recorder", "scene", "article", "templates", "static", "node_modules", "bundle")


def project_copy(where: Path) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    for name in COPIED:
        shutil.copytree(ROOT / name, where / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in LINKED:
        (where / name).symlink_to(ROOT / name)
    return where


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "ANATOMY_RESEARCH_VIEWS")}


def test_the_manifest_is_current():
    """Every shipped file is recorded as it is; after a deliberate change: `python -m app.shipped`."""
    assert MANIFEST.read_text() == manifest_text(), "run `python -m app.shipped` to record the shipped files"
    assert {
        "model/artifacts/model.safetensors",
        "model/artifacts/modern/model.safetensors",
        "model/artifacts/snapshots.safetensors",
        "model/artifacts/training_log.json",
        "model/artifacts/modern/training_log.json",
        "model/artifacts/heldout.json",
        "content/facts.tsv",
        "research/results/time_machine.json",
        "research/results/views/alignment.json",
    } <= set(recorded())


def truncate(p: Path) -> None:
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])


def alter(p: Path) -> None:
    data = bytearray(p.read_bytes())
    data[len(data) // 2] ^= 1  # one bit: weights that still load, a ledger that still parses
    p.write_bytes(bytes(data))


DAMAGE = {
    "missing modern weights": ("model/artifacts/modern/model.safetensors", Path.unlink, "is missing"),
    "truncated training log": ("model/artifacts/training_log.json", truncate, "does not match"),
    "altered weights": ("model/artifacts/model.safetensors", alter, "does not match"),
    "altered facts": ("content/facts.tsv", alter, "does not match"),
    "missing snapshots": ("model/artifacts/snapshots.safetensors", Path.unlink, "is missing"),
    "missing research view": ("research/results/views/alignment.json", Path.unlink, "is missing"),
}


def start(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=clean_env(), capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_a_damaged_shipped_file_ends_start_up_with_one_line(tmp_path, kind):
    path, damage, problem = DAMAGE[kind]
    root = project_copy(tmp_path / "project")
    damage(root / path)
    port = str(free_port())
    runs = {"uvicorn": start(root, "-m", "uvicorn", "app.main:app", "--port", port, "--log-level", "warning")}
    if kind == "missing modern weights":  # the README's command, with two workers: one line, exit 3
        runs["python -m app --workers 2"] = start(root, "-m", "app", "--port", port, "--workers", "2")
    for how, run in runs.items():
        out = (run.stdout + run.stderr).strip().splitlines()
        assert run.returncode == 3, (how, run.returncode, out[-5:])
        assert len(out) == 1 and out[0].startswith("anatomy: cannot start: " + path), (how, out)
        assert problem in out[0] and str(tmp_path) not in out[0] and "Traceback" not in out[0]


@pytest.fixture(scope="module")
def copy_server(tmp_path_factory):
    root = project_copy(tmp_path_factory.mktemp("served") / "project")
    with served(root, tmp_path_factory.mktemp("served-log"), clean_env(), "the app in a project copy") as url:
        yield root, url


def test_healthz_reports_each_model_and_data_set(copy_server):
    _, url = copy_server
    doc = httpx.get(url + "/healthz", timeout=30).json()
    assert doc["status"] == "ok" and set(doc["models"]) == {"2017", "modern"}
    assert {"snapshots", "held-out set", "facts", "research results", "research views"} <= set(doc["data"])
    assert all(v["status"] == "ok" for v in (*doc["models"].values(), *doc["data"].values()))


def test_files_gone_while_running_make_health_not_ok_and_answers_503_not_500(copy_server):
    root, url = copy_server
    (root / "model/artifacts/modern/model.safetensors").unlink()
    (root / "model/artifacts/snapshots.safetensors").unlink()
    health = httpx.get(url + "/healthz", timeout=30)
    assert health.status_code == 503
    doc = health.json()
    assert doc["status"] == "not ok" and doc["models"]["2017"]["status"] == "ok"  # in memory, still usable
    assert doc["models"]["modern"] == {
        "status": "not available",
        "weights_version": None,
        "reason": "model/artifacts/modern/model.safetensors is missing",
    }
    assert doc["data"]["snapshots"]["status"] == "not available"
    for path, params in [
        ("/api/trace", {"input": "42", "model": "modern"}),
        ("/api/beam", {"input": "42", "model": "modern"}),
        ("/api/model", {"model": "modern"}),
        ("/api/trace", {"input": "42", "checkpoint": "100"}),
        ("/api/weights", {"checkpoint": "200"}),
    ]:
        r = httpx.get(url + path, params=params, timeout=60)
        assert r.status_code == 503, (path, params, r.status_code, r.text[:300])
        message = r.json()["detail"]["message"]
        assert "not available" in message and str(root) not in message and "/tmp" not in message, message
        assert r.headers["cache-control"] == "no-store"
    assert httpx.get(url + "/api/trace", params={"input": "42"}, timeout=60).status_code == 200


def test_an_edit_that_keeps_the_size_and_the_time_is_seen(tmp_path):
    """One byte changed and the file's mtime set back, as a careful edit or a restore might: the next check
    hashes it again (the change time moved) and finds it altered."""
    from app.service.shipped import Shipped, sha256

    (tmp_path / "content").mkdir()
    f = tmp_path / "content" / "facts.tsv"
    f.write_bytes(b"0123456789" * 100)
    manifest = tmp_path / "shipped.sha256"
    manifest.write_text(f"{sha256(f)}  content/facts.tsv\n")
    shipped = Shipped(tmp_path, manifest)
    assert shipped.check("content/facts.tsv").ok
    st = f.stat()
    f.write_bytes(b"X123456789" + b"0123456789" * 99)  # the same size
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))  # the same mtime
    assert f.stat().st_size == st.st_size and f.stat().st_mtime_ns == st.st_mtime_ns
    assert not shipped.check("content/facts.tsv").ok
