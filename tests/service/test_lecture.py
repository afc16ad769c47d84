"""The lecture path (content/lecture.yaml, article/lecture.py), on the server: about 8 of the article's steps
for one lecture of about 50 minutes, each with a key line that carries its step's point (it names what the
step's title names, and is not a sentence about the article: no "step 7", no footnote), a question for the
room and inputs to try; the article hands the same data to the page (its #lecture-path block, which presenter
mode and the short handout read), and /lesson is the teacher's one-page plan of it, linked from the article and
the about page. The browser half: tests/page/test_classroom.py (presenter mode on the path) and
tests/page/test_handout.py (the short handout)."""

from __future__ import annotations

import html
import json
import re

import pytest

from app.documents.content import load_content
from article.lecture import load_lecture, parse_lecture
from model.parse import parse_number

LECTURE = load_lecture()
TITLES = {s.number: s.title for s in load_content().steps}
# words that say nothing of a step's subject
PLAIN = {"the", "and", "then", "each", "every", "into", "with", "from", "what", "where", "turns", "reads", "real"}


def words(text: str) -> set[str]:
    """Content words, as stems of five letters (key/keys, normalise/normalised)."""
    return {w[:5] for w in re.findall(r"[a-z]{4,}", text.lower()) if w not in PLAIN}


def test_the_path_is_about_eight_steps_of_about_fifty_minutes():
    steps = [s.step for s in LECTURE.stops]
    assert 6 <= len(steps) <= 10 and steps == sorted(set(steps)) and set(steps) <= set(TITLES)
    assert 40 <= LECTURE.minutes <= 60 and all(2 <= s.minutes <= 12 for s in LECTURE.stops)


@pytest.mark.parametrize("stop", LECTURE.stops, ids=lambda s: f"step{s.step}")
def test_each_key_line_carries_its_steps_point(stop):
    title = TITLES[stop.step]
    # one sentence that fits the projector's bar (tests/page/test_classroom.py measures it there)
    assert 60 <= len(stop.key) <= 160 and stop.key.endswith(".") and stop.key.count(". ") == 0, stop.key
    # about the model, not about the article: the issue's example was "The paper's footnote explains the
    # division of step 7."
    assert not re.search(r"\b(step|footnote|section|paper)\b", stop.key, re.I), stop.key
    assert words(stop.key) & words(title), f"step {stop.step}'s key line names nothing of its title {title!r}"
    assert stop.ask.endswith("?") and len(stop.ask) <= 160
    assert stop.tries and all(parse_number(str(n)) == n for n in stop.tries)


def test_a_bad_lecture_is_refused():
    good = {"title": "t", "stops": [{"step": 7, "minutes": 5, "key": "k.", "ask": "a?"}]}
    assert parse_lecture(good).minutes == 5
    for bad in [{"step": 30}, {"minutes": 0}, {"key": ""}]:
        with pytest.raises(ValueError):
            parse_lecture({"title": "t", "stops": [{**good["stops"][0], **bad}]})
    with pytest.raises(ValueError):  # out of order
        parse_lecture({"title": "t", "stops": [{**good["stops"][0], "step": 9}, good["stops"][0]]})


def test_the_article_hands_the_path_to_the_page_and_links_the_plan(client):
    page = client.get("/").text
    block = re.search(r'<script type="application/json" id="lecture-path">(.*?)</script>', page, re.S)
    assert block and json.loads(block.group(1)) == json.loads(json.dumps(LECTURE.as_data()))
    assert 'href="/lesson"' in page and 'id="print-lecture-handout"' in page
    assert 'href="/lesson"' in client.get("/about").text


def test_the_lesson_plan_lists_each_stop(client):
    r = client.get("/lesson")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    text = html.unescape(r.text)
    rows = re.findall(r'<tr data-step="(\d+)">(.*?)</tr>', text, re.S)
    assert [int(n) for n, _ in rows] == [s.step for s in LECTURE.stops]
    at = 0
    for (_, row), stop in zip(rows, LECTURE.stops):
        assert stop.key in row and stop.ask in row and TITLES[stop.step] in row
        assert f"{at}–{at + stop.minutes}" in row  # the minutes, running
        at += stop.minutes
        assert f'href="/?present=lecture#step-{stop.step}"' in row
        for n in stop.tries:
            assert f'href="/?input={n}#step-{stop.step}"' in row
    assert f"{LECTURE.minutes}-minute" in text
    # light and printable on one landscape page
    assert "/static/css/lesson.css" in text
    css = client.get("/static/css/lesson.css").text
    assert "size: A4 landscape" in css and "background: #fff" in css
