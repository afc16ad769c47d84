"""The page's JavaScript is type-checked: TypeScript's compiler in checkJs mode (tsconfig.json, pinned in
package.json) over every module of the page (static/engine/, static/compute/, static/stage/, static/js/ with
static/js/page/, and static/js/docs.js), with the documents that cross a boundary typed once (static/types.js)
and the page's globals and events declared once (static/globals.d.ts), finds 0 errors; and a copy of a module
that reads a field the document does not have (trace.source_token) makes it fail, so the types are doing work."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TSC = ROOT / "node_modules" / ".bin" / "tsc"


def tsc(project: Path) -> subprocess.CompletedProcess:
    if not TSC.is_file():
        pytest.fail(f"{TSC.relative_to(ROOT)} is missing: run `bash scripts/setup.sh` (npm ci installs typescript)")
    return subprocess.run(
        [str(TSC), "-p", str(project), "--pretty", "false"], cwd=ROOT, capture_output=True, text=True, timeout=180
    )


def test_the_typed_rooms_have_no_type_errors():
    run = tsc(ROOT / "tsconfig.json")
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]


def test_the_boundaries_are_typed():
    listed = tsc_files()
    for module in (
        "static/types.js",
        "static/globals.d.ts",
        "static/compute/page_parts.js",
        "static/compute/derived.js",
        "static/compute/scene.js",
        "static/compute/trace.js",
        "static/js/compact.js",
        "static/engine/program.js",
        "static/stage/main.js",
        "static/stage/stage.js",
        "static/js/api.js",
        "static/js/page.js",
        "static/js/page/run.js",
        "static/js/docs.js",
    ):
        assert module in listed, f"{module} is not type-checked"
    for module, function in [
        ("compute/page_parts.js", "withPageParts"),
        ("compute/derived.js", "derivedFigures"),
        ("compute/scene.js", "personalize"),
        ("js/compact.js", "decodeCompactTrace"),
        ("compute/trace.js", "computeTrace"),
        ("stage/stage.js", "setTrace"),
        ("stage/view.js", "useScene"),
        ("stage/data.js", "traceTensors"),
        ("js/api.js", "loadTrace"),
    ]:
        text = (ROOT / "static" / module).read_text(encoding="utf-8")
        # a function, or a class's method (two spaces in)
        head = text[: re.search(rf"(function |\n  ){function}\(", text).start()]
        assert 'import("../types.js").' in head[head.rindex("/**") :], f"{function} names no document of types.js"


def tsc_files() -> set[str]:
    run = subprocess.run(
        [str(TSC), "-p", str(ROOT / "tsconfig.json"), "--listFilesOnly"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    return {
        Path(line).resolve().relative_to(ROOT).as_posix()
        for line in run.stdout.splitlines()
        if line.strip() and "node_modules" not in line
    }


def project_config() -> dict:
    """tsconfig.json as JSON (its comment lines, which TypeScript allows, left out)."""
    lines = (ROOT / "tsconfig.json").read_text(encoding="utf-8").splitlines()
    return json.loads("\n".join(line for line in lines if not line.lstrip().startswith("//")))


@pytest.mark.parametrize(
    "module, right, wrong, missing",
    [
        ("compute/scene_source.js", "trace.source_tokens.length", "trace.source_token.length", "source_token"),
        ("compute/scene.js", "structure.personal.vocab)", "structure.personal.vocabulary)", "vocabulary"),
        ("compute/page_parts.js", "ablation: trace.ablation", "ablation: trace.ablations", "ablations"),
        ("stage/stage.js", "scene = trace.scene;", "scene = trace.scenes;", "scenes"),
        ("js/handout.js", "trace.input.english.join", "trace.input.englsh.join", "englsh"),
    ],
)
def test_a_wrong_field_name_fails_the_check(tmp_path, module, right, wrong, missing):
    shutil.copytree(ROOT / "static", tmp_path / "static", ignore=shutil.ignore_patterns("*.css", "*.svg", "*.md"))
    copy = tmp_path / "static" / module
    text = copy.read_text(encoding="utf-8")
    assert right in text, f"{module} no longer reads {right}: update the probe"
    copy.write_text(text.replace(right, wrong, 1), encoding="utf-8")
    config = tmp_path / "tsconfig.json"  # the project's, over the copy (`include` is read beside the file)
    config.write_text(json.dumps(project_config()))
    run = tsc(config)
    assert run.returncode != 0 and f"static/{module}(" in run.stdout, run.stdout[-3000:]
    assert f"Property '{missing}' does not exist" in run.stdout, run.stdout[-3000:]  # TS2339 or TS2551
