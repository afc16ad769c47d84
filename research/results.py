"""Each experiment's results as data, for the page: `load(experiment) -> dict`.

The claim, hypothesis, design and verdict come from the experiment's Markdown record
(research/records/<experiment>.md, sections headed `## Claim` and so on); the runs from
research/results/<experiment>.json; the summary rows are computed from the runs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from research.experiments import EXPERIMENTS, GROUPS
from research.harness import RESULTS, read_runs, results_file

RECORDS = Path(__file__).resolve().parent / "records"
SECTIONS = ("claim", "hypothesis", "design", "result", "verdict", "command")
BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"

_STATS = {"type": "object", "required": ["values", "mean", "min", "max"]}
_NUM = {"type": ["number", "null"]}
RUN_SCHEMA = {
    "type": "object",
    "required": [
        "key",
        "experiment",
        "variant",
        "seed",
        "steps",
        "config",
        "train",
        "params",
        "wall_seconds",
        "heldout_exact_match",
        "heldout_loss",
        "heldout_perplexity",
        "exact_match_by_length",
        "heldout_correct",
        "steps_to_99",
        "curve",
    ],
    "properties": {
        "key": {"type": "string", "pattern": "^[0-9a-f]{16}$"},
        "experiment": {"type": "string"},
        "variant": {"type": "string"},
        "seed": {"type": "integer", "minimum": 1},
        "steps": {"type": "integer", "minimum": 1},
        "config": {"type": "object", "required": ["d_model", "n_heads", "d_k", "n_layers", "positional"]},
        "train": {"type": "object", "required": ["steps", "seed", "warmup", "label_smoothing"]},
        "keep": {"type": ["string", "null"]},
        "params": {"type": "integer", "minimum": 1},
        "wall_seconds": {"type": "number", "minimum": 0},
        "heldout_exact_match": {"type": "number", "minimum": 0, "maximum": 1},
        "heldout_loss": {"type": "number", "minimum": 0},
        "heldout_perplexity": {"type": "number", "minimum": 1},
        "exact_match_by_length": {
            "type": "object",
            "additionalProperties": {"type": "object", "required": ["n", "correct", "exact_match"]},
        },
        "heldout_correct": {"type": "string", "pattern": "^[01]+$"},
        "steps_to_99": {"type": ["integer", "null"]},
        "curve": {"type": "array", "items": {"type": "object", "required": ["step", "heldout_exact_match", "loss"]}},
        "analysis": {"type": "object"},
    },
}
FILE_SCHEMA = {
    "type": "object",
    "required": ["experiment", "runs"],
    "properties": {"experiment": {"type": "string"}, "runs": {"type": "array", "items": RUN_SCHEMA}},
}


def record_path(experiment: str, records: Path = RECORDS) -> Path:
    return records / f"{experiment}.md"


def sections(markdown: str) -> dict[str, str]:
    """`## Heading` sections of a record, keyed by the heading's first word in lower case."""
    out, title = {}, re.search(r"^# (.+)$", markdown, re.M)
    parts = re.split(r"^## +(.+)$", markdown, flags=re.M)
    for heading, body in zip(parts[1::2], parts[2::2]):
        out[heading.split()[0].lower()] = body.strip()
    out["title"] = title.group(1).strip() if title else ""
    return out


def load(experiment: str, out: Path = RESULTS, records: Path = RECORDS) -> dict:
    """{experiment, title, claim, hypothesis, design, verdict, command, runs, summary}."""
    if experiment in GROUPS:
        parts = [load(p, out, records) for p in GROUPS[experiment]]
        return {
            "experiment": experiment,
            "title": "Follow-ups",
            "parts": parts,
            **{
                k: "\n\n".join(f"{p['title']}: {p[k]}" for p in parts)
                for k in ("claim", "hypothesis", "design", "verdict")
            },
            "command": f"python -m research {experiment}",
            "runs": [r for p in parts for r in p["runs"]],
            "summary": [{"study": p["experiment"], **row} for p in parts for row in p["summary"]],
        }
    if experiment not in EXPERIMENTS:
        raise KeyError(f"unknown experiment {experiment!r}; known: {sorted(EXPERIMENTS) + sorted(GROUPS)}")
    path = record_path(experiment, records)
    text = sections(path.read_text()) if path.exists() else {}
    runs = read_runs(results_file(out, experiment))
    return {
        "experiment": experiment,
        "title": text.get("title", experiment),
        **{k: _strip_block(text.get(k, "")) for k in ("claim", "hypothesis", "design", "verdict")},
        "command": _command(text.get("command", ""), experiment),
        "runs": runs,
        "summary": EXPERIMENTS[experiment].summarise(runs),
    }


def _strip_block(text: str) -> str:
    return re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), "", text, flags=re.S).strip()


def _command(text: str, experiment: str) -> str:
    found = re.search(r"`(python -m research[^`]*)`", text)
    return found.group(1) if found else f"python -m research {experiment}"


def validate(path: Path) -> None:
    """Raise jsonschema.ValidationError if a results file does not match the schema."""
    import jsonschema

    jsonschema.validate(json.loads(path.read_text()), FILE_SCHEMA)
