"""Lint as part of the test command: `ruff check .` (rules in pyproject.toml) over the Python,
ESLint (eslint.config.mjs, pinned in package.json) over the browser code, and Prettier (prettier.config.mjs,
pinned; .prettierignore says which files) over all of our JavaScript. A failure prints the tools' own report.
Each is also fed a known-bad snippet or file under a path it must check, so a config that stops covering app/,
static/, scripts/ or tests/ fails here instead of passing quietly. And no comment or document points a reader
at a tracker's issue or at a section of a specification the repository does not ship: the reason is written
out in words instead."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ESLINT = ROOT / "node_modules" / ".bin" / "eslint"
PRETTIER = ROOT / "node_modules" / ".bin" / "prettier"
TOO_LONG = "x = " + "1 + " * 40 + "1\n"  # 167 characters: E501 at line-length 120
UNUSED = "const neverRead = 1;\n"  # no-unused-vars, from eslint's recommended rules


def run(cmd: list[str], stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=ROOT, input=stdin, capture_output=True, text=True, timeout=120)


def ruff(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return run([sys.executable, "-m", "ruff", "check", "--no-cache", *args], stdin)


def eslint(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    if not ESLINT.is_file():
        pytest.fail(
            f"{ESLINT.relative_to(ROOT)} is missing: run `bash scripts/setup.sh` (npm ci installs the "
            "devDependencies, eslint among them)"
        )
    if shutil.which("node") is None:
        pytest.fail("node is not on PATH: run `bash scripts/setup.sh`")
    return run([str(ESLINT), "--no-warn-ignored", *args], stdin)


def prettier(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    if not PRETTIER.is_file():
        pytest.fail(
            f"{PRETTIER.relative_to(ROOT)} is missing: run `bash scripts/setup.sh` (npm ci installs the "
            "devDependencies, prettier among them)"
        )
    return subprocess.run([str(PRETTIER), "--check", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def report(name: str, proc: subprocess.CompletedProcess) -> str:
    return f"{name} exited {proc.returncode}:\n{proc.stdout}{proc.stderr}"


def test_ruff_is_clean() -> None:
    proc = ruff(".")
    assert proc.returncode == 0, report("ruff check .", proc)


def test_eslint_is_clean() -> None:
    proc = eslint(".")
    assert proc.returncode == 0, report("eslint .", proc)


def ruff_format(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return run([sys.executable, "-m", "ruff", "format", "--no-cache", "--check", *args], stdin)


def test_the_python_is_formatted() -> None:
    """One formatter for the Python: ruff format, at the project's line length (pyproject.toml)."""
    proc = ruff_format(".")
    assert proc.returncode == 0, report("ruff format --check .", proc)


@pytest.mark.parametrize("path", ["app/format_probe.py", "tests/page/format_probe.py"])
def test_ruff_format_checks_the_sources_and_the_tests(path: str) -> None:
    packed = "def f(a,b):  return {'a':a,\n  'b':b}\n"  # one line's body on the def, single quotes, a hanging dict
    proc = ruff_format("--stdin-filename", path, "-", stdin=packed)
    assert proc.returncode == 1, report(f"ruff format --check on unformatted code as {path}", proc)
    proc = ruff_format("--stdin-filename", path, "-", stdin='def f(a, b):\n    return {"a": a, "b": b}\n')
    assert proc.returncode == 0, report(f"ruff format --check on formatted code as {path}", proc)


def test_ruff_checks_the_app() -> None:
    proc = ruff("--stdin-filename", "app/lint_probe.py", "-", stdin=TOO_LONG)
    assert proc.returncode == 1 and "E501" in proc.stdout, report("ruff on a 167-character line", proc)


@pytest.mark.parametrize("path", ["static/js/lint_probe.js", "static/stage/lint_probe.js", "static/js/docs.js"])
def test_eslint_checks_the_browser_code(path: str) -> None:
    proc = eslint("--stdin", "--stdin-filename", path, stdin=UNUSED)
    assert proc.returncode == 1 and "no-unused-vars" in proc.stdout, report(
        f"eslint on an unused variable in {path}", proc
    )


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
    (
        "static/compute/_room_probe.js",
        'import { drawnValues } from "../stage/data.js";\nexport const d = drawnValues;\n',
    ),
    ("static/compute/_room_probe.js", 'export const s = () => import("../stage/data.js");\n'),
    ("static/compute/_room_probe.js", 'import { hidden } from "../js/page/state.js";\nexport const h = hidden;\n'),
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


# ---- words, not numbers a newcomer cannot look up ------------------------------------------------------

# "issue" or "issues" and a number (with or without "#"), and "spec", "SPEC.md" or "the spec's" right
# before a section sign (these very lines say them apart so as not to match). The paper's sections ("the
# paper's §5.3", "[1] §3.2.1") are citations a reader can follow, and are not matched.
TRACKER_MENTION = re.compile(r"\bissues?\s*#?\d|\bspec(?:\.md|ification)?(?:'s)?\s*§", re.IGNORECASE)
NOT_SCANNED = ("node_modules/", "bundle/")  # installed or generated, not written here
NOT_SCANNED_FILES = {"package-lock.json"}


