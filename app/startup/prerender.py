"""What the page's own JavaScript computes for one input, computed ahead for the default input, so that the
server can render it for a reader without JavaScript: scripts/prerender.mjs run over the input's trace as the
server sends it (its compact form) and the model's live recipe, written to a temporary folder; it prints JSON.

The result is kept in bundle/prerendered/KIND.json (not committed: `python -m app.prerender`, which
scripts/setup.sh runs after `npm run build`, writes it; `npm run build` empties bundle/, so a rebuilt page
is prerendered again). A kept file serves while its weights version and input are the service's; otherwise
`prerendered` computes it again and keeps it. The kinds: "figures" (static/compute/derived.js: the article's
live figures, which app/main.py fills into the article at start-up) and "topics" (static/compute/topic_tables.js,
the go-deeper pages' tables; app/routes/deeper.py)."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import orjson

from app.service.live_recipe import live_body
from app.service.model_service import ModelService

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "bundle" / "prerendered"
DEFAULT_INPUT = 42  # the page's default input (app/routes/pages.py DEFAULT_INPUT, which tests hold equal)
KINDS = ("figures", "topics")
RECIPE_FILE = "live.json"  # the model's live recipe as /api/live sends it
TRACE_FILE = "trace.compact"  # the input's trace as /api/trace sends it to the page (app/serving/trace_bytes.py)
TIMEOUT_S = 120
_lock = threading.Lock()


SCRIPT = ROOT / "scripts" / "prerender.mjs"


def service_documents(svc: ModelService, number: int) -> dict[str, bytes]:
    """What the page's code reads to compute `number`'s figures: the served trace and the model's recipe."""
    return {TRACE_FILE: svc.trace_sync(number).compact, RECIPE_FILE: live_body(svc)}


def prerender(kind: str, svc: ModelService, number: int = DEFAULT_INPUT) -> dict:
    """Run scripts/prerender.mjs for `kind` and `number` over the service's documents; its JSON."""
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("prerendering needs Node (node is not on the PATH)")
    with tempfile.TemporaryDirectory(prefix="anatomy-prerender-") as folder:
        if kind not in KINDS:
            raise ValueError(f"nothing to prerender called {kind!r}; the kinds are {', '.join(KINDS)}")
        for name, body in service_documents(svc, number).items():
            (Path(folder) / name).write_bytes(body)
        out = subprocess.run(
            [node, "--no-warnings", str(SCRIPT), kind, folder],
            cwd=ROOT,
            capture_output=True,
            timeout=TIMEOUT_S,
            check=False,
        )
    if out.returncode != 0:
        raise RuntimeError(f"scripts/prerender.mjs {kind} failed: {out.stderr.decode(errors='replace')[-2000:]}")
    return orjson.loads(out.stdout)


def prerendered(kind: str, svc: ModelService, number: int = DEFAULT_INPUT, folder: Path = FOLDER) -> dict:
    """The kept result of `kind` for the service's weights and `number`, computed and kept when missing or stale."""
    path = folder / f"{kind}.json"
    with _lock:
        try:
            kept = orjson.loads(path.read_bytes())
            if kept.get("weights_version") == svc.version and kept.get("input") == number:
                return kept
        except (OSError, orjson.JSONDecodeError):
            pass
        doc = prerender(kind, svc, number)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".partial")
        partial.write_bytes(orjson.dumps(doc))
        partial.replace(path)  # whole or not at all, for a server reading it at the same time
        return doc


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="python -m app.prerender",
        description="Compute what the page computes for "
        "the default input, for readers without JavaScript, into bundle/prerendered/.",
    )
    p.add_argument("kinds", nargs="*", default=list(KINDS), help=f"what to prerender (default: {' '.join(KINDS)})")
    args = p.parse_args(argv)
    svc = ModelService.load()
    for kind in args.kinds:
        try:
            doc = prerendered(kind, svc)
        except (RuntimeError, ValueError, subprocess.TimeoutExpired) as e:
            print(f"anatomy: prerendering {kind} failed: {e}", file=sys.stderr)
            return 1
        print(f"prerendered {kind} for input {doc['input']} into {FOLDER.relative_to(ROOT)}/{kind}.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
