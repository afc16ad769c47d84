"""What the page computes for the default input, computed once when the bundle is built, by the page's own
code under Node: so that a reader without JavaScript sees the article's live numbers, and the first
paint of the page has them before any script runs. The page computes every per-input figure itself
(static/local/page_parts.js); the server keeps no second copy of those rules.

`python3 -m app.prerender` (scripts/setup.sh runs it after `npm run build`, the Dockerfile too) asks the
app in this process for the documents the page would fetch for the default input — its compact trace,
the model's recipe (/api/live) and the scene structure of its shape — writes them to a scratch folder,
and runs scripts/prerender.mjs over them, which decodes the trace and computes its figures exactly as
the page does (static/js/compact.js, then withPageParts). The result lands in bundle/prerendered.json
beside the bundle it was computed with, keyed by each model's weights version: the app refuses to start
without it, or with one computed for other weights (one line naming the command, as for the bundle).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson

from app.bundle import BUNDLE
from app.delivery import STARTUP_FAILURE
from model import models

ROOT = Path(__file__).resolve().parent.parent
PRERENDERED = BUNDLE / "prerendered.json"
FORMAT = "anatomy-prerendered/1"
DEFAULT_INPUT = 42
COMMAND = "python3 -m app.prerender"
COMPACT = "application/vnd.anatomy.trace"


def _query(name: str) -> str:
    return "" if name == models.DEFAULT else f"?model={name}"


def _documents(site, name: str, folder: Path) -> dict[str, str]:
    """The documents the page fetches for the default input of model `name`, written to `folder`; their
    URLs (as the page asks them) → file names."""
    q = _query(name)
    trace_url = f"/api/trace?input={DEFAULT_INPUT}" + (f"&model={name}" if q else "")
    head = site.json(trace_url)  # the shape of the default input: its source length and decoder rows
    n, m = len(head["source_tokens"]), len(head["target_tokens"])
    urls = {trace_url: COMPACT, f"/api/live{q}": "application/json",
            f"/site/scene/{name}/{n}.json.gz": "application/gzip",
            f"/site/scene/{name}/{n}-{m}.diff.json.gz": "application/gzip"}
    index = {}
    for k, (url, accept) in enumerate(urls.items()):
        (folder / f"{name}-{k}").write_bytes(site.get(url, accept))
        index[url] = f"{name}-{k}"
    return index


def compute(app=None, names: tuple[str, ...] = (models.DEFAULT,)) -> dict:
    """The prerendered document: for each model named, its weights version and the default input's live
    figures as the page computes them."""
    from app.main import create_app
    from app.site import InProcess

    app = app or create_app()
    app.state.documents_only = True  # the article's own start-up needs what is being made here
    out = {"format": FORMAT, "input": DEFAULT_INPUT, "bundle": bundle_stamp(), "models": {}}
    with InProcess(app) as site, tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        for name in names:
            index = _documents(site, name, folder)
            trace_url = next(u for u in index if u.startswith("/api/trace"))
            job = {"folder": str(folder), "index": index, "trace": trace_url, "model": _query(name) and name}
            run = subprocess.run(["node", "--no-warnings", str(ROOT / "scripts" / "prerender.mjs")],
                                 input=json.dumps(job), capture_output=True, text=True, timeout=120, cwd=ROOT)
            if run.returncode != 0:
                raise RuntimeError(f"scripts/prerender.mjs failed: {run.stderr.strip()[-2000:]}")
            version = site.json(f"/api/model{_query(name)}")["weights_version"]
            out["models"][name] = {"weights_version": version, "figures": json.loads(run.stdout)["figures"]}
    return out


def bundle_stamp() -> str:
    """The bundle the figures were computed with (its manifest's digest): other page code, other figures."""
    try:
        return hashlib.sha256((BUNDLE / "manifest.json").read_bytes()).hexdigest()
    except OSError:
        return ""


def write(doc: dict, path: Path = PRERENDERED) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))


def problem(doc: dict | None, name: str, version: str) -> str:
    """What is wrong with `doc` for model `name` at weights `version`: "" when it answers for them."""
    if doc is None or doc.get("format") != FORMAT:
        return f"there are no prerendered figures in {PRERENDERED}"
    if doc.get("bundle") != bundle_stamp():
        return f"{PRERENDERED} was computed with another build of the page's JavaScript"
    entry = doc["models"].get(name)
    if entry is None:
        return f"{PRERENDERED} has no figures of the model {name}"
    if entry["weights_version"] != version:
        return f"{PRERENDERED} was computed with other weights than the model {name}'s ({version})"
    return ""


def read(path: Path = PRERENDERED) -> dict | None:
    try:
        return orjson.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


def default_figures(name: str, version: str) -> dict:
    """The default input's live figures of model `name`; without them (or stale), one line and exit 3."""
    doc = read()
    why = problem(doc, name, version)
    if why:
        print(f"anatomy: {why}: run `{COMMAND}` (scripts/setup.sh does)", file=sys.stderr)
        raise SystemExit(STARTUP_FAILURE)
    return doc["models"][name]["figures"]


def main() -> int:
    write(compute())
    print(f"prerendered the default input's figures into {PRERENDERED.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
