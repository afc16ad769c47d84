"""Issue 23, hardening for a public launch: HEAD, headers, parameters, start-up checks, health."""

from __future__ import annotations

import pytest

HEAD_PATHS = ["/", "/healthz", "/api/model", "/api/weights", "/api/facts", "/api/trace?input=42",
              "/api/trace/stream?input=42", "/api/beam?input=42", "/ledger", "/about", "/docs",
              "/api/weights?model=modern", "/api/figures/time-machine", "/static/js/page.js",
              "/vendor/three/build/three.module.js", "/openapi.json", "/api/trace?input=x", "/nowhere"]


@pytest.mark.parametrize("path", HEAD_PATHS)
def test_head_answers_as_get_does(client, path):
    """Item 4: HEAD has GET's status and headers (uptime checks use it), and no body."""
    get = client.get(path, headers={"Accept-Encoding": "identity"})
    head = client.head(path, headers={"Accept-Encoding": "identity"})
    assert head.status_code == get.status_code != 405
    assert head.content == b""
    for name in ("content-type", "etag", "cache-control", "content-security-policy"):
        assert head.headers.get(name) == get.headers.get(name), name
    if "content-length" in get.headers:
        assert head.headers["content-length"] == get.headers["content-length"]


def test_head_keeps_304_and_encoding(client):
    etag = client.get("/api/weights").headers["etag"]
    assert client.head("/api/weights", headers={"If-None-Match": etag}).status_code == 304
    br = client.head("/api/model", headers={"Accept-Encoding": "br"})
    assert br.headers.get("content-encoding") == "br" and br.content == b""
