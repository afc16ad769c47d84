"""The page's JavaScript as readers get it: bundled and minified, so few bytes come before the stage is live.

`npm run build` (scripts/build-js.mjs, esbuild) bundles every module script the templates name as
/bundle/<path> (its source is static/<path>) with three.js inside, minified, with source maps, into
bundle/ (not committed: scripts/setup.sh and the Dockerfile build it). The app serves bundle/ at /bundle,
only the files the build wrote, each compressed once like every unchanging file (app/serving/once.py).

There is one path: the pages always load the bundle, in production and in the tests alike. Without it, or
with a bundle older than its sources (a source file, three.js or a template's list of modules changed
since the build), the app refuses to start with one line that says to run `npm run build`, rather than
serve a page whose scripts are missing or stale. The manifest the build writes lists every input file
with its SHA-256; checking them costs a few milliseconds at start-up. The sources under /static stay
served (tests import single modules from them; the import map names three.js for them), but no page
loads them.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from app.serving.delivery import STARTUP_FAILURE

ROOT = Path(__file__).resolve().parents[2]
BUNDLE = ROOT / "bundle"
BUILD = "npm run build"
# a module script the templates load from the bundle (scripts/build-js.mjs reads the same)
ENTRY = re.compile(r'<script type="module" src="/bundle/([\w./-]+\.js)"></script>')


@dataclass(frozen=True)
class Bundle:
    folder: Path
    entries: tuple[str, ...]
    files: frozenset[str]  # what /bundle serves: the entries, the shared chunks, the styles, the source maps


def template_entries(root: Path = ROOT) -> list[str]:
    """The module entries the templates name, as paths under static/ (sorted, each once)."""
    found = {m for p in (root / "templates").rglob("*.html") for m in ENTRY.findall(p.read_text(encoding="utf-8"))}
    return sorted(found)


def problems(root: Path = ROOT, folder: Path | None = None) -> list[str]:
    """What is wrong with the bundle in `folder` (default root/bundle) for the sources in `root`: [] when
    it is there, whole, and built from the sources as they are now."""
    folder = folder or root / "bundle"
    try:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return [f"there is no bundle in {folder}"]
    out = [
        f"{e} is named by the templates but not built" for e in template_entries(root) if e not in manifest["entries"]
    ]
    out += [f"{f} is missing from the bundle" for f in manifest["files"] if not (folder / f).is_file()]
    for path, digest in manifest["inputs"].items():
        source = root / path
        if not source.is_file():
            out.append(f"{path} was built but is gone")
        elif hashlib.sha256(source.read_bytes()).hexdigest() != digest:
            out.append(f"{path} changed since the build")
    return out


def require_bundle(root: Path = ROOT, folder: Path | None = None) -> Bundle:
    """The bundle, checked; otherwise stop the process (exit 3) with one line saying what to run."""
    folder = folder or root / "bundle"
    found = problems(root, folder)
    if found:
        more = f" and {len(found) - 3} more" if len(found) > 3 else ""
        print(
            f"anatomy: the page's JavaScript bundle is missing or stale ({'; '.join(found[:3])}{more}); "
            f"run `{BUILD}` in the project folder, then start again",
            file=sys.stderr,
            flush=True,
        )
        raise SystemExit(STARTUP_FAILURE)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    return Bundle(folder, tuple(manifest["entries"]), frozenset(manifest["files"]))