def tracker_mentions(root: Path = ROOT) -> list[str]:
    """`file:line: text` for every line of a tracked text file (git ls-files) that names a tracker issue
    or a section of the specification; binary files (a NUL byte, or not UTF-8) are skipped."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True, timeout=60)
    found = []
    for name in sorted(listed.stdout.decode().split("\0")):
        if not name or name.startswith(NOT_SCANNED) or Path(name).name in NOT_SCANNED_FILES:
            continue
        path = root / name
        if not path.is_file():  # deleted in the work tree, not yet in the index
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if TRACKER_MENTION.search(line):
                found.append(f"{name}:{number}: {line.strip()[:160]}")
    return found


def test_no_comment_or_document_names_a_tracker_issue_or_a_spec_section() -> None:
    found = tracker_mentions()
    assert not found, (
        f"{len(found)} line(s) name a tracker issue or a section of the specification, which a newcomer "
        "cannot follow; say the reason in words (or drop the mention when the sentence stands without it):\n"
        + "\n".join(found)
    )


def test_the_tracker_check_fails_on_a_planted_mention(tmp_path: Path) -> None:
    """A repository holding a planted comment (a "see" and an issue's number) and a planted spec section fails the
    check, on exactly those lines; the paper's sections, an untracked file and a binary file pass."""
    git = shutil.which("git")
    assert git, "git is not on PATH"
    planted = {
        "probe.py": "x = 1\n# see " + "issue" + " 12\n",
        "docs/probe.md": "The paper's §5.3 sets Adam's betas; [1] §3.2.1 scales the scores.\n"
        + "Conventions as "
        + "SPEC"
        + " §2 leaves them.\n",
        "model.bin": "# see " + "issue" + " 12\n\0",
    }
    for name, text in planted.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "untracked.py").write_text("# see " + "issue" + " 12\n")
    subprocess.run([git, "init", "-q"], cwd=tmp_path, check=True, timeout=60)
    subprocess.run([git, "add", *planted], cwd=tmp_path, check=True, timeout=60)
    found = tracker_mentions(tmp_path)
    assert [f.split(": ", 1)[0] for f in found] == ["docs/probe.md:2", "probe.py:2"], found


# The layout rules of all our JavaScript (eslint.config.mjs): one statement a line, no line over 120 characters.
JS_PATHS = ["static/js/lint_probe.js", "static/stage/lint_probe.js", "scripts/lint_probe.mjs", "tests/lint_probe.mjs"]
TWO_STATEMENTS = "export const a = 1; export const b = a;\n"
LONGEST = "export const s = " + '"' + "x" * 100 + '"' + ";\n"  # 120 characters: allowed
TOO_WIDE = "export const s = " + '"' + "x" * 101 + '"' + ";\n"  # 121 characters


@pytest.mark.parametrize("path", JS_PATHS)
def test_eslint_keeps_one_statement_a_line_and_120_characters(path: str) -> None:
    proc = eslint("--stdin", "--stdin-filename", path, stdin=TWO_STATEMENTS)
    assert proc.returncode == 1 and "max-statements-per-line" in proc.stdout, report(f"two statements in {path}", proc)
    assert len(TOO_WIDE) - 1 == 121 and len(LONGEST) - 1 == 120
    proc = eslint("--stdin", "--stdin-filename", path, stdin=TOO_WIDE)
    assert proc.returncode == 1 and "max-len" in proc.stdout, report(f"a 121-character line in {path}", proc)
    proc = eslint("--stdin", "--stdin-filename", path, stdin=LONGEST)
    assert proc.returncode == 0, report(f"a 120-character line in {path}", proc)


def test_prettier_is_clean() -> None:
    """Every file Prettier sees (.prettierignore: the JavaScript of static/, scripts/, tests/ and the config
    files) is as Prettier would write it: `npx prettier --write .` fixes a failure."""
    proc = prettier(".")
    assert proc.returncode == 0, report("prettier --check .", proc)


def unformatted(source: str) -> str:
    """The same module laid out otherwise: four-space indents and single quotes, as Prettier would not."""
    return source.replace("\n  ", "\n    ").replace('"', "'")


@pytest.mark.parametrize(
    "module, planted",
    [
        ("static/js/format.js", "static/js/format_copy.js"),
        ("static/stage/panel.js", "static/stage/panel_copy.js"),
        ("scripts/build-js.mjs", "scripts/build_copy.mjs"),
        ("tests/js_imports.mjs", "tests/imports_copy.mjs"),
    ],
)
def test_prettier_fails_on_an_unformatted_module(tmp_path: Path, module: str, planted: str) -> None:
    """In a copy of the project's Prettier set-up (its config and ignore file), a module copied as it is passes
    `prettier --check .` and the same module laid out otherwise fails it, named: the check covers that folder
    and can fail."""
    for name in ("prettier.config.mjs", ".prettierignore"):
        shutil.copy(ROOT / name, tmp_path / name)
    source = (ROOT / module).read_text(encoding="utf-8")
    (tmp_path / planted).parent.mkdir(parents=True)
    (tmp_path / planted).write_text(source, encoding="utf-8")
    proc = prettier(".", cwd=tmp_path)
    assert proc.returncode == 0 and "All matched files use Prettier code style" in proc.stdout, report(
        f"prettier on a copy of {module}", proc
    )
    (tmp_path / planted).write_text(unformatted(source), encoding="utf-8")
    proc = prettier(".", cwd=tmp_path)
    assert proc.returncode == 1 and planted in proc.stdout + proc.stderr, report(
        f"prettier on an unformatted copy of {module}", proc
    )
