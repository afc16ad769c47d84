"""The classroom's presenter mode and embed view, on the server (fast, no browser): which routes another site may
frame (the embed view only: `frame-ancestors *` and no X-Frame-Options; everything else keeps refusing),
what /embed renders (only the stage, from the same partial as the article, for the state its address names,
with the server's own words for a bad value), and each step's key sentence (article/keysentence.py: the
article's own sentence, marked once per step). The browser half is tests/page/test_classroom.py."""

from __future__ import annotations

import re

import pytest

from app.documents.content import load_content
from article.keysentence import mark_key_sentence, sentence_end

STAGE = re.compile(r'<div id="stage"[^>]*></div>')


def framing(response) -> tuple[str, str | None]:
    csp = response.headers["content-security-policy"]
    return re.search(r"frame-ancestors [^;]+", csp).group(0), response.headers.get("x-frame-options")


def test_only_the_embed_view_may_be_framed_by_another_site(client):
    embed = client.get("/embed?input=305&step=7")
    assert embed.status_code == 200
    assert framing(embed) == ("frame-ancestors *", None)
    assert framing(client.head("/embed?input=305&step=7")) == ("frame-ancestors *", None)
    # the rest of its policy is the site's: only the framing differs
    article = client.get("/?input=305")
    strip = lambda r: r.headers["content-security-policy"].replace(framing(r)[0], "")  # noqa: E731
    assert strip(embed) == strip(article)
    for path in [
        "/",
        "/?input=305&present=1",
        "/ledger",
        "/about",
        "/api/model",
        "/static/js/embed.js",
        "/embed/",
        "/embedded",
        "/api/trace?input=305",
    ]:
        r = client.get(path, follow_redirects=False)  # /embed/ is a redirect to /embed: that answer refuses too
        assert framing(r) == ("frame-ancestors 'none'", "DENY"), path


def test_the_embed_view_is_the_stage_alone_for_the_addresss_state(client):
    steps = client.app.state.content.steps
    html = client.get("/embed?input=305&step=16&cell=dec.1.cross.h3.weights:1:2&compare=42").text
    index = client.get("/?input=305").text
    assert len(STAGE.findall(html)) == 1 and STAGE.findall(html) == STAGE.findall(index)  # one partial, once each
    assert 'id="article"' not in html and 'class="topbar"' not in html and 'id="input-form"' not in html
    assert 'data-step="16"' in html and steps[15].title in html
    # the caption links to the same state in the article, at the same step (in a new tab)
    assert 'href="/?input=305&amp;cell=dec.1.cross.h3.weights%3A1%3A2&amp;compare=42#step-16" target="_blank"' in html
    assert '<script type="module" src="/bundle/js/embed.js"></script>' in html
    assert re.search(r'id="embed-error"[^>]*></p>', html)  # nothing wrong with this address


@pytest.mark.parametrize(
    "query, said, step",
    [
        ("step=99", "no step '99' (the steps are 1–29); the stage shows step 1", 1),
        ("step=x7", "no step 'x7'", 1),
        ("input=abc&step=4", "is not an English number word", 4),
        ("model=nope&step=5", "unknown model 'nope'", 5),
        ("checkpoint=7", "checkpoint must be one of the stored training steps", 1),
    ],
)
def test_a_bad_value_in_an_embed_address_is_said_and_the_rest_is_shown(client, query, said, step):
    import html as h

    page = client.get("/embed?" + query)
    assert page.status_code == 200
    error = h.unescape(re.search(r'id="embed-error"[^>]*>([^<]*)</p>', page.text).group(1))
    assert said in error
    assert f'data-step="{step}"' in page.text


def test_the_embed_view_names_another_model_as_the_article_does(client):
    assert 'data-model="modern"' in client.get("/embed?model=modern").text
    assert "data-model" not in client.get("/embed?model=2017").text


# ---- the key sentence of each step ---------------------------------------------------------------

KEY = re.compile(r'<span class="key-sentence">')


def key_text(html: str) -> str:
    """The marked sentence's text (tags dropped)."""
    start = html.index('<span class="key-sentence">') + len('<span class="key-sentence">')
    depth, i = 1, start
    for m in re.finditer(r"<(/?)span\b[^>]*>", html[start:]):
        depth += -1 if m.group(1) else 1
        if depth == 0:
            i = start + m.start()
            break
    return re.sub(r"<[^>]+>", "", html[start:i]).strip()


def test_every_step_marks_one_key_sentence_of_its_own_prose():
    content = load_content()
    for s in content.steps:
        assert len(KEY.findall(s.html)) == 1, s.number
        text = key_text(s.html)
        assert text[-1] in ".?!:", (s.number, text)
        assert 3 <= len(text.split()) <= 45, (s.number, text)
        assert text in re.sub(r"<[^>]+>", "", s.html.replace('<span class="key-sentence">', "")), s.number


def test_the_first_sentence_ends_at_a_mark_outside_any_element():
    assert sentence_end("One. Two.") == len("One.")
    assert sentence_end("Is it? Yes.") == len("Is it?")
    code = "Scaled by <code>1/sqrt(8). Then</code> more."
    assert sentence_end(code + " Next.") == len(code)
    assert sentence_end("A quote “ends. here” and goes on. Next.") == len("A quote “ends. here” and goes on.")
    assert sentence_end("See e.g. the table, i.e. Table 2. Then.") == len("See e.g. the table, i.e. Table 2.")
    assert sentence_end("Dropout 0.1 and §5.4 apply. Next.") == len("Dropout 0.1 and §5.4 apply.")
    assert sentence_end("One sentence only") == len("One sentence only")


def test_the_key_sentence_skips_asides_and_labels_and_keeps_the_authors_mark():
    aside = "<p><em>An aside.</em></p>\n<p>The point. More.</p>"
    assert mark_key_sentence(aside) == (
        '<p><em>An aside.</em></p>\n<p><span class="key-sentence">The point.</span> More.</p>'
    )
    label = "<p><strong>Question.</strong> Does it? Yes.</p>"
    assert mark_key_sentence(label) == (
        '<p><strong>Question.</strong> <span class="key-sentence">Does it? Yes.</span></p>'
    )
    marked = '<p>First. <span class="key-sentence">Chosen.</span></p>'
    assert mark_key_sentence(marked) == marked
    assert mark_key_sentence("<div>no paragraph</div>") == "<div>no paragraph</div>"
