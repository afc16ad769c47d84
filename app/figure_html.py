"""Each figure's data as HTML, rendered on the server into the article's <figure data-figure=NAME>, so
that every figure reads as tables without JavaScript; static/js/figures.js then draws the charts into
the figure's empty `.chart-slot`s (the tables stay, below or folded under the chart).

One template per figure in templates/figures/ (the research desk's four share research.html); the
data is exactly what /api/figures/NAME serves, and the beam search's what /api/beam serves.
"""

from __future__ import annotations

import json
import re
import threading

from jinja2 import Environment

from app import figure_routes

# a whole figure, or with data-part one part of a research figure (its chart and its folded data)
PLACEHOLDER = re.compile(r'<figure data-figure="([a-z0-9-]+)"(?: data-part="[a-z0-9_]+")?></figure>')
WITH_PART = re.compile(r'<figure data-figure="([a-z0-9-]+)"(?: data-part="([a-z0-9_]+)")?></figure>')
PARTIAL = re.compile(r'<figure data-partial="([a-z0-9-]+)"></figure>')  # replaced whole: figure-1, attention-by-word

_cache: dict[str, tuple[bytes, str]] = {}
_lock = threading.Lock()


def shade_paths(pattern: list[list[float]], cell: float, left: float, top: float,
                levels: int = 20) -> list[tuple[str, str]]:
    """A matrix of weights in 0…1 as SVG paths, one per shade (the weight rounded to 1/levels): (opacity, d).
    One path per shade keeps a gallery of 24 pictures small; the exact weights are in the figure's data."""
    shades: dict[int, list[str]] = {}
    for r, row in enumerate(pattern):
        for c, w in enumerate(row):
            level = round(w * levels)
            if level:
                x, y = left + cell * c, top + cell * r
                shades.setdefault(level, []).append(f"M{x:g} {y:g}h{cell:g}v{cell:g}h-{cell:g}z")
    return [(f"{level / levels:g}", "".join(d)) for level, d in sorted(shades.items())]


def template_name(name: str) -> str:
    return "figures/research.html" if name in figure_routes.RESEARCH else f"figures/{name}.html"


def render(env: Environment, name: str, data: dict) -> str:
    return env.get_template(template_name(name)).render(d=data, b=data, name=name)


def figure_body(state, name: str) -> bytes | None:
    """The figure's JSON document as /api/figures/NAME sends it (None for a name with no data)."""
    bodies: dict[str, bytes] = getattr(state, "figure_bodies", {})
    if name in bodies:
        return bodies[name]
    if name in figure_routes.RESEARCH:
        return figure_routes.research_body(name)
    return None


def figure_html(env: Environment, state, name: str) -> str | None:
    """The inside of one figure, rendered once per version of its data."""
    body = figure_body(state, name)
    if body is None:
        return None
    with _lock:
        hit = _cache.get(name)
        if hit and hit[0] == body:
            return hit[1]
    html = render(env, name, json.loads(body)["data"])
    with _lock:
        _cache[name] = (body, html)
    return html


def one_part(inner: str, part: str) -> str | None:
    """The rendered research figure's part between its <!-- part:NAME --> marks (None if it has none)."""
    m = re.search(rf"<!-- part:{re.escape(part)} -->(.*?)<!-- /part:{re.escape(part)} -->", inner, re.S)
    return m.group(1) if m else None


def fill(fragment: str, rendered: dict[str, str]) -> str:
    """Each empty <figure data-figure=NAME> with its rendered inside, marked data-server; with
    data-part=PART, only that part of it."""
    def sub(m: re.Match) -> str:
        name, part = m.group(1), m.group(2)
        inner = rendered.get(name)
        if inner is not None and part:
            inner = one_part(inner, part)
            return m.group(0) if inner is None else (
                f'<figure data-figure="{name}" data-part="{part}" data-server="true">{inner}</figure>')
        return m.group(0) if inner is None else f'<figure data-figure="{name}" data-server="true">{inner}</figure>'

    return WITH_PART.sub(sub, fragment)


def fill_partials(fragment: str, rendered: dict[str, str]) -> str:
    """Each <figure data-partial=NAME></figure> replaced by its rendered partial (a whole element)."""
    return PARTIAL.sub(lambda m: rendered.get(m.group(1), m.group(0)), fragment)
