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
