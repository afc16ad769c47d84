"""The static build (issue 25): the app rendered into a folder that a plain file server serves.

`site_path` is where an API document lies in that folder; static/js/site.js `sitePath` is the same
rule (tests/test_site.py holds them equal): /api/a/b?y=2&x=1 → /site/api/a/b/x=1&y=2.json, the query's
parameters sorted by name (none: index), .bin for a binary body (the weights as safetensors)."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit


def site_path(url: str, binary: bool = False) -> str:
    """The file of the static folder that holds the answer to `url` (a path of this site, with its query)."""
    parts = urlsplit(url)
    params = sorted(parse_qsl(parts.query, keep_blank_values=True), key=lambda kv: kv[0])
    name = "&".join(f"{k}={v}" for k, v in params) if params else "index"
    return f"/site{parts.path.rstrip('/')}/{name}{'.bin' if binary else '.json'}"
