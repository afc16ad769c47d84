"""Steps 1–25 read as a first explanation: short, every term explained where it is first used.

Read from the page a reader gets ("/"), not from the markdown: what counts is what a reader sees. The
text of a step is its section's text outside formulas (the arithmatex spans KaTeX draws), scripts and
styles; folded text is the content of a <details> beneath its <summary> ("More", "From the desk", the
desk's data), which a reader opens only on purpose.

- The path's length: at most 5 000 words of steps 1–25 show with nothing unfolded (11 881 before the
  path was cut; the research desk, steps 26–29, is not counted).
- The glossary: each of the terms below is marked `<dfn>` where it is explained, in text a reader sees
  unfolded, and no use of it comes earlier in steps 1–25 — visible or folded, since a reader who opens a
  fold should not meet a term the article explains only later. Step titles and the "Go deeper" links (the
  names of topic pages) are left out: a title names what the step then explains.
- The dictionary picture of attention (a query looked up against keys, a blend of values) comes before the
  first formula of attention."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

import pytest

PATH_STEPS = range(1, 26)
MOST_WORDS = 5_000

# term → pattern of its uses (case-insensitive unless the pattern says otherwise)
TERMS = {
    "token": r"\btokens?\b",
    "vector": r"\bvectors?\b",
    "matrix": r"\bmatri(?:x|ces)\b",
    "embedding": r"\bembeddings?\b",
    "attention": r"\battention\b",
    "encoder": r"\bencoders?\b",
    "decoder": r"\bdecoders?\b",
    "layer": r"\blayers?\b",
    "feed-forward network": r"\bfeed-forward\b",
    "weight": r"\bweights?\b",
    "head": r"\bheads?\b",
    "cross-attention": r"\bcross-attention\b",
    "training": r"\btraining\b",
    "probability": r"\bprobabilit(?:y|ies)\b",
    "batch": r"\bbatch(?:es)?\b",
    "vocabulary": r"\bvocabular(?:y|ies)\b",
    "parameter": r"\bparameters?\b",
    "gradient": r"\bgradients?\b",
    "recurrent network": r"\b(?:recurrent|RNNs?)\b",
    "end marker": r"\bend marker\b",
    "start marker": r"\bstart marker\b",
    "d_model": r"\bd_model\b",
    "positional encoding": r"\bpositional encodings?\b",
    "dropout": r"\bdropout\b",
    "BLEU": r"(?-i:\bBLEU\b)",
    "self-attention": r"\bself-attention\b",
    "query": r"\bquer(?:y|ies)\b",
    "bias": r"\bbias(?:es)?\b",
    "d_k": r"\bd_k\b",
    "softmax": r"\bsoftmax\b",
    "held-out": r"\bheld-out\b",
    "dot product": r"\bdot products?\b",
    "sub-layer": r"\bsub-layers?\b",
    "loss": r"\blosse?s?\b",
    "exact match": r"\bexact match\b",
    "residual connection": r"\bresidual\b",
    "layer normalisation": r"(?-i:\bLayerNorms?\b)|\blayer normali[sz]ation\b",
    "learning rate": r"\blearning rates?\b",
    "warm-up": r"\bwarm-up\b",
    "ReLU": r"(?-i:\bReLU\b)",
    "convolution": r"\bconvolutions?\b",
    "perplexity": r"\bperplexit(?:y|ies)\b",
    "teacher forcing": r"\bteacher[- ]forc\w*",
    "greedy decoding": r"\bgreedy\b",
    "mask": r"\bmask(?:s|ed|ing)?\b",
    "logit": r"\blogits?\b",
    "label smoothing": r"\blabel smoothing\b",
    "beam search": r"\bbeams?\b",
    "autoregressive": r"\bautoregressi\w*",
    "cross-entropy": r"\bcross-entropy\b",
    "Adam": r"(?-i:\bAdam\b)",
    "FLOPs": r"(?-i:\bFLOPs?\b)",
}

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
UNREAD = {"script", "style", "template", "svg", "math"}  # not text a reader reads as prose
CODE = "code"  # read, and counted, but not where a term of the glossary is used


@dataclass
class Step:
    number: int
    text: str = ""  # all prose, visible and folded, in reading order
    visible_words: int = 0
    folded: list[tuple[int, int]] = field(default_factory=list)  # spans of `text` inside a fold
    dfns: list[tuple[int, str, bool]] = field(default_factory=list)  # (position, text, inside a fold)
    titles: list[tuple[int, int]] = field(default_factory=list)  # spans of headings and topic links


class Reader(HTMLParser):
    """Walks the page's step sections, keeping each one's prose with where it is folded and defined."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.steps: dict[int, Step] = {}
        self.open: list[tuple[str, dict]] = []  # elements open inside the current step
        self.step: Step | None = None
        self.dfn_at: int | None = None

    def _flags(self):
        tags = [t for t, _ in self.open]
        classes = [set((a.get("class") or "").split()) for _, a in self.open]
        unread = (
            any(t in UNREAD for t in tags)
            or any("arithmatex" in c or "katex" in c for c in classes)
            or any("hidden" in a for _, a in self.open)  # e.g. the notes on the modern model, in the 2017 view
        )
        # a fold's own <summary> is visible; everything else inside the <details> is folded
        folded = any(t == "details" and tags[i + 1 : i + 2] != ["summary"] for i, t in enumerate(tags))
        title = any(t in ("h2", "h3") for t in tags) or any("step-section" in c or "go-deeper" in c for c in classes)
        return unread, folded, title

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if self.step is None:
            if tag == "section" and re.fullmatch(r"step-\d+", a.get("id") or ""):
                n = int(a["id"][5:])
                self.step = self.steps.setdefault(n, Step(n))
                self.open = [(tag, a)]
            return
        if tag in VOID:
            return
        self.open.append((tag, a))
        if tag == "dfn":
            self.dfn_at = len(self.step.text)

    def handle_endtag(self, tag):
        if self.step is None or tag in VOID:
            return
        while self.open:
            t, _ = self.open.pop()
            if t == "dfn" and self.dfn_at is not None:
                unread, folded, _ = self._flags()
                self.step.dfns.append((self.dfn_at, self.step.text[self.dfn_at :], folded))
                self.dfn_at = None
            if t == tag:
                break
        if not self.open:
            self.step = None

    def handle_data(self, data):
        if self.step is None:
            return
        unread, folded, title = self._flags()
        if unread:
            return
        if not folded:
            self.step.visible_words += len(re.findall(r"[^\W_][\w'’.,-]*", data))
        if any(t == CODE for t, _ in self.open):
            return
        start = len(self.step.text)
        self.step.text += data
        end = len(self.step.text)
        if folded:
            self.step.folded.append((start, end))
        if title:
            self.step.titles.append((start, end))


