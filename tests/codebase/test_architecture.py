"""The architecture is checked, not hoped for: the rooms' layering (import-linter's contracts in
pyproject.toml), no import circles inside a room, and sizes a reader can hold in their head: no source
file over 400 lines and no function over 60, Python and JavaScript alike."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ROOMS = ("app", "research", "scene", "article", "recorder", "model")
MAX_FILE_LINES, MAX_FUNCTION_LINES = 400, 60


def lint_imports(where: Path) -> subprocess.CompletedProcess:
    """import-linter over the rooms found in `where` (its copies first on the path), with the project's contracts."""
    env = {"PYTHONPATH": str(where), "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin"}
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())",
            "--no-cache",
            "--config",
            str(ROOT / "pyproject.toml"),
        ],
        cwd=where,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_rooms_keep_their_layers_and_have_no_circles():
    run = lint_imports(ROOT)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "3 kept, 0 broken" in run.stdout


@pytest.mark.parametrize(
    "room, bad_import, contract",
    [
        ("model", "import recorder", "Data flows one way"),  # the network imports none of the others
        ("recorder", "import article.tour", "Data flows one way"),  # the trace imports no article code
        ("research", "import app.main", "Data flows one way"),  # the desk imports no web code
        ("app.serving", "import app.routes.api", "each job builds on those below"),  # serving knows no route
        ("app.service", "import app.startup.prerender", "each job builds on those below"),  # nor the model service
    ],
)
def test_a_probe_that_breaks_a_contract_fails(tmp_path, room, bad_import, contract):
    for r in ROOMS:
        shutil.copytree(
            ROOT / r,
            tmp_path / r,
            ignore=shutil.ignore_patterns("__pycache__", "*.safetensors", "artifacts", "results", "gallery"),
        )
    (tmp_path / room.replace(".", "/") / "_probe.py").write_text(f"{bad_import}\n")
    run = lint_imports(tmp_path)
    assert run.returncode != 0 and contract in run.stdout and f"{room}._probe" in run.stdout, run.stdout[-3000:]


def _python_sources() -> list[Path]:
    return sorted(p for r in ROOMS for p in (ROOT / r).rglob("*.py") if "__pycache__" not in p.parts)


def test_no_python_source_file_is_over_400_lines():
    long = [
        f"{p.relative_to(ROOT)} ({n} lines)"
        for p in _python_sources()
        if (n := len(p.read_text().splitlines())) > MAX_FILE_LINES
    ]
    assert not long, "split by job: " + ", ".join(long)


def long_functions(paths: list[Path]) -> list[str]:
    long = []
    for p in paths:
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long.append(f"{p.name}:{node.lineno} {node.name} ({n} lines)")
    return long


def test_no_python_function_is_over_60_lines():
    long = long_functions(_python_sources())
    assert not long, "too long: " + ", ".join(long)


LINT_JS = """
const {ESLint} = require('eslint');
(async () => {
  const rules = {'max-lines': ['error', {max: MAX_FILE}], 'max-lines-per-function': ['error', {max: MAX_FUNCTION}]};
  const eslint = new ESLint({overrideConfig: {rules}});
  const out = [];
  for (const f of await eslint.lintFiles(['static/**/*.js']))
    for (const m of f.messages) if (/^max-lines/.test(m.ruleId || ''))
      out.push(`${f.filePath.slice(process.cwd().length + 1)}:${m.line} ${m.message}`);
  console.log(JSON.stringify(out));
})();
""".replace("MAX_FILE", str(MAX_FILE_LINES)).replace("MAX_FUNCTION", str(MAX_FUNCTION_LINES))


def test_no_javascript_file_is_over_400_lines_nor_function_over_60():
    run = subprocess.run(["node", "-e", LINT_JS], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    offenders = json.loads(run.stdout)
    assert not offenders, "split by job: " + "; ".join(offenders)


def test_the_function_check_names_an_offender(tmp_path):
    """A 61-line function is named, a 60-line one is not."""
    lines = lambda n: "\n".join(f"    x{i} = {i}" for i in range(n - 1))  # noqa: E731
    (tmp_path / "probe.py").write_text(f"def long_one():\n{lines(61)}\n\n\ndef short_one():\n{lines(60)}\n")
    assert long_functions([tmp_path / "probe.py"]) == ["probe.py:1 long_one (61 lines)"]
