"""What a reader may type: digits (with spaces, commas or dots between thousands) or English words.

The rules read Python's own definitions of a space, a digit and a decimal (`str.split`, `str.isdigit`,
`re`'s `\\d`); `rules()` writes those, the patterns and the messages' templates as data, so that
static/js/numbers.js follows the same rules over the same tables (app/service/number_words.py sends them).
"""

from __future__ import annotations

import functools
import re
import sys

from model.numbers import MAX_NUMBER, from_english

MAX_INPUT_CHARS = 200
ACCEPTED = 'a whole number from 0 to 999 999, as digits ("731015", "731 015", "731,015") or English words ("forty two")'
GROUP_SEPARATORS = " ,."
CONTROL = ((0, 31), (0x7F, 0x9F))  # code points refused anywhere in the input (C0, DEL and C1)
_DIGITS = re.compile(rf"^\d{{1,3}}([{GROUP_SEPARATORS}]\d{{3}})*$|^\d+$")
_WORDS = re.compile(r"^[a-z][a-z \-]*$")
# why a text is refused, filled with str.format; each then gets "; accepted: …" (REFUSED)
MESSAGES = {
    "not_text": "expected text",
    "too_long": "input is {length} characters long",
    "control": "input contains control characters",
    "empty": "input is empty",
    "negative": "negative numbers are not in range",
    "bad_digits": "'{text}' is not a well-formed number",
    "too_large": "{n} is larger than 999 999",
    "not_words": "'{text}' is neither digits nor English number words",
}
REFUSED = "{reason}; accepted: {accepted}"
QUOTED_WORDS_CHARS = 40  # how much of a text that is neither digits nor words the message repeats


def refused(reason: str) -> ValueError:
    return ValueError(REFUSED.format(reason=reason, accepted=ACCEPTED))


def parse_number(text: str) -> int:
    """The number a reader's text names; ValueError with a message that says what is accepted."""
    if not isinstance(text, str):
        raise refused(MESSAGES["not_text"])
    if len(text) > MAX_INPUT_CHARS:
        raise refused(MESSAGES["too_long"].format(length=len(text)))
    if any(lo <= ord(c) <= hi for c in text for lo, hi in CONTROL):
        raise refused(MESSAGES["control"])
    s = " ".join(text.split()).lower()
    if not s:
        raise refused(MESSAGES["empty"])
    if s.startswith("-") and _DIGITS.match(s[1:].strip()):
        raise refused(MESSAGES["negative"])
    if s[0].isdigit():
        if not s.isascii() or not _DIGITS.match(s):
            raise refused(MESSAGES["bad_digits"].format(text=s))
        n = int(re.sub(f"[{GROUP_SEPARATORS}]", "", s))
        if n > MAX_NUMBER:
            raise refused(MESSAGES["too_large"].format(n=n))
        return n
    if not s.isascii() or not _WORDS.match(s):
        raise refused(MESSAGES["not_words"].format(text=s[:QUOTED_WORDS_CHARS]))
    try:
        return from_english(s)
    except ValueError as e:
        raise refused(str(e)) from None


def _ranges(test) -> list[list[int]]:
    """The code points for which test(chr(c)) holds, as [first, last] runs."""
    runs: list[list[int]] = []
    for c in range(sys.maxunicode + 1):
        if test(chr(c)):
            if runs and runs[-1][1] == c - 1:
                runs[-1][1] = c
            else:
                runs.append([c, c])
    return runs


@functools.cache
def unprintable() -> list[list[int]]:
    """The code points Python's repr escapes (not str.isprintable), as runs: a refusal that quotes a text with
    repr (an ablation part, a checkpoint) is written alike by static/compute/refusals.js."""
    return _ranges(lambda c: not c.isprintable())


def rules() -> dict:
    """parse_number's data: the limits, the patterns (Python's syntax, which JavaScript reads alike; `\\d`
    means `decimal` here), the characters Python counts as a space (`str.split`), a digit (`str.isdigit`)
    and a decimal (`re`'s `\\d`), and the messages' templates."""
    return {
        "max_input_chars": MAX_INPUT_CHARS,
        "accepted": ACCEPTED,
        "group_separators": GROUP_SEPARATORS,
        "patterns": {"digits": _DIGITS.pattern, "words": _WORDS.pattern},
        "chars": {
            "control": [list(r) for r in CONTROL],
            "space": _ranges(str.isspace),
            "digit": _ranges(str.isdigit),
            "decimal": _ranges(re.compile(r"\d").fullmatch),
        },
        "messages": MESSAGES,
        "refused": REFUSED,
        "quoted_words_chars": QUOTED_WORDS_CHARS,
    }
