"""The article checked against its sources, as a careful reader of the paper would check it: every
marked number says what its ledger entry says and every entry's value is in the sentence or table row
it quotes; sentences taken word for word from the paper stand inside quotation marks; every reference
is cited; and each imprecision an earlier review of the article found stays fixed (the version beside 41.8,
who introduced pre-LN, the big model's dropout, the FFN's share of the parameters, …).

No model and no browser: the content is rendered from content/ as the server renders it (fast).
"""

from __future__ import annotations

import html as htmllib
import re

import pytest

from app.documents.content import CONTENT, load_content, read_tsv
from article.figures import PAPER_SIZES
from model.transformer import parameter_breakdown

SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
SUBSCRIPT = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")
MARK = re.compile(r'<span\b[^>]*\bdata-fact="([^"]+)"[^>]*>(.*?)</span>', re.S)
CITE = re.compile(r'href="(?:/)?#ref-(\d+)"')
QUOTED = re.compile(r"“[^”]*”|\"[^\"]*\"|<q>.*?</q>|<blockquote>.*?</blockquote>", re.S)


@pytest.fixture(scope="module")
def content():
    return load_content()


@pytest.fixture(scope="module")
def ledger() -> dict[str, dict[str, str]]:
    return {r["id"]: r for r in read_tsv(CONTENT / "facts.tsv")}


def places(content) -> list[tuple[str, str]]:
    """(where, rendered HTML) for every step, the extras and every topic page."""
    out = [(f"step {s.number}", s.html) for s in content.steps]
    out.append(("extras", content.extras_html))
    out += [(f"topic {t.slug}", t.html) for t in content.topics.values()]
    return out


def plain(fragment: str) -> str:
    """Text as a reader sees it: tags gone (sub- and superscripts written ^x and _x), entities decoded."""
    fragment = re.sub(r"<sup>(.*?)</sup>", r"^\1", fragment)
    fragment = re.sub(r"<sub>(.*?)</sub>", r"_\1", fragment)
    return re.sub(r"\s+", " ", htmllib.unescape(re.sub(r"<[^>]+>", " ", fragment))).strip()


def numbers(text: str) -> set[str]:
    """The numbers in a text: superscripts read as digits, thousands separators dropped, "36M" as 36."""
    text = re.sub("[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+", lambda m: "^" + m.group(0).translate(SUPERSCRIPT), text).translate(SUBSCRIPT)
    text = re.sub(r"(?<=\d)[,\u2009 ](?=\d{3}\b)", "", text)
    return {n.rstrip("0").rstrip(".") if "." in n else n for n in re.findall(r"\d+(?:\.\d+)?", text)}


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-zà-ÿ]{3,}", text.lower()))


def sentences(text: str) -> list[str]:
    return re.split(r"(?<=[.;:!?])\s+(?=[A-Z(*])", text)


def sentence_with(text: str, needle: str) -> list[str]:
    return [s for s in sentences(text) if needle in s]


# ---- the ledger and its marks ---------------------------------------------------------------------


def test_every_ledger_value_is_in_the_sentence_or_row_it_quotes(ledger):
    missing = {
        fid: sorted(numbers(f["value"]) - numbers(f["source"]))
        for fid, f in ledger.items()
        if numbers(f["value"]) - numbers(f["source"])
    }
    assert missing == {}, "a value not found in its own source (quote the table row instead)"


def test_every_entry_says_a_different_thing(ledger):
    seen: dict[str, str] = {}
    for fid, f in ledger.items():
        assert f["what"] not in seen, f"{fid} and {seen[f['what']]} share the 'what' {f['what']!r}"
        seen[f["what"]] = fid


def test_every_mark_points_to_the_entry_that_states_it(content, ledger):
    wrong = []
    for where, fragment in places(content):
        for fid, inner in MARK.findall(fragment):
            f, shown = ledger[fid], plain(inner)
            if numbers(shown) - numbers(f["value"]):
                wrong.append((where, fid, shown, f["value"]))
            elif not numbers(shown) and words(shown) - words(f["value"] + " " + f["what"] + " " + f["source"]):
                wrong.append((where, fid, shown, f["value"]))
    assert wrong == []


