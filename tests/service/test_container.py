"""The container image holds everything the app reads at run time.

The final stage's COPY lines in the Dockerfile say which paths land in the image's working directory.
Here exactly those paths (less what .dockerignore keeps out of the build context) are copied into an
empty directory, the app is started there, and the page, a trace, every research-desk figure and the
browser libraries are requested: a path the Dockerfile forgets (research/, say: the desk then reads
"not available") fails here without building an image. scripts/container-smoke.sh builds and runs
the real image; this test needs no container engine.

Stand-ins for the three paths the image gets from its build stage: the Python environment (/opt/venv)
is this interpreter's, node_modules is a link to the working tree's (npm ci from the same lock), and so is
bundle/ (npm run build from the same sources; the app checks it against them at start-up)."""

from __future__ import annotations

import fnmatch
import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

import httpx
import pytest

from tests.conftest import served

ROOT = Path(__file__).resolve().parents[2]
# what the build stage makes: its stand-in here
BUILD_STAGE_PATHS = {"/src/node_modules": ROOT / "node_modules", "/src/bundle": ROOT / "bundle"}


def instructions(dockerfile: str) -> list[tuple[str, list[str]]]:
    """(INSTRUCTION, arguments) per instruction, continuation lines joined, comments dropped."""
    out, current = [], ""
    for line in dockerfile.splitlines():
        if line.lstrip().startswith("#") and not current:
            continue
        current += line.rstrip()
        if current.endswith("\\"):
            current = current[:-1] + " "
            continue
        if current.strip():
            word, _, rest = current.strip().partition(" ")
            out.append((word.upper(), shlex.split(rest) if word.upper() in ("COPY", "ADD", "WORKDIR") else [rest]))
        current = ""
    return out


def final_stage_copies(dockerfile: str) -> tuple[str, list[tuple[str | None, str, str]]]:
    """The final stage's WORKDIR and its copies as (from-stage or None, source, destination relative to WORKDIR)."""
    steps = instructions(dockerfile)
    last_from = max(i for i, (word, _) in enumerate(steps) if word == "FROM")
    workdir, copies = "/", []
    for word, args in steps[last_from + 1 :]:
        if word == "WORKDIR":
            workdir = str(PurePosixPath(workdir) / args[0])
        elif word in ("COPY", "ADD"):
            flags = {a.split("=", 1)[0]: a.split("=", 1)[1] for a in args if a.startswith("--")}
            paths = [a for a in args if not a.startswith("--")]
            *sources, dest = paths
            dest_abs = PurePosixPath(workdir) / dest
            for src in sources:
                copies.append((flags.get("--from"), src, str(dest_abs)))
    inside = [
        (stage, src, str(PurePosixPath(dest).relative_to(workdir)))
        for stage, src, dest in copies
        if PurePosixPath(dest).is_relative_to(workdir)
    ]
    return workdir, inside


def ignored(rel: str, patterns: list[str]) -> bool:
    """Whether .dockerignore keeps `rel` (or a folder above it) out of the build context."""
    parts = rel.split("/")
    prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    for pattern in patterns:
        for p in (pattern, pattern.removeprefix("**/")):
            if any(fnmatch.fnmatchcase(prefix, p) for prefix in prefixes):
                return True
            if pattern.startswith("**/") and any(fnmatch.fnmatchcase(part, p) for part in parts):
                return True
    return False


def dockerignore() -> list[str]:
    path = ROOT / ".dockerignore"
    lines = path.read_text().splitlines() if path.is_file() else []
    return [s.strip().rstrip("/") for s in lines if s.strip() and not s.startswith("#") and not s.startswith("!")]


def lay_out_image(dest: Path, dockerfile: str) -> list[str]:
    """Copies into `dest` what the Dockerfile's final stage puts in its WORKDIR; returns the names laid out."""
    _, copies = final_stage_copies(dockerfile)
    patterns, names = dockerignore(), []
    for stage, src, target in copies:
        out = dest / target
        if stage is not None:
            stand_in = BUILD_STAGE_PATHS.get(src)
            assert stand_in is not None, f"COPY --from={stage} {src}: this test has no stand-in for it"
            out.symlink_to(stand_in, target_is_directory=True)
        else:
            source = ROOT / src
            assert source.exists(), f"the Dockerfile copies {src}, which is not in the repository"
            if source.is_dir():
                shutil.copytree(
                    source,
                    out,
                    dirs_exist_ok=True,
                    ignore=lambda d, files: [
                        f for f in files if ignored(str((Path(d) / f).relative_to(ROOT)), patterns)
                    ],
                )
            elif not ignored(src, patterns):
                out.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, out)
        names.append(src if target == "." else target)
    return names


def test_parser_reads_the_final_stage() -> None:
    text = """FROM a AS build
WORKDIR /src
COPY package.json ./
FROM b
WORKDIR /srv/x
# a comment
COPY app app
COPY --from=build --chown=1 /src/node_modules \\
     node_modules
COPY --from=build /opt/venv /opt/venv
"""
    assert final_stage_copies(text) == (
        "/srv/x",
        [(None, "app", "app"), ("build", "/src/node_modules", "node_modules")],
    )
    assert ignored("model/__pycache__/x.pyc", ["**/__pycache__"]) and not ignored("scene/layout.py", ["**/__pycache__"])


@pytest.fixture(scope="module")
def image_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    image = tmp_path_factory.mktemp("image")
    names = lay_out_image(image, (ROOT / "Dockerfile").read_text())
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    where = subprocess.run(
        [
            sys.executable,
            "-c",
            "import app.main, model, recorder, scene, article, research; "
            "print(app.main.__file__, model.__file__, research.__file__)",
        ],
        cwd=image,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert where.returncode == 0, f"the image's files ({', '.join(names)}) do not import:\n{where.stderr[-2000:]}"
    for f in where.stdout.split():  # the app under test is the copy, not the working tree (editable install)
        assert Path(f).resolve().is_relative_to(image.resolve()), f"{f} imported from outside the image's files"
    with served(
        image, tmp_path_factory.mktemp("image-server"), env, f"the app, from the image's files ({', '.join(names)}),"
    ) as url:
        yield url


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/about",
        "/ledger",
        "/docs",
        "/static/stage/main.js",
        "/static/js/page.js",
        "/bundle/stage/main.js",
        "/bundle/js/page.js",
        "/vendor/three/build/three.module.js",
        "/vendor/katex/katex.min.js",
        "/vendor/swagger-ui/swagger-ui-bundle.js",
        "/vendor/chartjs/chart.umd.min.js",
    ],
)
def test_pages_and_files(image_server: str, path: str) -> None:
    r = httpx.get(image_server + path, timeout=60)
    assert r.status_code == 200, f"GET {path}: {r.status_code} {r.text[:300]}"


def test_trace(image_server: str) -> None:
    t = httpx.get(image_server + "/api/trace", params={"input": "42"}, timeout=60).json()
    assert t["input"]["german"] == "zweiundvierzig" and t["nodes"]


def test_every_figure_has_its_data(image_server: str) -> None:
    names = httpx.get(image_server + "/api/figures", timeout=60).json()["names"]
    research = [n for n in names if n.startswith("research-")]
    assert research and "head-gallery" in names
    for name in names:
        r = httpx.get(f"{image_server}/api/figures/{name}", timeout=60)
        assert r.status_code == 200, f"{name}: {r.status_code} {r.text[:300]}"
        if name in research:
            data = r.json()["data"]
            assert data["status"] == "results" and data["runs"] > 0, (
                f"{name} in the image: {json.dumps(data)[:400]} (is research/ copied by the Dockerfile?)"
            )
