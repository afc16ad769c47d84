"""The desk's results as view files: what the page shows, written as data (research/results/views/).

`python -m research …` ends by writing one JSON view per page of the desk (each experiment that is not
part of a group, and each group: ablations, extrapolation, alignment, followups). The app reads these
files from a configured folder (app/service/research_views.py, `ANATOMY_RESEARCH_VIEWS`) and never imports
research/, so the page needs neither torch runs nor this package to show the desk.

A view file, `views/<name>.json`, served as the figure `research-<name>`:

    {"view": 1, "name", "title", "claim", "hypothesis", "design", "verdict", "command",   (Markdown text)
     "status": "results" | "not yet run", "runs": <count>,
     "parts": [{"experiment", "title", "command", "status", "runs", "verdict",
                "columns": [...], "rows": [[cell text, ...], ...], "chart": {...} | null}]}

Each table is rendered once, by `table()`: its cells are formatted here (article.format's formatter, the
one the page's scripts mirror) and the record's Markdown table (`markdown_table`) is the same cells.

Adding a view for another result (a new experiment, or a study outside the harness): add the
experiment to research/experiments.py and `python -m research NAME` writes its view; or call
`write_view(name, title, parts=[part(...)], ...)` from your own module with summary rows (dicts whose
cells are numbers, text, lists, or {"values", "mean", ...} seed statistics). Then place
`<figure data-figure="research-NAME"></figure>` in a step; templates/figures/research.html draws it.
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Any

from article.format import format_number
from research.experiments import EXPERIMENTS, GROUPS
from research.harness import RESULTS
from research.results import BEGIN, END, RECORDS, load

VIEW_VERSION = 1
LABEL_KEYS = ("study", "variant", "words", "layer", "convention", "who", "ablated", "subset")
HIDDEN_KEYS = {"seeds", "counts", "description"}
RATES = ("monotone", "reordered", "all")


def views_dir(out: Path = RESULTS) -> Path:
    return out / "views"


# Experiments the article shows in a table of its own rather than as a desk page: the modern recipe's
# two, in content/extras.md's "what changed since 2017" (tests/model/test_modern.py checks that table).
SHOWN_ELSEWHERE = {"modern", "modern_extrapolation"}


def pages() -> list[str]:
    """One page per group and per experiment outside any group (and not shown elsewhere)."""
    grouped = {e for members in GROUPS.values() for e in members} | SHOWN_ELSEWHERE
    return [e for e in EXPERIMENTS if e not in grouped] + list(GROUPS)


# ---- the one renderer of a summary table -------------------------------------------------------


def _fmt(col: str, value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(_fmt(col, v) for v in value)
    if isinstance(value, float) and ("exact_match" in col or col in RATES):
        return format_number(value, "pct2")
    if isinstance(value, float):
        return format_number(value, "sig4")
    if isinstance(value, int) and not isinstance(value, bool):
        return format_number(value, "int")
    return format_number(value)  # None as a dash, a boolean as yes or no, text as it is


def _cell(col: str, value: Any) -> str:
    if isinstance(value, dict) and "values" in value:
        vals = [v for v in value["values"] if v is not None]
        if value.get("mean") is None:
            return "–"
        return _fmt(col, value["mean"]) + (f" ({', '.join(_fmt(col, v) for v in vals)})" if len(vals) > 1 else "")
    return _fmt(col, value)


def table(rows: list[dict]) -> dict:
    """Summary rows as {columns, rows of cell text, chart}: the chart has the first seed-statistics
    column per row (mean and each seed's value) with a label per row."""
    if not rows:
        return {"columns": [], "rows": [], "chart": None}
    columns = [c for c in rows[0] if c not in HIDDEN_KEYS]
    for r in rows[1:]:
        columns += [c for c in r if c not in HIDDEN_KEYS and c not in columns]
    cells = [[_cell(c, r.get(c)) for c in columns] for r in rows]
    metric = next(
        (
            c
            for c in columns
            for r in rows
            if isinstance(r.get(c), dict) and "values" in r[c] and r[c].get("mean") is not None
        ),
        None,
    )
    chart = None
    if metric:
        labels = [
            " · ".join(_fmt(k, r[k]) for k in LABEL_KEYS if r.get(k) is not None) or f"row {i + 1}"
            for i, r in enumerate(rows)
        ]
        stat = [r.get(metric) if isinstance(r.get(metric), dict) else {} for r in rows]
        chart = {
            "metric": metric,
            "labels": labels,
            "mean": [s.get("mean") for s in stat],
            "values": [
                [v for v in s.get("values", []) if isinstance(v, int | float) and math.isfinite(v)] for s in stat
            ],
            "series": {"variant": [r.get("variant") for r in rows], "words": [r.get("words") for r in rows]},
        }
    return {"columns": columns, "rows": cells, "chart": chart}


def markdown_table(t: dict) -> str:
    """The same table as Markdown, for the record's generated result block."""
    if not t["rows"]:
        return "_no runs yet_"
    lines = ["| " + " | ".join(t["columns"]) + " |", "|" + " --- |" * len(t["columns"])]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in t["rows"]]
    return "\n".join(lines)


