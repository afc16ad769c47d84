"""The OpenAPI document is true to the app: Schemathesis, with every check it has, against the app in process.

Each operation gets Schemathesis's coverage cases (every documented value's edges, every parameter left out or
made invalid, methods the document does not name) and a few generated ones, positive and negative: a request
the document calls valid must be answered (2xx), an invalid one refused (4xx), and every answer, an error's
included, must have a documented status, content type and schema. Derandomized, so a run is repeatable; about
half a minute on two cores.

The query parameters' documented forms are exact (app/documents/schemas.py `query_forms`): the patterns of
input= and ablate= accept exactly the texts model/parse.py and model/ablation.py read, as the last tests here
check directly, far more often than the fuzzing reaches.
"""

from __future__ import annotations

import re

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.specs.openapi.checks import positive_data_acceptance

from app.documents.query_forms import ablate_pattern, input_pattern
from model import models
from model.ablation import MAX_TEXT, parse_ablation
from model.numbers import to_english
from model.parse import MAX_INPUT_CHARS, parse_number

schema = schemathesis.pytest.from_fixture("api_schema")


@pytest.fixture(scope="module")
def api_schema(client):
    """The document the app serves, its requests sent through the session's client (whose lifespan has run)."""
    return schemathesis.openapi.from_dict(client.get("/openapi.json").json())


def no_snapshots_asked(case) -> bool:
    """The one rule the document cannot state, a relation between two parameters: the modern model has no
    training snapshots, so checkpoint= with model=modern is refused with 422, though each value is accepted."""
    query = case.query or {}
    positive = case.meta is not None and case.meta.generation.mode.is_positive
    return positive and query.get("model") == "modern" and bool(query.get("checkpoint"))


@schema.parametrize()
@settings(
    max_examples=8,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)
def test_the_app_answers_as_its_openapi_document_says(case, client):
    kwargs = case.as_transport_kwargs(base_url="http://testserver")
    kwargs.pop("cookies", None)  # none are documented; httpx takes them per client, not per request
    response = client.request(**kwargs)
    if no_snapshots_asked(case):
        # every other check still runs; the refusal is the app's own, naming what is accepted
        assert response.status_code == 422, response.text
        assert "no stored training snapshots" in response.json()["detail"]["message"]
        case.validate_response(response, excluded_checks=[positive_data_acceptance])
    else:
        case.validate_response(response)


# ---- the documented forms are exactly what the app reads ------------------------------------------

INPUT = re.compile(input_pattern())
ABLATE = re.compile(ablate_pattern())
CFG = models.config(models.DEFAULT)
# pieces a reader's text and an ablation list are made of, and their near misses
PIECES = [
    *"0123456789 ,.-aAndDeEfFhHiIlnNoOrRsStTuUvVwWxXyY\t\x85\u00a0\u2007\u3000\u212a\u00b2\u0663",
    *["and", " and ", "thousand", "hundred", "forty", "two", "zero", "teen", "ty", "000", "999"],
    *["enc.0.self", "dec.1.cross.h3", ".h0", "enc.2.ffn", "dec.0.ffn.h1", ","],
]
TEXTS = st.lists(st.sampled_from(PIECES), max_size=10).map("".join) | st.text(max_size=12)


def accepted(read, text: str) -> bool:
    try:
        read(text)
    except ValueError:
        return False
    return True


def documented_input(text: str) -> bool:
    return len(text) <= MAX_INPUT_CHARS and INPUT.match(text) is not None


def documented_ablation(text: str) -> bool:
    return len(text) <= MAX_TEXT and ABLATE.match(text) is not None


@given(TEXTS)
@settings(max_examples=1500, deadline=None, derandomize=True)
def test_the_documented_forms_are_what_the_app_reads(text):
    assert documented_input(text) == accepted(parse_number, text), repr(text)
    assert documented_ablation(text) == accepted(lambda t: parse_ablation(t, CFG), text), repr(text)


@pytest.mark.parametrize("n", [0, 7, 13, 40, 42, 100, 115, 999, 1000, 1001, 21_000, 731_015, 999_999])
def test_every_spelling_of_a_number_is_documented(n):
    words = " ".join(to_english(n))
    for text in (str(n), f"{n:,}", f"{n:,}".replace(",", "."), f"00{n}", words, words.upper(), f"and {words}-"):
        assert documented_input(text) and accepted(parse_number, text), text
    assert not documented_input(str(n + 1_000_000)) and not accepted(parse_number, str(n + 1_000_000))


@given(st.from_regex(INPUT, fullmatch=True).filter(lambda t: len(t) <= MAX_INPUT_CHARS))
@settings(max_examples=100, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.filter_too_much])
def test_every_documented_input_is_read(text):
    assert accepted(parse_number, text), repr(text)
