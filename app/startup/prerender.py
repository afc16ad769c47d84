"""What the page's own JavaScript computes for one input, computed ahead for the default input, so that the
server can render it for a reader without JavaScript. Each kind is a Node script, scripts/prerender-KIND.mjs,
run over the API documents computing a trace needs (the default model's program, the number words, its live
recipe, its weights), written to a temporary folder at the files the static build writes them to
(app/serving/site_paths.py `site_path`, which the scripts read through static/js/site.js sitePath), and the input's
trace as the server sends it (its compact form, at TRACE_FILE); the script prints JSON.

The result is kept in bundle/prerendered/KIND.json (not committed: `python -m app.prerender`, which
scripts/setup.sh runs after `npm run build`, writes it; `npm run build` empties bundle/, so a rebuilt page
is prerendered again). A kept file serves while its weights version and input are the service's; otherwise
`prerendered` computes it again and keeps it. Kinds today: "figures" (static/local/page_parts.js over the
served trace: the article's live figures, which app/main.py fills into the article at start-up) and
"topics" (static/local/topic_tables.js, the go-deeper pages' tables; app/routes/deeper.py)."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import orjson

from app.documents.schemas import weights_url
from app.service.live_recipe import live_body
from app.service.model_service import ModelService
from app.service.number_words import number_words_body
from app.service.program import program_body
from app.serving.delivery import weights_body
from app.serving.site_paths import site_path

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "bundle" / "prerendered"
DEFAULT_INPUT = 42  # the page's default input (app/routes/pages.py DEFAULT_INPUT, which tests hold equal)
KINDS = ("figures", "topics")
TRACE_FILE = "trace.compact"  # the input's trace as /api/trace sends it to the page (app/serving/trace_bytes.py)
TIMEOUT_S = 120
_lock = threading.Lock()


def script(kind: str) -> Path:
    path = ROOT / "scripts" / f"prerender-{kind}.mjs"
    if not path.is_file():
        raise ValueError(f"no prerender script for {kind!r} ({path.relative_to(ROOT)})")
    return path


def service_documents(svc: ModelService, number: int) -> dict[str, bytes]:
    """The documents a trace of the service's model is computed from, by their file in the static build, and
    the served trace of `number`."""
    return {site_path("/api/program"): program_body(svc), site_path("/api/live"): live_body(svc),
            site_path("/api/numbers"): number_words_body(),
            site_path(weights_url(svc.name), binary=True): weights_body(svc.params, svc.version, binary=True),
            TRACE_FILE: svc.trace_sync(number).compact}


def prerender(kind: str, svc: ModelService, number: int = DEFAULT_INPUT) -> dict:
    """Run scripts/prerender-KIND.mjs for `number` over the service's documents; its JSON."""
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("prerendering needs Node (node is not on the PATH)")
    with tempfile.TemporaryDirectory(prefix="anatomy-prerender-") as folder:
        for path, body in service_documents(svc, number).items():
            target = Path(folder) / path.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(body)
        out = subprocess.run([node, "--no-warnings", str(script(kind)), folder, str(number)], cwd=ROOT,
                             capture_output=True, timeout=TIMEOUT_S, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"prerender-{kind}.mjs failed: {out.stderr.decode(errors='replace')[-2000:]}")
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
    p = argparse.ArgumentParser(prog="python -m app.prerender", description="Compute what the page computes for "
                                "the default input, for readers without JavaScript, into bundle/prerendered/.")
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