# ---- view files ------------------------------------------------------------------------------


def part(experiment: str, title: str, rows: list[dict], runs: int, verdict: str = "", command: str = "") -> dict:
    return {
        "experiment": experiment,
        "title": title,
        "command": command or f"python -m research {experiment}",
        "status": "results" if runs else "not yet run",
        "runs": runs,
        "verdict": verdict if runs else "",
        **table(rows),
    }


def make_view(
    name: str,
    title: str,
    parts: list[dict],
    claim: str = "",
    hypothesis: str = "",
    design: str = "",
    verdict: str = "",
    command: str = "",
) -> dict:
    runs = sum(p["runs"] for p in parts)
    return {
        "view": VIEW_VERSION,
        "name": name,
        "title": title,
        "claim": claim,
        "hypothesis": hypothesis,
        "design": design,
        "verdict": verdict if runs else "",
        "command": command or f"python -m research {name}",
        "status": "results" if runs else "not yet run",
        "runs": runs,
        "parts": parts,
    }


def write_view(name: str, title: str, parts: list[dict], folder: Path | None = None, **sections: str) -> Path:
    """Write views/<name>.json atomically (a reader never sees half a file)."""
    folder = folder or views_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path, tmp = folder / f"{name}.json", folder / f".{name}.json.tmp"
    tmp.write_text(json.dumps(make_view(name, title, parts, **sections), indent=1, ensure_ascii=False) + "\n")
    os.replace(tmp, path)
    return path


def desk_view(name: str, out: Path = RESULTS, records: Path = RECORDS) -> dict:
    """A desk page's view from its results and records (research.results.load)."""
    rec = load(name, out, records)
    members = rec.get("parts") or [rec]
    parts = [
        part(p["experiment"], p["title"], p["summary"], len(p["runs"]), p.get("verdict", ""), p["command"])
        for p in members
    ]
    return make_view(
        name,
        rec["title"],
        parts,
        **{k: rec.get(k, "") for k in ("claim", "hypothesis", "design", "verdict", "command")},
    )


def write_desk_views(out: Path = RESULTS, records: Path = RECORDS, names: list[str] | None = None) -> list[Path]:
    written = []
    for name in names or pages():
        v = desk_view(name, out, records)
        written.append(
            write_view(
                name,
                v.pop("title"),
                v.pop("parts"),
                views_dir(out),
                **{k: v[k] for k in ("claim", "hypothesis", "design", "verdict", "command")},
            )
        )
    return written


# ---- the result table written into a record -------------------------------------------------


def render_table(rows: list[dict]) -> str:
    """A Markdown table of summary rows: the page's table (`table`), cell for cell."""
    return markdown_table(table(rows))


def write_result_block(experiment: str, rows: list[dict], path: Path) -> None:
    """Replace the record's generated result table (between the markers) with the current one."""
    block = f"{BEGIN}\n{render_table(rows)}\n{END}"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = path.read_text() if path.exists() else f"# {experiment}\n\n## Result\n\n{BEGIN}\n{END}\n"
    if BEGIN not in text:
        text = text.rstrip() + f"\n\n## Result\n\n{BEGIN}\n{END}\n"
    path.write_text(re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _: block, text, flags=re.S))