def test_a_mark_on_words_points_to_an_entry_about_those_words(content, ledger):
    """A mark without digits ('nearly identical', 'O(n)') is either the entry's value written out or
    points to an entry whose value is words too: 'nearly identical' is the paper's judgement in §6.2,
    not the 25.7 BLEU of Table 3's row (E)."""
    squeeze = lambda t: re.sub(r"\s+", "", t.translate(SUBSCRIPT))  # noqa: E731
    wrong = []
    for where, fragment in places(content):
        for fid, inner in MARK.findall(fragment):
            shown, value = plain(inner), ledger[fid]["value"]
            if not numbers(shown) and numbers(value) and squeeze(shown) not in squeeze(value):
                wrong.append((where, fid, shown, value))
    assert wrong == []


def paper_sentences(ledger) -> list[str]:
    """The paper's own sentences the ledger quotes (table rows left out: they are not prose)."""
    out = []
    for fid, f in ledger.items():
        src = f["source"]
        if not src.startswith("[1]") or "&" in src or fid.endswith("-formula"):  # rows and formulas are not prose
            continue
        out.append(
            re.sub(r"^\[1\]\s*(?:[^A-Za-z]*?(?:§[\d.]+|Table \d[^A-Za-z]*|abstract|footnote \d?)[,\s]*)+", "", src)
        )
    return out


def run_of(words_: list[str], size: int) -> set[tuple[str, ...]]:
    return {tuple(words_[i : i + size]) for i in range(len(words_) - size + 1)}


def wordlist(text: str) -> list[str]:
    return re.findall(r"[a-z0-9_]+", text.lower())


RUN = 7  # seven words in a row, the same and in the same order, are a quotation


def test_the_papers_sentences_appear_word_for_word_only_inside_quotation_marks(content, ledger):
    runs = set().union(*(run_of(wordlist(s), RUN) for s in paper_sentences(ledger)))
    found = []
    for where, fragment in places(content):
        prose = plain(QUOTED.sub(" ", re.sub(r"<q>(.*?)</q>", r"“\1”", fragment)))
        prose = QUOTED.sub(" ", prose)
        mine = wordlist(prose)
        for i in range(len(mine) - RUN + 1):
            if tuple(mine[i : i + RUN]) in runs:
                found.append((where, " ".join(mine[max(0, i - 3) : i + RUN + 3])))
    assert found == [], "paper wording outside quotation marks"


def test_the_check_for_unquoted_paper_wording_can_fail(ledger):
    runs = set().union(*(run_of(wordlist(s), RUN) for s in paper_sentences(ledger)))
    text = "so self-attention layers are faster than recurrent layers when the sequence length n is small"
    assert any(tuple(wordlist(text)[i : i + RUN]) in runs for i in range(len(wordlist(text)) - RUN + 1))
    quoted = plain(QUOTED.sub(" ", "as §4 says, “self-attention layers are faster than recurrent layers when”"))
    assert not any(tuple(wordlist(quoted)[i : i + RUN]) in runs for i in range(len(wordlist(quoted)) - RUN + 1))


# ---- references ---------------------------------------------------------------------------------


def test_every_reference_is_cited_somewhere(client):
    refs = {r["n"] for r in read_tsv(CONTENT / "references.tsv")}
    cited = set(CITE.findall(client.get("/").text))
    for slug in client.app.state.content.topics:
        cited |= set(CITE.findall(client.get(f"/topics/{slug}").text))
    assert refs - cited == set(), "listed but never cited: cite or drop"
    assert cited - refs == set(), "cited but not listed"


def test_the_field_guide_has_its_title_and_editors():
    text = next(
        r["text"] for r in read_tsv(CONTENT / "references.tsv") if "Gradient Flow in Recurrent Nets" in r["text"]
    )
    assert "A Field Guide to Dynamical Recurrent Networks" in text and "Kolen" in text and "Kremer" in text


def test_a_topic_page_lists_the_references_it_cites(client):
    page = client.get("/topics/adam").text
    for n in set(CITE.findall(page)):
        assert f'id="ref-{n}"' in page, n


# ---- the review's items, one by one -------------------------------------------------------------


def text_of(content, where: str) -> str:
    return plain(dict(places(content))[where])


