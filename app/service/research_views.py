"""The research desk as data: the view files `python -m research` writes (research/views.py documents
their shape), read from a configured folder; the app never imports research/.

The folder is `ANATOMY_RESEARCH_VIEWS` (default: research/results/views beside the app). Each file
`<name>.json` is the figure `research-<name>` (the names are listed at start-up: a new file needs a
restart); a file is re-read when it changes, so results written while the server runs appear without a
restart, and a missing or unreadable file is served as "not available" with the reason, never with
made-up numbers.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import markdown
from markdown.treeprocessors import Treeprocessor

from app.service.shipped import MANIFEST, recorded, shown_name, unreadable
from app.settings import settings

DEFAULT = Path(__file__).resolve().parents[2] / "research" / "results" / "views"
PREFIX = "research-"
VIEW_VERSION = 1  # research/views.py VIEW_VERSION: the shape this module reads
SECTIONS = ("claim", "hypothesis", "design")


def folder() -> Path:
    return settings.research_views or DEFAULT


def names() -> dict[str, str]:
    """Figure name -> view name, for every view file in the folder; in the shipped folder also every view
    recorded in app/service/shipped.sha256, so a view file gone is a figure "not available", not no figure."""
    stems = {p.stem for p in folder().glob("*.json")}
    if folder() == DEFAULT and MANIFEST.is_file():
        stems |= {Path(p).stem for p in recorded() if Path(p).parent == Path("research/results/views")}
    return {PREFIX + stem: stem for stem in sorted(stems)}


def stamp() -> tuple:
    """The folder and each view file's size and time: what a kept page showing the views must match."""
    out = []
    for stem in names().values():
        try:
            st = (folder() / f"{stem}.json").stat()
            out.append((stem, st.st_size, st.st_mtime_ns))
        except OSError:
            out.append((stem, None, None))
    return (str(folder()), tuple(out))


def outside_manifest() -> bool:
    """Whether the views come from a folder ANATOMY_RESEARCH_VIEWS names, which no checksum covers."""
    return folder() != DEFAULT


class _SafeLinks(Treeprocessor):
    """Links and images only to this site or over http(s): a view file may come from outside the manifest."""

    def run(self, root):
        for el in root.iter():
            for attr in ("href", "src"):
                url = el.get(attr)
                if url is not None and ":" in url.split("/")[0] and not url.startswith(("http:", "https:")):
                    del el.attrib[attr]


def _html(text: str) -> str:
    """A section's Markdown as HTML with any raw HTML in it escaped (shown as text, never run or obeyed: a
    `<meta http-equiv="refresh">` in a view file redirected the reader) and no link but http(s) or this site's."""
    if not text:
        return ""
    md = markdown.Markdown(extensions=["tables"])
    md.preprocessors.deregister("html_block")
    md.inlinePatterns.deregister("html")
    md.treeprocessors.register(_SafeLinks(md), "safe_links", 0)
    return md.convert(text)


def page_data(view: dict) -> dict:
    """A view file as the figure's data: record sections as HTML, each part's table as written."""
    if view.get("view") != VIEW_VERSION:
        raise ValueError(f"not a research view file of version {VIEW_VERSION} (research/views.py)")
    has_runs = view.get("status") == "results"
    return {
        "experiment": view["name"],
        "title": view["title"],
        "status": view["status"],
        "runs": view["runs"],
        **{f"{k}_html": _html(view.get(k, "")) for k in SECTIONS},
        "verdict_html": _html(view.get("verdict", "")) if has_runs else "",
        "command": view["command"],
        "parts": [
            {
                "experiment": p["experiment"],
                "title": p["title"],
                "status": p["status"],
                "runs": p["runs"],
                "command": p["command"],
                "verdict_html": _html(p.get("verdict", "")) if p["status"] == "results" else "",
                "columns": p["columns"],
                "rows": p["rows"],
                "chart": p["chart"],
            }
            for p in view["parts"]
        ],
    }


_cache: dict[Path, tuple[int, dict]] = {}
_lock = threading.Lock()


def read(name: str) -> dict:
    """The figure data of view `name`; a missing, half-written or foreign file gives status "not available"."""
    path = folder() / f"{name}.json"
    try:
        stamp = path.stat().st_mtime_ns
        with _lock:
            hit = _cache.get(path)
        if hit and hit[0] == stamp:
            return hit[1]
        data = page_data(json.loads(path.read_text()))
    except Exception as e:  # a half-written or missing file must not break the page, nor show a server path
        return {
            "experiment": name,
            "title": name,
            "status": "not available",
            "error": unreadable(e, shown_name(path)),
            "command": f"python -m research {name}",
            "parts": [],
        }
    with _lock:
        _cache[path] = (stamp, data)
    return data
