"""The whole numbers an address carries besides the reader's input (a step, a scene file's n and m), checked
before they are converted: ASCII digits only and a bounded length. Python's `str.isdigit` also accepts "²",
"①" and every script's digits, which `int()` refuses or reads, and `int()` refuses a run of 4 301 digits:
each of those was a 500."""

from __future__ import annotations

ASCII_DIGITS = frozenset("0123456789")


def whole_number(text: str | None, digits: int = 6) -> int | None:
    """`text` as a whole number where it is 1 to `digits` ASCII digits; None for anything else."""
    if not text or len(text) > digits or not set(text) <= ASCII_DIGITS:
        return None
    return int(text)
