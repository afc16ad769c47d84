"""The tour: what each of the article's steps shows on the stage, read from the front matter of
content/steps/NN-slug.md — the one place where a step is declared (STYLE: Transformer Explainer's
one typed array). The scene (scene/layout.py) turns it into blocks lit and a camera view; the
article (app/documents/content.py) reads the same files for the text.

Front matter keys for the stage:
  subject    globs of block ids the text talks about: lit, and framed by the step's camera view;
             `{last}` stands for the last layer's index, so a model of another depth reads right
  also       globs lit but not framed (context: the input a product starts from, a lit table)
  view       `overview` shows the whole machine instead of framing the subject
  angle      [azimuth, elevation] in radians, when the default angle for the subject's tower won't do
  animation  the name of the step's animation (scene/layout.py ANIMATIONS), `none` by default
  marks      cells a step points at in a block, one per row: [{block, columns, ring}] where `columns` names
             the node whose r-th value is row r's column (an ArgMax: the piece greedy decoding picks); a
             phone's window of a wide block is placed around them (scene/windows.py), and the stage rings
             them unless `ring: false` (the piece written is its row's largest, which cells.js outlines)
  overlay    a drawing the stage adds beside a block, by name: `loss` (step 20, static/stage/lossview.js)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

STEPS_DIR = Path(__file__).resolve().parent.parent / "content" / "steps"
STEP_FILE = re.compile(r"^(\d\d)-([a-z0-9-]+)\.md$")
FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.S)


def split_front_matter(text: str) -> tuple[dict, str]:
    """YAML front matter between `---` lines, and the text after it."""
    m = FRONT_MATTER.match(text)
    if not m:
        return {}, text
    meta = yaml.safe_load(m.group(1)) or {}
    return (meta if isinstance(meta, dict) else {}), text[m.end() :]


def _strings(value: object) -> list[str]:
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


@dataclass
class TourStep:
    step: int
    slug: str
    section: str
    title: str
    subject: list[str] = field(default_factory=list)
    also: list[str] = field(default_factory=list)
    view: str = "subject"  # or "overview"
    angle: tuple[float, float] | None = None
    animation: str = "none"
    topic: str = ""
    marks: list[dict] = field(default_factory=list)
    overlay: str = ""

    @classmethod
    def from_front_matter(cls, meta: dict, number: int, slug: str) -> TourStep:
        angle = meta.get("angle")
        view = str(meta.get("view", "subject"))
        if view not in ("subject", "overview"):
            raise ValueError(f"step {number}: view must be 'subject' or 'overview', not {view!r}")
        return cls(
            step=int(meta.get("step", number)),
            slug=slug,
            section=str(meta.get("section", "")),
            title=str(meta.get("title", slug)),
            subject=_strings(meta.get("subject")),
            also=_strings(meta.get("also")),
            view=view,
            angle=(float(angle[0]), float(angle[1])) if angle else None,
            animation=str(meta.get("animation", "none")),
            topic=str(meta.get("topic", "")),
            marks=[
                {"block": str(m["block"]), "columns": str(m["columns"]), "ring": bool(m.get("ring", True))}
                for m in meta.get("marks") or []
            ],
            overlay=str(meta.get("overlay", "")),
        )


def read_step_files(folder: Path = STEPS_DIR) -> list[tuple[TourStep, str]]:
    """Every step file: its tour entry and its Markdown body, in step order."""
    out = []
    for path in sorted(folder.glob("*.md")):
        m = STEP_FILE.match(path.name)
        if not m:
            continue
        meta, body = split_front_matter(path.read_text(encoding="utf-8"))
        out.append((TourStep.from_front_matter(meta, int(m.group(1)), m.group(2)), body))
    return sorted(out, key=lambda sb: sb[0].step)


def load_tour(folder: Path = STEPS_DIR) -> list[TourStep]:
    return [s for s, _ in read_step_files(folder)]
