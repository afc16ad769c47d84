"""What a reader may type: digits (with spaces, commas or dots between thousands) or English words."""

from __future__ import annotations

import re

from model.numbers import MAX_NUMBER, from_english

MAX_INPUT_CHARS = 200
ACCEPTED = ("a whole number from 0 to 999 999, as digits (\"731015\", \"731 015\", \"731,015\") "
            "or English words (\"forty two\")")
_DIGITS = re.compile(r"^\d{1,3}([ ,.]\d{3})*$|^\d+$")
_WORDS = re.compile(r"^[a-z][a-z \-]*$")


def parse_number(text: str) -> int:
    """The number a reader's text names; ValueError with a message that says what is accepted."""
    if not isinstance(text, str):
        raise ValueError(f"expected text; accepted: {ACCEPTED}")
    if len(text) > MAX_INPUT_CHARS:
        raise ValueError(f"input is {len(text)} characters long; accepted: {ACCEPTED}")
    if any(ord(c) < 32 or 0x7f <= ord(c) < 0xa0 for c in text):
        raise ValueError(f"input contains control characters; accepted: {ACCEPTED}")
    s = " ".join(text.split()).lower()
    if not s:
        raise ValueError(f"input is empty; accepted: {ACCEPTED}")
    if s.startswith("-") and _DIGITS.match(s[1:].strip()):
        raise ValueError(f"negative numbers are not in range; accepted: {ACCEPTED}")
    if s[0].isdigit():
        if not s.isascii() or not _DIGITS.match(s):
            raise ValueError(f"'{s}' is not a well-formed number; accepted: {ACCEPTED}")
        n = int(re.sub(r"[ ,.]", "", s))
        if n > MAX_NUMBER:
            raise ValueError(f"{n} is larger than 999 999; accepted: {ACCEPTED}")
        return n
    if not s.isascii() or not _WORDS.match(s):
        raise ValueError(f"'{s[:40]}' is neither digits nor English number words; accepted: {ACCEPTED}")
    try:
        return from_english(s)
    except ValueError as e:
        raise ValueError(f"{e}; accepted: {ACCEPTED}") from None
