"""What the page shows for a served trace — the article's live figures and the stage's scene — computed by
the page's own code (static/local/page_parts.js) under Node, over the documents the app serves: the one
definition of every per-input rule. Tests read the figures from here and check them against numpy.

    page_parts(client, [PageRequest("731015"), PageRequest("42", model="modern", ablate="dec.1.cross")])
      → [{"trace": the JSON form, "derived": …, "scene": …}, …]
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

import orjson

ROOT = Path(__file__).resolve().parents[1]
COMPACT = "application/vnd.anatomy.trace"


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
    with tempfile.TemporaryDirectory() as scratch:
        folder, index, cases, traces = Path(scratch), {}, [], []

        def keep(url: str, accept: str = "application/json") -> None:
            if url not in index:
                index[url] = f"d{len(index)}"
                (folder / index[url]).write_bytes(_get(client, url, accept))

        for r in requests:
            trace_url = f"/api/trace?{r.query()}"
            keep(trace_url, COMPACT)
            head = orjson.loads(_get(client, trace_url))
            traces.append(head)
            n, m, name = len(head["source_tokens"]), len(head["target_tokens"]), head["model"]
            keep("/api/live" + (f"?{urlencode({'model': r.model})}" if r.model else ""))
            keep(f"/site/scene/{name}/{n}.json.gz", "application/gzip")
            keep(f"/site/scene/{name}/{n}-{m}.diff.json.gz", "application/gzip")
            cases.append({"trace": trace_url, "model": r.model})
        out = folder / "out.json"
        job = {"folder": str(folder), "index": index, "cases": cases, "out": str(out)}
        run = subprocess.run(["node", "--no-warnings", str(ROOT / "tests" / "page_parts.mjs")], input=json.dumps(job),
                             capture_output=True, text=True, timeout=300, cwd=ROOT)
        assert run.returncode == 0, run.stderr[-3000:]
        computed = json.loads(out.read_text())["cases"]
    return [{"trace": t, **parts} for t, parts in zip(traces, computed, strict=True)]
