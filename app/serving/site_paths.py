"""Where the static build (app/site/build.py) keeps the answer to each URL of the API, one rule in its own module so
that what reads or writes such a folder (the build, app/startup/prerender.py) needs nothing else of the build. Its
JavaScript twin is static/js/site.js `sitePath` (tests/site/test_site.py holds them equal)."""

from __future__ import annotations

from urllib.parse import parse_qsl, quote, urlsplit

# What a URL's path keeps as it is (the WHATWG URL standard's path percent-encode set is the rest of
# ASCII: controls, space, " # < > ? ` { }, and every other character, as UTF-8)
URL_PATH_SAFE = "".join(c for c in map(chr, range(0x21, 0x7F)) if c not in '"#<>?`{}')


def site_path(url: str, binary: bool = False) -> str:
    """The file of the static folder that holds the answer to `url` (a path of this site, with its query)."""
    parts = urlsplit(url)
    # sorted as JavaScript compares strings (by UTF-16 code unit), the path percent-encoded as a URL's is
    params = sorted(parse_qsl(parts.query, keep_blank_values=True), key=lambda kv: kv[0].encode("utf-16-be"))
    name = "&".join(f"{k}={v}" for k, v in params) if params else "index"
    return f"/site{quote(parts.path, safe=URL_PATH_SAFE).rstrip('/')}/{name}{'.bin' if binary else '.json'}"
