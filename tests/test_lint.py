"""Lint as part of the test command: `ruff check .` (rules in pyproject.toml) over the Python and
ESLint (eslint.config.mjs, pinned in package.json) over the browser code. A failure prints the
linters' own report. Each linter is also fed a known-bad snippet under a path it must check, so a
config that stops covering app/ or static/ fails here instead of passing quietly."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ESLINT = ROOT / "node_modules" / ".bin" / "eslint"
TOO_LONG = "x = " + "1 + " * 40 + "1\n"  # 167 characters: E501 at line-length 120
UNUSED = "const neverRead = 1;\n"  # no-unused-vars, from eslint's recommended rules


def run(cmd: list[str], stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=ROOT, input=stdin, capture_output=True, text=True, timeout=120)


def ruff(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return run([sys.executable, "-m", "ruff", "check", "--no-cache", *args], stdin)


def eslint(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    if not ESLINT.is_file():
        pytest.fail(f"{ESLINT.relative_to(ROOT)} is missing: run `bash scripts/setup.sh` (npm ci installs the "
                    "devDependencies, eslint among them)")
    if shutil.which("node") is None:
        pytest.fail("node is not on PATH: run `bash scripts/setup.sh`")
    return run([str(ESLINT), "--no-warn-ignored", *args], stdin)


def report(name: str, proc: subprocess.CompletedProcess) -> str:
    return f"{name} exited {proc.returncode}:\n{proc.stdout}{proc.stderr}"


def test_ruff_is_clean() -> None:
    proc = ruff(".")
    assert proc.returncode == 0, report("ruff check .", proc)


def test_eslint_is_clean() -> None:
    proc = eslint(".")
    assert proc.returncode == 0, report("eslint .", proc)


def test_ruff_checks_the_app() -> None:
    proc = ruff("--stdin-filename", "app/lint_probe.py", "-", stdin=TOO_LONG)
    assert proc.returncode == 1 and "E501" in proc.stdout, report("ruff on a 167-character line", proc)


@pytest.mark.parametrize("path", ["static/js/lint_probe.js", "static/stage/lint_probe.js", "static/js/docs.js"])
def test_eslint_checks_the_browser_code(path: str) -> None:
    proc = eslint("--stdin", "--stdin-filename", path, stdin=UNUSED)
    assert proc.returncode == 1 and "no-unused-vars" in proc.stdout, report(f"eslint on an unused variable in {path}",
                                                                          proc)


LONG_FUNCTION = "export function long() {\n" + "  console.log(1);\n" * 60 + "}\n"  # 62 lines
LONG_FILE = "console.log(1);\n" * 401


@pytest.mark.parametrize("path", ["static/js/lint_probe.js", "static/stage/lint_probe.js"])
def test_eslint_keeps_the_browser_code_within_the_size_limits(path: str) -> None:
    """No function over 60 lines, no file over 400 (eslint.config.mjs), under static/."""
    proc = eslint("--stdin", "--stdin-filename", path, stdin=LONG_FUNCTION)
    assert proc.returncode == 1 and "max-lines-per-function" in proc.stdout, report(f"a long function in {path}", proc)
    proc = eslint("--stdin", "--stdin-filename", path, stdin=LONG_FILE)
    assert proc.returncode == 1 and "max-lines" in proc.stdout, report(f"eslint on a 401-line file in {path}", proc)


ROOM_PROBES = [  # (planted file, what it imports): each crosses a wall of eslint.config.mjs's rooms
    ("static/local/_room_probe.js", 'import { drawnValues } from "../stage/data.js";\nexport const d = drawnValues;\n'),
    ("static/local/_room_probe.js", 'export const s = () => import("../stage/data.js");\n'),
    ("static/local/_room_probe.js", 'import { hidden } from "../js/page/state.js";\nexport const h = hidden;\n'),
    ("static/stage/_room_probe.js", 'import { hidden } from "../js/page/state.js";\nexport const h = hidden;\n'),
    ("static/engine/_room_probe.js", 'import { fmt } from "../js/format.js";\nexport const f = fmt;\n'),
]


@pytest.mark.parametrize("path, source", ROOM_PROBES)
def test_eslint_keeps_the_rooms(path: str, source: str) -> None:
    """A module planted in a room that imports across its wall (the per-input rules importing the stage or the
    page's DOM code, the stage the page's DOM code, the engine anything of the page) makes ESLint fail."""
    planted = ROOT / path
    assert not planted.exists(), f"{path} is in the way"
    planted.write_text(source)
    try:
        proc = eslint(path)
    finally:
        planted.unlink()
    assert proc.returncode == 1 and "no-restricted-" in proc.stdout, report(f"eslint on {path} importing across", proc)


def test_a_test_of_the_pages_code_fails_without_node(monkeypatch):
    """Marked `node` (tests/conftest.py): without Node it fails, never skips quietly."""
    import shutil

    from tests.conftest import pytest_runtest_setup

    class Marked:
        def get_closest_marker(self, name: str):
            return name == "node"

    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    with pytest.raises(pytest.fail.Exception, match="Node is not installed"):
        pytest_runtest_setup(Marked())
