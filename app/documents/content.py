"""The article and its companions, read from content/ once at start-up and rendered to HTML.

content/steps/NN-slug.md   one file per step: YAML front matter (step, section, title, topic, and the
                           stage's tour: see article/tour.py), then Markdown with $…$ / $$…$$ formulas
content/topics/SLUG.md     the "go deeper" pages (front matter: title, blocks)
content/references.tsv     n, text          -> the references list, <li id="ref-N">
content/facts.tsv          id, value, what, source  -> the fact ledger
content/extras.md          what follows the references (optional)
content/modern.md          per step, where its text is not true of the modern miniature (?model=modern)

Formulas are left for KaTeX's auto-render in the browser (arithmatex wraps them in \\( \\) and
\\[ \\]). `data-live` slots are pre-filled with the start-up values, so the page reads right
before any script runs; static/js/page.js refreshes them for each input.
"""

from __future__ import annotations

import csv
import html
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import markdown

from article.format import format_number
from article.keysentence import mark_key_sentence
from article.tour import read_step_files, split_front_matter

CONTENT = Path(__file__).resolve().parents[2] / "content"
SLUG = re.compile(r"^[a-z0-9-]+$")
LIVE_SPAN = re.compile(r'(<span\b[^>]*\bdata-live="([^"]+)"[^>]*>)(.*?)(</span>)', re.S)
FORMAT_ATTR = re.compile(r'\bdata-format="([^"]+)"')
FACT_ID = re.compile(r'\bdata-fact="([^"]+)"')
CITE = re.compile(r'class="cite" href="#ref-(\d+)"')
FACT_SPAN = re.compile(r'<span\b(?![^>]*\btabindex=)([^>]*\bdata-fact="[^"]+")')

EXTENSIONS = ["tables", "attr_list", "md_in_html", "fenced_code", "footnotes", "pymdownx.arithmatex"]
EXTENSION_CONFIGS = {"pymdownx.arithmatex": {"generic": True}}


@dataclass
class Step:
    number: int
    slug: str
    section: str
    title: str
    topic: str
    html: str


@dataclass
class Topic:
    slug: str
    title: str
    blocks: list[str]
    html: str


@dataclass
class Fact:
    """One entry of the fact ledger (content/facts.tsv), as /ledger shows it and /api/facts sends it."""

    id: str
    value: str
    what: str
    source: str = field(metadata={"description": "the reference and the sentence or table row quoted"})


@dataclass
class Content:
    steps: list[Step] = field(default_factory=list)
    topics: dict[str, Topic] = field(default_factory=dict)
    references: list[tuple[str, str]] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    extras_html: str = ""
    unused_facts: dict[str, str] = field(default_factory=dict)  # id -> why the article does not quote it
    model_notes: dict[int, str] = field(default_factory=dict)  # step -> where its text is not the modern model's

    def references_in(self, fragment: str) -> list[tuple[str, str]]:
        """The references a fragment cites (`href="#ref-N"`), in the list's order: a topic page's own list."""
        cited = set(CITE.findall(fragment))
        return [(n, text) for n, text in self.references if n in cited]

    @cached_property  # the content never changes after start-up; /ledger asks on every request
    def fact_uses(self) -> dict[str, list[tuple[str, str]]]:
        """Where the article quotes each ledger entry: id -> [(link, label)], in reading order."""
        uses: dict[str, list[tuple[str, str]]] = {}
        places = [(f"/#step-{s.number}", f"step {s.number}", s.html) for s in self.steps]
        places.append(("/#extras", "after the steps", self.extras_html))
        places += [(f"/topics/{t.slug}", t.title, t.html) for t in self.topics.values()]
        for link, label, text in places:
            for fid in dict.fromkeys(FACT_ID.findall(text)):
                uses.setdefault(fid, []).append((link, label))
        return uses


def fill_live(text: str, values: dict) -> str:
    """Put each known value into its empty-or-stale `data-live` slot (escaped)."""

    def sub(m: re.Match) -> str:
        key = m.group(2)
        if key not in values:
            return m.group(0)
        fmt = FORMAT_ATTR.search(m.group(1))
        return m.group(1) + html.escape(format_number(values[key], fmt.group(1) if fmt else "text")) + m.group(4)

    return LIVE_SPAN.sub(sub, text)


class Renderer:
    def __init__(self) -> None:
        self._md = markdown.Markdown(extensions=EXTENSIONS, extension_configs=EXTENSION_CONFIGS)

    def __call__(self, text: str) -> str:
        self._md.reset()
        out = self._md.convert(text)
        return FACT_SPAN.sub(r'<span tabindex="0"\1', out)  # facts open their ledger entry on focus


def load_steps(folder: Path, render: Renderer) -> list[Step]:
    """The article's steps, each with its key sentence marked (article/keysentence.py: presenter mode); what
    each shows on the stage is the tour's (article/tour.py), not the page's."""
    return [
        Step(
            number=s.step,
            slug=s.slug,
            section=s.section,
            title=s.title,
            topic=s.topic,
            html=mark_key_sentence(render(body)),
        )
        for s, body in read_step_files(folder)
    ]


def load_topics(folder: Path, render: Renderer) -> dict[str, Topic]:
    topics = {}
    for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
        if not SLUG.match(path.stem):
            continue
        meta, body = split_front_matter(path.read_text(encoding="utf-8"))
        blocks = meta.get("blocks") or []
        topics[path.stem] = Topic(
            path.stem,
            str(meta.get("title", path.stem.replace("-", " ").capitalize())),
            [str(b) for b in blocks] if isinstance(blocks, list) else [str(blocks)],
            render(body),
        )
    return topics


def read_tsv(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        return []
    with path.open(encoding="utf-8", newline="") as f:
        return [
            {k: (v or "").strip() for k, v in row.items() if k}
            for row in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        ]


def load_content(root: Path = CONTENT, live: dict | None = None) -> Content:
    render = Renderer()
    steps = load_steps(root / "steps", render)
    if live:
        for s in steps:
            s.html = fill_live(s.html, live)
    extras = root / "extras.md"
    return Content(
        steps=steps,
        topics=load_topics(root / "topics", render),
        references=[(r["n"], r["text"]) for r in read_tsv(root / "references.tsv") if r.get("n")],
        facts=[
            Fact(r.get("id", ""), r.get("value", ""), r.get("what", ""), r.get("source", ""))
            for r in read_tsv(root / "facts.tsv")
            if r.get("id")
        ],
        extras_html=render(split_front_matter(extras.read_text(encoding="utf-8"))[1]) if extras.is_file() else "",
        unused_facts=read_unused(root / "facts_unused.txt"),
        model_notes=read_model_notes(root / "modern.md", render),
    )


NOTE_HEADING = re.compile(r"^## Step (\d+)\s*$", re.M)


def read_model_notes(path: Path, render: Renderer) -> dict[int, str]:
    """content/modern.md: per step ("## Step N"), what its text says that the modern miniature does not do,
    shown at the top of that step while the stage draws that model."""
    if not path.is_file():
        return {}
    parts = NOTE_HEADING.split(path.read_text(encoding="utf-8"))
    return {int(n): render(body.strip()) for n, body in zip(parts[1::2], parts[2::2], strict=True)}


def read_unused(path: Path) -> dict[str, str]:
    """content/facts_unused.txt: `id<TAB>why` per line; ledger entries left out of the text on purpose."""
    if not path.is_file():
        return {}
    rows = (
        line.split("\t", 1)
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    )
    return {r[0].strip(): (r[1].strip() if len(r) > 1 else "") for r in rows}
