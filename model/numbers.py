"""Whole numbers 0–999 999 as English words (the model's input) and German pieces (its output).

Conventions, chosen once and used everywhere (the task's description of the two languages leaves them open):
- English: no "and", no hyphens: 731 015 -> "seven hundred thirty one thousand fifteen".
- German: the pieces a subword vocabulary would produce; joined without spaces they are standard
  German spelling with ß ("dreißig"). 1 standing alone is "eins"; as a multiplier or before "und"
  it is "ein" (einhundert, eintausend, einundzwanzig). 100 and 1 000 are written with the "ein"
  (einhundert, eintausend), as in amounts on cheques. 0 is "zero" / "null".
"""

from __future__ import annotations

import re

MAX_NUMBER = 999_999

EN_ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
EN_TEENS = [
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
EN_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]

DE_ONES = ["null", "eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun"]
DE_TEENS = ["zehn", "elf", "zwölf", "dreizehn", "vierzehn", "fünfzehn", "sechzehn", "siebzehn", "achtzehn", "neunzehn"]
DE_TENS = ["", "", "zwanzig", "dreißig", "vierzig", "fünfzig", "sechzig", "siebzig", "achtzig", "neunzig"]

EN_HUNDRED, EN_THOUSAND = "hundred", "thousand"
EN_FILLERS = ["and"]  # read and dropped: "one hundred and five"; hyphens split words as spaces do
DE_ONE_JOINED = "ein"  # 1 as a multiplier or before "und" (einhundert, einundzwanzig); alone it is "eins"
DE_AND, DE_HUNDRED, DE_THOUSAND = "und", "hundert", "tausend"

ENGLISH_WORDS = EN_ONES + EN_TEENS + EN_TENS[2:] + [EN_HUNDRED, EN_THOUSAND]
GERMAN_PIECES = DE_ONES[:2] + [DE_ONE_JOINED] + DE_ONES[2:] + DE_TEENS + DE_TENS[2:] + [DE_AND, DE_HUNDRED, DE_THOUSAND]
# from_english's refusals, the templates filled with str.format (static/js/numbers.js fills the same ones)
EN_MESSAGES = {
    "no_words": "no number words given",
    "unknown_word": "'{word}' is not an English number word",
    "ill_formed": "'{words}' is not a well-formed number from zero to "
    "nine hundred ninety nine thousand nine hundred ninety nine",
}
EN_SPLIT = r"[\s\-]+"


def tables() -> dict:
    """The words and pieces the rules below put together, as data: what static/js/numbers.js reads
    (app/service/number_words.py sends it) so that the lexicon is written once, here."""
    return {
        "max_number": MAX_NUMBER,
        "english": {
            "ones": EN_ONES,
            "teens": EN_TEENS,
            "tens": EN_TENS,
            "hundred": EN_HUNDRED,
            "thousand": EN_THOUSAND,
            "fillers": EN_FILLERS,
            "split": EN_SPLIT,
            "messages": EN_MESSAGES,
        },
        "german": {
            "ones": DE_ONES,
            "teens": DE_TEENS,
            "tens": DE_TENS,
            "one_joined": DE_ONE_JOINED,
            "and_piece": DE_AND,
            "hundred": DE_HUNDRED,
            "thousand": DE_THOUSAND,
        },
    }


def _check_range(n: int) -> None:
    if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= MAX_NUMBER:
        raise ValueError(f"numbers run from 0 to {MAX_NUMBER:,}".replace(",", " ") + f"; got {n!r}")


def _english_below_1000(n: int) -> list[str]:
    words: list[str] = []
    hundreds, rest = divmod(n, 100)
    if hundreds:
        words += [EN_ONES[hundreds], EN_HUNDRED]
    if 10 <= rest < 20:
        words.append(EN_TEENS[rest - 10])
    else:
        tens, ones = divmod(rest, 10)
        if tens:
            words.append(EN_TENS[tens])
        if ones:
            words.append(EN_ONES[ones])
    return words


def to_english(n: int) -> list[str]:
    """731015 -> ['seven', 'hundred', 'thirty', 'one', 'thousand', 'fifteen']."""
    _check_range(n)
    if n == 0:
        return ["zero"]
    thousands, rest = divmod(n, 1000)
    words = _english_below_1000(thousands) + [EN_THOUSAND] if thousands else []
    return words + _english_below_1000(rest)


def _german_below_1000(n: int, final: bool) -> list[str]:
    """German pieces of 1..999. `final` says the group ends the number (1 is then "eins")."""
    pieces: list[str] = []
    hundreds, rest = divmod(n, 100)
    if hundreds:
        pieces += [DE_ONE_JOINED if hundreds == 1 else DE_ONES[hundreds], DE_HUNDRED]
    if 10 <= rest < 20:
        pieces.append(DE_TEENS[rest - 10])
    else:
        tens, ones = divmod(rest, 10)
        if ones and tens:  # the ones come first: 42 is "zwei und vierzig"
            pieces += [DE_ONE_JOINED if ones == 1 else DE_ONES[ones], DE_AND, DE_TENS[tens]]
        elif ones:
            pieces.append(DE_ONE_JOINED if ones == 1 and not final else DE_ONES[ones])
        elif tens:
            pieces.append(DE_TENS[tens])
    return pieces


def to_german_pieces(n: int) -> list[str]:
    """17000 -> ['siebzehn', 'tausend']; 21 -> ['ein', 'und', 'zwanzig']."""
    _check_range(n)
    if n == 0:
        return ["null"]
    thousands, rest = divmod(n, 1000)
    pieces = _german_below_1000(thousands, final=False) + [DE_THOUSAND] if thousands else []
    return pieces + (_german_below_1000(rest, final=True) if rest else [])


def join_german(pieces: list[str]) -> str:
    """Pieces to the written word: ['zwei', 'und', 'vierzig'] -> 'zweiundvierzig'."""
    return "".join(pieces)


def english_word_count(n: int) -> int:
    return len(to_english(n))


_EN_VALUE = (
    {w: i for i, w in enumerate(EN_ONES)}
    | {w: 10 + i for i, w in enumerate(EN_TEENS)}
    | {w: 10 * i for i, w in enumerate(EN_TENS) if w}
)


def from_english(text: str) -> int:
    """Canonical English number words back to the number; raises ValueError with a reason.

    Accepts "and" and hyphens ("one hundred and forty-two") but otherwise only the canonical form
    that to_english writes, so that every accepted text names exactly one number.
    """
    words = [w for w in re.split(EN_SPLIT, text.strip().lower()) if w and w not in EN_FILLERS]
    if not words:
        raise ValueError(EN_MESSAGES["no_words"])
    unknown = [w for w in words if w not in _EN_VALUE and w not in (EN_HUNDRED, EN_THOUSAND)]
    if unknown:
        raise ValueError(EN_MESSAGES["unknown_word"].format(word=unknown[0]))
    total, group = 0, 0
    for w in words:
        if w == EN_THOUSAND:
            total, group = total + max(group, 0) * 1000, 0
        elif w == EN_HUNDRED:
            group *= 100
        else:
            group += _EN_VALUE[w]
    n = total + group
    if n > MAX_NUMBER or words != to_english(n):
        raise ValueError(EN_MESSAGES["ill_formed"].format(words=" ".join(words)))
    return n