@pytest.fixture(scope="module")
def steps(client) -> dict[int, Step]:
    reader = Reader()
    reader.feed(client.get("/").text)
    assert set(PATH_STEPS) <= set(reader.steps), sorted(reader.steps)
    return reader.steps


def test_the_path_shows_at_most_five_thousand_words_unfolded(steps):
    words = {n: steps[n].visible_words for n in PATH_STEPS}
    assert sum(words.values()) <= MOST_WORDS, f"steps 1–25 show {sum(words.values())} words unfolded: {words}"
    assert all(w >= 60 for w in words.values()), words  # each step still explains something


def inside(position: int, spans: list[tuple[int, int]]) -> bool:
    return any(a <= position < b for a, b in spans)


@pytest.mark.parametrize("term", sorted(TERMS))
def test_each_term_is_defined_where_it_is_first_used(steps, term):
    pattern = re.compile(TERMS[term], re.I)
    defined = uses = None
    for n in PATH_STEPS:
        s = steps[n]
        for at, text, folded in s.dfns:
            if defined is None and pattern.search(text):
                defined = (n, at, folded, text)
        for m in pattern.finditer(s.text):
            if inside(m.start(), s.titles):
                continue
            if uses is None:
                context = s.text[max(0, m.start() - 60) : m.end() + 30].replace("\n", " ")
                uses = (n, m.start(), context)
        if defined and uses:
            break
    assert defined, f"no <dfn> for {term!r} in steps 1–25"
    n, at, folded, text = defined
    assert not folded, f"{term!r} is defined inside a fold of step {n}"
    assert uses is not None
    first_step, first_at, context = uses
    assert (first_step, first_at) >= (n, at), (
        f"{term!r} is used in step {first_step} ({context!r}) before its <dfn> in step {n} ({text!r})"
    )


def test_the_dictionary_picture_comes_before_the_first_formula_of_attention(client):
    page = client.get("/").text
    page = re.sub(r"<aside class=\"model-step-note\"[^>]* hidden>.*?</aside>", "", page, flags=re.S)  # not shown
    sections = {int(m.group(1)): m.group(0) for m in re.finditer(r'<section id="step-(\d+)".*?</section>', page, re.S)}
    first_formula = next(n for n in PATH_STEPS if "XW^Q" in sections[n] or "W^Q" in sections[n])
    before = "".join(sections[n] for n in PATH_STEPS if n < first_formula)
    at = sections[first_formula]
    at = at[: at.index("W^Q")]
    prose = re.sub(r"<details.*?</details>", "", before + at, flags=re.S)  # what a reader sees unfolded
    assert re.search(r"dictionary", prose, re.I), "no dictionary picture before the first attention formula"
    assert (
        re.search(r"\bquer(?:y|ies)\b", prose) and re.search(r"\bkeys?\b", prose) and re.search(r"\bvalues?\b", prose)
    )
