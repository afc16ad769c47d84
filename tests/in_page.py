"""What the page shows for a served trace — the article's live figures and the stage's scene — computed by
the page's own code (static/compute/page_parts.js) under Node, over the documents the app serves: the one
definition of every per-input rule. Tests read the figures from here and check them against numpy.

    page_parts(client, [PageRequest("731015"), PageRequest("42", model="modern", ablate="dec.1.cross")])
      → [{"trace": the JSON form, "derived": …, "scene": …}, …]
"""

from __future__ import annotations

import gzip
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

import orjson

from scene.page_scene import run_page_parts

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class PageRequest:
    input: str
    model: str = ""  # as the page asks it: "" the default model
    ablate: str = ""
    checkpoint: int | None = None

    def query(self) -> str:
        q = {"input": self.input, "ablate": self.ablate, "checkpoint": self.checkpoint, "model": self.model}
        return urlencode({k: v for k, v in q.items() if v not in ("", None)})


def _get(client, url: str, accept: str = "application/json") -> bytes:
    r = client.get(url, headers={"Accept": accept})
    assert r.status_code == 200, f"{url}: {r.status_code} {r.text[:300]}"
    return r.content


def page_parts(client, requests: list[PageRequest | str]) -> list[dict]:
    """Each request's served trace (JSON form) with the live figures and the scene the page computes."""
    requests = [PageRequest(r) if isinstance(r, str) else r for r in requests]
    documents, cases, traces = {}, [], []

    def keep(url: str) -> None:  # a structure's .gz document handed over as its JSON (the script gzips it)
        if url not in documents:
            body = _get(client, url, "application/gzip" if url.endswith(".gz") else "application/json")
            documents[url] = orjson.loads(gzip.decompress(body) if body[:2] == b"\x1f\x8b" else body)

    for r in requests:
        head = orjson.loads(_get(client, f"/api/trace?{r.query()}"))
        traces.append(head)
        n, m, name = len(head["source_tokens"]), len(head["target_tokens"]), head["model"]
        keep("/api/live" + (f"?{urlencode({'model': r.model})}" if r.model else ""))
        keep(f"/site/scene/{name}/{n}.json.gz")
        keep(f"/site/scene/{name}/{n}-{m}.diff.json.gz")
        cases.append({"trace": head, "model": r.model})
    computed = run_page_parts({"documents": documents, "cases": cases})
    return [{"trace": t, **parts} for t, parts in zip(traces, computed, strict=True)]


def node_json(script: str):
    """A module script run under Node from the project's root (it imports the page's modules by path and
    prints one JSON value): that value."""
    run = subprocess.run(
        ["node", "--no-warnings", "--input-type=module", "-e", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout)


def node_script(script: str, folder: Path, timeout: int = 120):
    """One of the tests' Node scripts (tests/<script>) run over the documents written into `folder`: the JSON
    value it prints."""
    run = subprocess.run(
        ["node", "--no-warnings", str(ROOT / "tests" / script), str(folder)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout)