def test_the_version_is_named_beside_41_8(content):
    hits = [(w, s) for w, frag in places(content) for s in sentences(plain(frag)) if "41.8" in s]
    assert hits, "41.8 is quoted somewhere"
    for where, s in hits:
        assert "v7" in s, (where, s)


def test_the_results_table_says_it_is_a_subset_of_table_2(content):
    step = text_of(content, "step 24")
    assert re.search(r"(subset|some|five) of (the )?(rows of )?Table 2|of Table 2's rows", step)


def test_pre_ln_is_analysed_by_xiong_not_invented(content):
    for where in ("step 11", "extras", "topic layernorm-and-residuals"):
        for s in sentence_with(text_of(content, where), "[14]"):
            assert not re.search(r"moved the LayerNorm|introduced|invented|proposed", s), (where, s)
    assert "[37]" in text_of(content, "step 11"), "step 11 says who used pre-LN first (GPT-2)"


def test_without_warm_up_training_is_unstable_not_divergent(content):
    for s in sentence_with(text_of(content, "step 21"), "[14]"):
        assert "diverge" not in s and "unstable" in s, s


def test_the_big_models_dropout_of_0_3_is_english_to_german(content):
    step = text_of(content, "step 22")
    s = next(s for s in sentences(step) if "0.3" in s)
    assert "English→German" in s and "English→French" in s


def test_the_large_d_k_claim_is_from_the_body_of_3_2_1(content):
    for s in sentence_with(text_of(content, "step 26"), "large d_k"):
        assert "footnote" not in s.split("large d_k")[0][-120:], s


def test_no_unsourced_claim_about_test_and_training_lengths(content):
    assert "no longer than training" not in text_of(content, "step 27")


def test_recurrent_systems_before_2017_already_used_attention(content):
    step = text_of(content, "step 2")
    assert "before 2017 did" not in step
    s = " ".join(sentence_with(step, "[5]"))
    assert re.search(r"earliest|first", s), s
    assert "[16]" in step, "GNMT (2016) is named as an attentional recurrent system"


def test_the_ffn_share_is_of_an_encoder_layer_and_about_40_percent_of_the_base_model(content):
    p = parameter_breakdown(PAPER_SIZES["base"])
    ffn_total = 2 * PAPER_SIZES["base"].n_layers * p["ffn"]
    share = ffn_total / p["total"]
    assert (round(ffn_total / 1e6, 1), round(p["total"] / 1e6, 1), round(100 * share)) == (25.2, 63.1, 40)
    for where in ("step 12", "topic counting-parameters", "extras"):
        text = text_of(content, where)
        assert not re.search(r"FFNs? holds? most of the parameters|Most parameters sit in the feed", text), where
        assert "25.2 M" in text and "63.1 M" in text and "40 %" in text, where
    assert re.search(r"decoder layer.{0,120}(equal|same)", text_of(content, "step 12"))


def test_shaw_et_al_add_learned_vectors_to_keys_and_values(content):
    s = " ".join(sentence_with(text_of(content, "topic positional-encoding"), "[24]"))
    assert "keys" in s and "values" in s and "to the scores" not in s


def test_llamas_untied_output_is_cited_from_the_released_checkpoints(content):
    s = " ".join(sentence_with(text_of(content, "extras"), "[36]"))
    assert re.search(r"released (code|checkpoints|weights)", s), s


def test_the_unreliable_second_moment_is_cited_to_liu_et_al(content):
    refs = {r["n"]: r["text"] for r in read_tsv(CONTENT / "references.tsv")}
    n = next(k for k, v in refs.items() if "Variance of the Adaptive Learning Rate" in v)
    s = " ".join(sentence_with(text_of(content, "topic adam"), "unreliable"))
    assert f"[{n}]" in s, s


def test_the_embedding_scale_reading_is_sourced_not_self_contradictory(content):
    step = text_of(content, "step 4")
    assert "ours, not the paper's" not in step
    refs = {r["n"]: r["text"] for r in read_tsv(CONTENT / "references.tsv")}
    n = next(k for k, v in refs.items() if "Tensor2Tensor" in v)
    assert f"[{n}]" in step and "tensor2tensor" in step.lower()
