"""Number words in the browser, for the static build: static/js/numbers.js, run by Node over the document
GET /api/numbers sends (app/service/number_words.py), spells all 1 000 000 numbers as Python does (English
words, source token ids, German pieces and their ids) and reads every input form of the API's tests
(tests/input_forms.py) as the API does: the same number or the same refusal message.

The spelling is compared in chunks of 10 000 numbers, two sha256 per chunk on each side (Node runs
while Python computes); a chunk that differs is compared line by line to name its first number.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import subprocess
from pathlib import Path

import pytest

from app.documents.schemas import NumberWords
from app.service.deps import InputError, parse_input
from app.service.number_words import number_words, number_words_body
from model.numbers import MAX_NUMBER, to_german_pieces
from model.parse import parse_number
from model.vocab import VOCAB
from tests.input_forms import API_SPELLINGS, BAD_INPUTS, BLANKS, all_forms

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "numbers_parity.mjs"
CHUNK = 10_000
pytestmark = pytest.mark.node


def python_lines(start: int, end: int) -> str:
    """Python's source tokens (the English words, then the end token), source ids, German pieces and their
    ids (greedy_checking's draft, recorder/record.py) of start…end-1, one line each: to name a difference."""
    out = []
    for n in range(start, end):
        source, german = VOCAB.source_tokens(n), to_german_pieces(n)
        out.append(
            f"{' '.join(source)}|{','.join(map(str, VOCAB.ids(source)))}|{' '.join(german)}"
            f"|{','.join(map(str, VOCAB.ids(german)))}\n"
        )
    return "".join(out)


def python_digest(start: int, end: int) -> str:
    """The same of start…end-1 in two hashes (what numbers_parity.mjs's `spell` writes): the tokens' text,
    a line a number, and every id as a byte (the vocabulary has under 256 tokens), source then German."""
    text, ids = [], []
    for n in range(start, end):
        source, german = VOCAB.source_tokens(n), to_german_pieces(n)
        text.append(f"{' '.join(source)}|{' '.join(german)}\n")
        ids += VOCAB.ids(source)
        ids += VOCAB.ids(german)
    return hashlib.sha256("".join(text).encode()).hexdigest() + hashlib.sha256(bytes(ids)).hexdigest()


def node(doc: Path, *args) -> subprocess.Popen:
    return subprocess.Popen(
        ["node", str(SCRIPT), str(doc), *map(str, args)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )


def output(proc: subprocess.Popen, timeout: float = 120) -> str:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err[-2000:]
    return out


def first_difference(doc: Path, start: int, end: int) -> tuple[int, str, str] | None:
    """The first number of start…end-1 that the JavaScript spells otherwise, with both lines; None if none."""
    js = node(doc, "spell", start, end, CHUNK)
    mine = [python_digest(lo, min(lo + CHUNK, end)) for lo in range(start, end, CHUNK)]
    theirs = json.loads(output(js))
    assert len(theirs) == len(mine)
    for k, (a, b) in enumerate(zip(mine, theirs, strict=True)):
        if a != b:
            lo = start + k * CHUNK
            hi = min(lo + CHUNK, end)
            ours, js_lines = python_lines(lo, hi).splitlines(), output(node(doc, "lines", lo, hi)).splitlines()
            for i, (p, j) in enumerate(zip(ours, js_lines, strict=False)):
                if p != j:
                    return lo + i, p, j
            return lo + min(len(ours), len(js_lines)), "", ""
    return None


@pytest.fixture(scope="module")
def doc(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("numbers") / "numbers.json"
    path.write_bytes(number_words_body())
    return path


def planted(doc: Path, tmp_path: Path, table: str, key: str, index: int | None, word: str) -> Path:
    """The document with one word of a table (and of the vocabulary) spelled `word`."""
    data = json.loads(doc.read_text(encoding="utf-8"))
    old = data[table][key] if index is None else data[table][key][index]
    data["vocab"][data["vocab"].index(old)] = word
    if index is None:
        data[table][key] = word
    else:
        data[table][key][index] = word
    path = tmp_path / "planted.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_every_number_is_spelled_as_python_spells_it(doc):
    assert first_difference(doc, 0, MAX_NUMBER + 1) is None


def test_the_comparison_finds_a_planted_error(doc, tmp_path):
    """A teen misspelled, a German joiner changed: the comparison names the first number they touch."""
    assert first_difference(planted(doc, tmp_path, "english", "teens", 4, "fourten"), 0, 2 * CHUNK)[0] == 14
    assert first_difference(planted(doc, tmp_path, "german", "and_piece", None, "ünd"), 0, 2 * CHUNK)[0] == 21


def boundary_forms() -> list[str]:
    """Inputs built from each end of every run of Python's character classes (a space, a digit, a decimal,
    a control character) and one past it, in the places where the rules read them."""
    ends = {c for runs in number_words().parse.chars.values() for a, b in runs for c in (a - 1, a, b, b + 1)}
    chars = [chr(c) for c in sorted(ends) if 0 <= c <= 0x10FFFF]
    shapes = ["{}", "-{}", "{}42", "4{}2", "-4{}", "{}-5", "forty{}two", " {} ", "{}{}1", "one {}"]
    lengths = [ch * k for ch in ("4", "a", "𝟒", "😀", " ") for k in (40, 41, 200, 201)]  # 𝟒, 😀: two UTF-16 units
    return [s.format(ch, ch) for ch in chars for s in shapes] + lengths


def random_forms(count: int = 3000) -> list[str]:
    """Texts put together from pieces of numbers, separators and odd characters."""
    pieces = [
        "one",
        "hundred",
        "thousand",
        "and",
        "forty",
        "two",
        "twelve",
        "zero",
        "Nine",
        "-",
        " ",
        "  ",
        ",",
        ".",
        "0",
        "7",
        "42",
        "000",
        "\u00a0",
        "\u2003",
        "\ufeff",
        "\u212a",
        "\u0130",
        "Σ",
        "ς",
        "٣",
        "²",
        "x",
        "\t",
        "\u0085",
        "\x1c",
        "ß",
        "10",
        "1,000",
        "999",
        "99",
    ]
    rng = random.Random(25)
    return ["".join(rng.choice(pieces) for _ in range(rng.randrange(1, 9))) for _ in range(count)]


def python_reads(text: str | None) -> list[dict]:
    """What the API does with ?input=text (app/service/deps.py) and what parse_number does with it."""

    def read(f, t):
        try:
            return {"number": f(t)}
        except (InputError, ValueError) as e:
            return {"message": str(e)}

    return [read(parse_input, text), read(parse_number, text)]


def js_reads(doc: Path, forms: list, tmp_path: Path) -> list:
    path = tmp_path / "forms.json"
    path.write_text(json.dumps(forms), encoding="utf-8")
    return json.loads(output(node(doc, "read", path)))


def test_every_input_form_is_read_as_the_api_reads_it(doc, tmp_path):
    forms = all_forms() + boundary_forms() + random_forms()
    forms += [" ".join(VOCAB.source_tokens(n)[:-1]) for n in range(0, MAX_NUMBER + 1, 997)]
    js = js_reads(doc, forms, tmp_path)
    differ = [(f, python_reads(f), j) for f, j in zip(forms, js, strict=True) if python_reads(f) != j]
    assert differ == [], f"{len(differ)} of {len(forms)} forms read otherwise, first: {differ[:3]}"
    assert len({json.dumps(p) for p in js}) > 100  # numbers and every kind of refusal, not one answer


def test_the_api_answers_as_the_javascript_reads(client, doc, tmp_path):
    """Over HTTP: each form the API's tests send gets the JavaScript's number (200) or its message (422)."""
    forms = [None] + [t for t, _ in API_SPELLINGS] + list(BAD_INPUTS.values()) + BLANKS
    for form, (read, _) in zip(forms, js_reads(doc, forms, tmp_path), strict=True):
        r = client.get("/api/beam", params={} if form is None else {"input": form})
        if "number" in read:
            assert r.status_code == 200 and r.json()["number"] == read["number"], form
        else:
            assert r.status_code == 422 and r.json()["detail"]["message"] == read["message"], form


def test_the_document_is_served_as_written(client):
    r = client.get("/api/numbers")
    assert r.status_code == 200 and r.content == number_words_body()
    read = NumberWords.model_validate_json(r.content)
    assert read == number_words() and read.model_dump(mode="json") == r.json()  # documented both ways
    assert client.get("/api/numbers", headers={"If-None-Match": r.headers["etag"]}).status_code == 304


def test_the_javascript_writes_no_word_token_limit_or_message():
    """The lexicon is the document's: numbers.js's code (its comments aside) holds no token of the
    vocabulary as a string, no limit and no piece of a message."""
    code = "\n".join(line.split("//")[0] for line in (ROOT / "static/js/numbers.js").read_text().splitlines())
    quoted = set(re.findall(r"""["'`]([^"'`\n]*)["'`]""", code))
    assert not quoted & set(VOCAB.tokens)
    assert str(MAX_NUMBER) not in code and "999" not in code and "200" not in code
    templates = list(number_words().parse.messages.values()) + [number_words().parse.accepted]
    assert not [t for t in templates for piece in re.split(r"\{\w+\}|'", t) if len(piece) > 6 and piece in code]
