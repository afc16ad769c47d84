"""What readers type, in one place: every input form the tests of the API and of the number words use.

tests/service/test_api.py, tests/model/test_numbers.py and tests/service/test_hardening.py take their forms from
here, and tests/page/test_numbers_js.py checks that static/js/numbers.js reads each one as the API does: the same
number, or the same refusal message, word for word.
"""

from __future__ import annotations

# read by model/parse.py parse_number (tests/model/test_numbers.py)
SPELLINGS = [
    ("42", 42),
    ("731 015", 731_015),
    ("731,015", 731_015),
    ("731.015", 731_015),
    ("  Forty-Two ", 42),
    ("one hundred and five", 105),
    ("0", 0),
    ("999999", 999_999),
]
# through /api/trace (tests/service/test_api.py): None means refused
API_SPELLINGS = [
    ("731 015", 731015),
    ("731,015", 731015),
    ("731.015", 731015),
    ("  Forty  Two ", 42),
    ("0", 0),
    ("999999", 999999),
    ("one million", None),
]
# traced and compared with the model's own trace (tests/service/test_api.py)
TRACED = [
    ("42", 42),
    ("0", 0),
    ("731 015", 731015),
    ("forty two", 42),
    ("999,999", 999999),
    ("nine hundred ninety nine thousand nine hundred ninety nine", 999999),
]

# refused by /api/trace, /api/trace/stream and /api/beam with 422 (tests/service/test_api.py)
BAD_INPUTS = {
    "empty": "",
    "blank": "   ",
    "negative": "-5",
    "too large": "1000000",
    "far too large": "99999999999999999999",
    "letters": "abc",
    "not a number word": "forty banana",
    "ten thousand characters": "4" * 10_000,
    "ten thousand words": "one " * 2_500,
    "a NUL byte": "4\x002",
    "a newline": "42\n7",
    "an escape": "\x1b[31m42",
    "Chinese": "四十二",
    "Arabic-Indic digits": "٤٢",
    "Cyrillic": "сорок два",
    "a decimal": "4.5",
    "markup": "<script>alert(1)</script>",
}
# refused by parse_number, with a word its message must hold (tests/model/test_numbers.py)
REFUSALS = [
    ("", "empty"),
    ("-5", "negative"),
    ("1000000", "larger"),
    ("abc", "not an English number word"),
    ("x" * 10_000, "characters long"),
    ("4\x002", "control"),
    ("٤٢", "not a well-formed"),
    ("四十二", "neither"),
    ("zwei", "not an English"),
    ("two two", "not a well-formed"),
    ("1,00", "not a well-formed"),
    ("thousand", "not a well-formed"),
]
# refused as a missing ?input= is (tests/service/test_hardening.py)
BLANKS = ["", "   "]
# other inputs the API's tests send (tests/service/test_hardening.py, tests/service/test_api.py)
OTHERS = ["x", "424242", "42"]


def all_forms() -> list[str | None]:
    """Every form above once, in order; None is an absent ?input=."""
    forms = [t for t, _ in SPELLINGS + API_SPELLINGS + TRACED] + list(BAD_INPUTS.values())
    forms += [t for t, _ in REFUSALS] + BLANKS + OTHERS
    return [None] + list(dict.fromkeys(forms))
