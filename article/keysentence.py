"""Each step's key sentence, marked in its rendered HTML for presenter mode (static/js/page/present.js).

The sentence is the article's own, never a second copy: a sentence the author wraps in
`<span class="key-sentence">…</span>` in the step's Markdown, or else the first sentence of the step's first
paragraph of prose (a paragraph that is wholly an aside in italics is passed over; one that opens with a bold
label such as **Question.** gives the whole question after the label). The mark is a span with no style of
its own: the article reads the same; presenter mode shows that span's content in large type.
"""

from __future__ import annotations

import re

MARK = 'class="key-sentence"'
PARAGRAPH = re.compile(r"<p>(.*?)</p>", re.S)
TOKEN = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9]*)\b[^>]*?(/?)>|[^<]+", re.S)
VOID = {"br", "img", "hr", "wbr", "input"}
ASIDE = re.compile(r"^\s*<em>.*</em>\s*$", re.S)
LABEL = re.compile(r"^\s*<strong>[^<]*</strong>\s*")
# a full stop, question or exclamation mark (and a closing quote or bracket) before a space or the end
END = re.compile(r"[.?!][\"”’)]*(?=\s|$)")
ABBREVIATIONS = ("e.g.", "i.e.", "cf.", "vs.", "etc.", "Fig.", "Eq.", "§")


def sentence_end(inner: str) -> int:
    """Where the first sentence of a paragraph's inner HTML ends (an offset just after its mark), counting
    only marks outside any element and any “quotation” (a formula's, a code span's or a quotation's full stop
    does not end it); the paragraph's length when it is one sentence."""
    depth, quoted = 0, 0
    for m in TOKEN.finditer(inner):
        if m.group(2):  # a tag
            name = m.group(2).lower()
            if name not in VOID and not m.group(3):
                depth += -1 if m.group(1) else 1
            continue
        if depth:
            continue
        text = m.group(0)
        for e in END.finditer(text):
            before = text[: e.start() + 1]
            if quoted + before.count("“") - before.count("”") <= 0 and not before.endswith(ABBREVIATIONS):
                return m.start() + e.end()
        quoted += text.count("“") - text.count("”")
    return len(inner)


def mark_key_sentence(html: str) -> str:
    """The step's HTML with its key sentence wrapped in a span.key-sentence (unchanged when the author marked
    one, or when it has no paragraph of prose)."""
    if MARK in html:
        return html
    for p in PARAGRAPH.finditer(html):
        inner = p.group(1)
        if not inner.strip() or ASIDE.match(inner) or inner.lstrip().startswith('<span class="arithmatex">\\['):
            continue
        label = LABEL.match(inner)
        start = label.end() if label else 0
        end = len(inner) if label else sentence_end(inner)
        marked = f"{inner[:start]}<span {MARK}>{inner[start:end]}</span>{inner[end:]}"
        return html[: p.start(1)] + marked + html[p.end(1) :]
    return html
