r"""What the API reads: the accepted forms of its query parameters, as JSON Schemas for the OpenAPI document.

app/service/deps.py reads each as optional text and refuses a bad one with the app's own message (a missing
input= with the same words as a blank one, as static/js/numbers.js does); these JSON Schemas say exactly
which texts it accepts, so that the OpenAPI document tells a request that is answered from one refused with
422 (tests/service/test_schema_fuzz.py holds the two to each other). Patterns use \uXXXX escapes and
classes only, read alike by Python's `re` and ECMAScript.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Iterable
from typing import Any

from model import models
from model.ablation import MAX_TEXT, parts
from model.numbers import EN_FILLERS, EN_HUNDRED, EN_ONES, EN_TEENS, EN_TENS, EN_THOUSAND, MAX_NUMBER
from model.parse import CONTROL, GROUP_SEPARATORS, MAX_INPUT_CHARS


def _chars(codes: Iterable[int]) -> str:
    """The inside of a character class: the code points as \\uXXXX escapes, runs as ranges (all spaces lie in
    the BMP)."""
    runs: list[list[int]] = []
    for c in sorted(codes):
        if runs and runs[-1][1] == c - 1:
            runs[-1][1] = c
        else:
            runs.append([c, c])
    return "".join(f"\\u{a:04x}" + ("" if a == b else f"-\\u{b:04x}") for a, b in runs)


def _any_case(word: str) -> str:
    return "".join(f"[{c}{c.upper()}]" for c in word)  # model/parse.py lowercases the text


def _either(words: Iterable[str]) -> str:
    return "(?:" + "|".join(_any_case(w) for w in words) + ")"


@functools.cache
def _spaces() -> tuple[list[int], list[int]]:
    """Python's spaces (`str.split`, `str.strip`), and those of them model/parse.py does not refuse as control."""
    every = [c for c in range(sys.maxunicode + 1) if chr(c).isspace()]
    return every, [c for c in every if not any(lo <= c <= hi for lo, hi in CONTROL)]


@functools.cache
def input_pattern() -> str:
    """Exactly the texts model/parse.py `parse_number` reads: digits (0-999 999, any leading zeros, groups of
    three after spaces, commas or dots) or the canonical English words, in any case, between spaces and
    hyphens, with "and" anywhere between them, and spaces around either."""
    assert MAX_NUMBER == 999_999, "the digits below allow six significant digits"
    space = f"[{_chars(_spaces()[1])}]"
    sep = f"[{_chars(_spaces()[1])}\\-]"  # between words: spaces and hyphens (model/numbers.py EN_SPLIT)
    filler = _either(EN_FILLERS)
    gap = f"{sep}+(?:{filler}{sep}+)*"
    one, teen, ten = _either(EN_ONES[1:]), _either(EN_TEENS), _either(EN_TENS[2:])
    below_100 = f"(?:{teen}|{ten}(?:{gap}{one})?|{one})"
    below_1000 = f"(?:{one}{gap}{_any_case(EN_HUNDRED)}(?:{gap}{below_100})?|{below_100})"
    number = f"(?:{_any_case(EN_ONES[0])}|{below_1000}(?:{gap}{_any_case(EN_THOUSAND)}(?:{gap}{below_1000})?)?)"
    words = f"(?:{filler}{sep}+)*{number}(?:{sep}+{filler})*{sep}*"
    group = f"(?:{space}+|[{re.escape(GROUP_SEPARATORS.replace(' ', ''))}])"  # a run of spaces reads as one
    digits = (
        f"(?:0*[0-9]{{1,6}}|[0-9]{{1,3}}(?:{group}[0-9]{{3}})?"
        f"|0{{1,3}}(?:{group}000)*{group}[0-9]{{3}}{group}[0-9]{{3}})"
    )
    return f"^{space}*(?:{digits}{space}*|{words})$"


@functools.cache
def ablate_pattern() -> str:
    """Exactly the lists model/ablation.py `parse_ablation` reads: parts' names, comma-separated, each with
    Python's spaces around it or none (an empty item names nothing)."""
    space = f"[{_chars(_spaces()[0])}]*"
    names = "|".join(re.escape(p.id) for p in parts(models.config(models.DEFAULT)))
    item = f"{space}(?:(?:{names}){space})?"
    return f"^{item}(?:,{item})*$"


REQUIRED_QUERY = frozenset({"input"})  # refused with 422 when missing (or blank); the others may be left out


def query_forms(checkpoint_steps: Iterable[int]) -> dict[str, dict[str, Any]]:
    """The JSON Schema of each query parameter app/service/deps.py reads, by name: the texts it accepts. An
    empty value is the same as leaving the parameter out (the default) except for input=, which is required."""
    return {
        "input": {"type": "string", "maxLength": MAX_INPUT_CHARS, "pattern": input_pattern()},
        "ablate": {"type": "string", "maxLength": MAX_TEXT, "pattern": ablate_pattern()},
        "checkpoint": {"type": "string", "enum": ["", *(str(s) for s in checkpoint_steps)]},
        "model": {"type": "string", "enum": ["", *models.NAMES]},
    }
