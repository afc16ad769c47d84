"""How the site prints a number for the reader: one set of named formats, here for the server (Jinja's
`number` filter, the article's `data-live` slots, the research tables) and in static/js/format.js for
the page's scripts. tests/page/test_format.py runs both on one table of values and requires the same text.

    text     a number as JavaScript's String(n) writes it (1, 0.25, 1e-7); yes/no for a boolean
    int      rounded (halves up, as Math.round), thousands split by a thin space: 61 472
    fixedN   N decimals, as Number#toFixed(N) (halves away from zero, on the exact binary value)
    pctN     100·v with N decimals and a per-cent sign: 0.9995 → 100.0% (pct1)
    sciN     N decimals of the mantissa, as the page writes powers of ten: 1.2·10^-7 (sci1)
    sigN     N significant digits, trailing zeros dropped; sci style outside 10^-4 … 10^N (like %g)

N is one digit. Any format prints None as an en dash, a list as its items (each in the format) joined by
spaces, and anything that is not a number as it is. An unknown format name is an error.

"""

from __future__ import annotations

import math
import re
from decimal import ROUND_FLOOR, ROUND_HALF_UP, Decimal, localcontext

THIN_SPACE = "\u2009"
MISSING = "–"
PARAMETRIC = re.compile(r"^(fixed|pct|sci|sig)(\d)$")
FORMATS = ("text", "int", "fixedN", "pctN", "sciN", "sigN")


def format_number(value: object, fmt: str = "text") -> str:
    """`value` as the reader sees it, in the named format (see the module's docstring)."""
    m = PARAMETRIC.match(fmt)
    if fmt not in ("text", "int") and not m:
        raise ValueError(f"unknown number format {fmt!r}; known: {', '.join(FORMATS)}")
    if value is None:
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return " ".join(format_number(v, fmt) for v in value)
    if not isinstance(value, int | float):
        return str(value)
    v = float(value)
    if fmt == "text" or not math.isfinite(v):
        return _js_string(v)
    if fmt == "int":
        return _grouped(_round_half_up(v))
    kind, digits = m.group(1), int(m.group(2))
    if kind == "fixed":
        return _fixed(v, digits)
    if kind == "pct":
        return _fixed(100 * v, digits) + "%"
    if kind == "sci":
        return _sci(v, digits)
    return _sig(v, max(digits, 1))


# ---- JavaScript's number-to-text rules, on the exact binary value ----------------------------------


def _js_string(v: float) -> str:
    """Number::toString: the shortest digits that read back to v, in JavaScript's layout."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    if v == 0:
        return "0"
    sign = "-" if v < 0 else ""
    _, digit_tuple, exp = Decimal(repr(abs(v))).as_tuple()  # repr: the shortest round-trip digits
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    exp += len("".join(map(str, digit_tuple))) - len(digits)
    k, n = len(digits), exp + len(digits)  # v = 0.digits × 10^n
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + digits
    e = n - 1
    return sign + digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if e >= 0 else "-") + str(abs(e))


def _round_half_up(v: float) -> float:
    """Math.round: the nearest integer, halves toward +∞."""
    if abs(v) >= 2**52:
        return v
    with localcontext() as ctx:
        ctx.prec = 100
        return float((Decimal(v) + Decimal("0.5")).to_integral_value(rounding=ROUND_FLOOR))


def _grouped(v: float) -> str:
    if abs(v) >= 1e21 or not math.isfinite(v):
        return _js_string(v)
    digits = str(abs(int(v)))
    groups = [digits[max(0, i - 3) : i] for i in range(len(digits), 0, -3)][::-1]
    return ("-" if v < 0 else "") + THIN_SPACE.join(groups)


def _fixed(v: float, decimals: int) -> str:
    """Number#toFixed: the nearest multiple of 10^-decimals, halves away from zero; −0 prints as 0."""
    if abs(v) >= 1e21:
        return _js_string(v)
    with localcontext() as ctx:
        ctx.prec = 100
        d = Decimal(v if v != 0 else 0.0).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
    return format(d, "f")


def _mantissa(v: float, decimals: int) -> tuple[str, int]:
    """Number#toExponential's parts for v ≠ 0: the rounded mantissa's text (with its sign) and the exponent."""
    with localcontext() as ctx:
        ctx.prec = 100
        d = Decimal(abs(v))
        e = d.adjusted()
        step = Decimal(1).scaleb(-decimals)
        m = d.scaleb(-e).quantize(step, rounding=ROUND_HALF_UP)
        if m >= 10:
            m, e = (m / 10).quantize(step, rounding=ROUND_HALF_UP), e + 1
    return ("-" if v < 0 else "") + format(m, "f"), e


def _sci(v: float, decimals: int) -> str:
    if v == 0:
        return "0"
    mantissa, e = _mantissa(v, decimals)
    return f"{mantissa}·10^{e}"


def _strip(text: str) -> str:
    return text.rstrip("0").rstrip(".") if "." in text else text


def _sig(v: float, places: int) -> str:
    if v == 0:
        return "0"
    mantissa, e = _mantissa(v, places - 1)
    if -4 <= e < places:
        return _strip(_fixed(v, places - 1 - e))
    return f"{_strip(mantissa)}·10^{e}"
