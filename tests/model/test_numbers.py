"""Number words: the hard cases, the round trips, and what a reader may type."""

from __future__ import annotations

import pytest

from model.numbers import MAX_NUMBER, from_english, join_german, to_english, to_german_pieces
from model.parse import parse_number
from tests.input_forms import REFUSALS, SPELLINGS

HARD_CASES = [
    (0, "zero", "null"),
    (1, "one", "eins"),
    (11, "eleven", "elf"),
    (16, "sixteen", "sechzehn"),
    (17, "seventeen", "siebzehn"),
    (21, "twenty one", "einundzwanzig"),
    (30, "thirty", "dreißig"),
    (42, "forty two", "zweiundvierzig"),
    (60, "sixty", "sechzig"),
    (70, "seventy", "siebzig"),
    (77, "seventy seven", "siebenundsiebzig"),
    (100, "one hundred", "einhundert"),
    (101, "one hundred one", "einhunderteins"),
    (111, "one hundred eleven", "einhundertelf"),
    (300, "three hundred", "dreihundert"),
    (1_000, "one thousand", "eintausend"),
    (1_001, "one thousand one", "eintausendeins"),
    (1_234, "one thousand two hundred thirty four", "eintausendzweihundertvierunddreißig"),
    (17_000, "seventeen thousand", "siebzehntausend"),
    (21_000, "twenty one thousand", "einundzwanzigtausend"),
    (101_000, "one hundred one thousand", "einhunderteintausend"),
    (200_001, "two hundred thousand one", "zweihunderttausendeins"),
    (731_015, "seven hundred thirty one thousand fifteen", "siebenhunderteinunddreißigtausendfünfzehn"),
    (
        999_999,
        "nine hundred ninety nine thousand nine hundred ninety nine",
        "neunhundertneunundneunzigtausendneunhundertneunundneunzig",
    ),
]


@pytest.mark.parametrize("n, english, german", HARD_CASES)
def test_hard_cases(n, english, german):
    assert " ".join(to_english(n)) == english
    assert join_german(to_german_pieces(n)) == german
    assert from_english(english) == n


def test_german_pieces_split_compounds_the_way_a_subword_vocabulary_would():
    assert to_german_pieces(42) == ["zwei", "und", "vierzig"]
    assert to_german_pieces(1_234) == ["ein", "tausend", "zwei", "hundert", "vier", "und", "dreißig"]
    assert to_german_pieces(17_000) == ["siebzehn", "tausend"]


def test_english_to_number_to_english_round_trips_over_the_whole_range():
    for n in range(0, MAX_NUMBER + 1, 7):  # every 7th number: all patterns of the last digits
        assert from_english(" ".join(to_english(n))) == n
    assert from_english(" ".join(to_english(MAX_NUMBER))) == MAX_NUMBER


def test_english_has_one_to_nine_words_over_the_range():
    lengths = {len(to_english(n)) for n in range(0, MAX_NUMBER + 1, 13)}
    assert lengths == set(range(1, 10))


@pytest.mark.parametrize("text, n", SPELLINGS)
def test_readers_may_type_digits_or_words(text, n):
    assert parse_number(text) == n


@pytest.mark.parametrize("text, says", REFUSALS)
def test_bad_input_gets_a_message_that_says_what_is_accepted(text, says):
    with pytest.raises(ValueError) as e:
        parse_number(text)
    assert says in str(e.value) and "0 to 999 999" in str(e.value)
