"""One number formatter: article/format.py (Jinja, live values, research tables) and static/js/format.js (the
page's scripts) print every value of one table the same way, and the pages use the thin space."""

from __future__ import annotations

import json
import math
import random
import re
import subprocess
from pathlib import Path

import pytest

from article.format import THIN_SPACE, format_number

ROOT = Path(__file__).resolve().parents[2]
FORMATS = [
    "text",
    "int",
    "fixed0",
    "fixed1",
    "fixed2",
    "fixed3",
    "fixed4",
    "fixed9",
    "pct0",
    "pct1",
    "pct2",
    "sci0",
    "sci1",
    "sci3",
    "sig1",
    "sig3",
    "sig4",
    "sig6",
]


def table() -> list:
    fixed = [
        0,
        -0.0,
        1,
        -1,
        0.5,
        1.5,
        2.5,
        -0.5,
        -1.5,
        -2.5,
        0.125,
        0.375,
        -0.125,
        1.005,
        1.25,
        0.05,
        0.0005,
        61472,
        999,
        1000,
        -1234567,
        1234567.891,
        0.47139,
        0.9995,
        0.99995,
        0.0001234,
        1e-7,
        1.5e-7,
        123456789012,
        1e21,
        2.5e21,
        1 / 3,
        2 / 3,
        0.1 + 0.2,
        1e-300,
        5e-324,
        1.7976931348623157e308,
        math.inf,
        -math.inf,
        math.nan,
        100.0,
        48896,
        9.9996,
        99999.5,
        0.00001,
        12345.678,
        -0.001,
        -0.0004,
        4.35,
        0.045,
        1e16,
        123e18,
        True,
        False,
        None,
        "zwei",
        ["a", "b"],
        [1, 2.5, None],
    ]
    rng = random.Random(9)
    fuzz = [rng.choice([-1, 1]) * rng.randrange(1, 10**7) / 2 ** rng.randrange(0, 12) for _ in range(150)]
    fuzz += [rng.uniform(-1, 1) * 10 ** rng.randrange(-9, 12) for _ in range(150)]
    fuzz += [round(rng.uniform(0, 1000), rng.randrange(0, 5)) for _ in range(100)]
    return fixed + fuzz


def js_literal(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ",".join(map(js_literal, v)) + "]"
    if isinstance(v, float) and not math.isfinite(v):
        return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
    return repr(v)  # the shortest digits that read back to the same double, in JavaScript as in Python


@pytest.mark.node
def test_python_and_javascript_print_every_value_alike():
    values = table()
    script = (
        f"import {{ formatNumber }} from './static/js/format.js';\n"
        f"const values = [{','.join(map(js_literal, values))}];\n"
        f"const formats = {json.dumps(FORMATS)};\n"
        "console.log(JSON.stringify(values.map((v) => formats.map((f) => formatNumber(v, f)))));\n"
    )
    out = subprocess.run(
        ["node", "--input-type=module", "-e", script], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    ).stdout
    js = json.loads(out)
    differ = [
        (v, f, format_number(v, f), j)
        for v, row in zip(values, js)
        for f, j in zip(FORMATS, row)
        if format_number(v, f) != j
    ]
    assert not differ, differ[:20]


@pytest.mark.parametrize(
    "value, fmt, text",
    [
        (61472, "int", "61\u2009472"),
        (999, "int", "999"),
        (-1234567, "int", "-1\u2009234\u2009567"),
        (2.5, "int", "3"),
        (-2.5, "int", "-2"),
        (0.47139, "fixed3", "0.471"),
        (0.125, "fixed2", "0.13"),
        (0.9995, "pct1", "100.0%"),
        (0.5, "fixed2", "0.50"),
        (-0.0, "fixed2", "0.00"),
        (1.2e-7, "sci1", "1.2·10^-7"),
        (0.0012, "sci1", "1.2·10^-3"),
        (0, "sci1", "0"),
        (1.23456, "sig4", "1.235"),
        (48896.0, "sig4", "4.89·10^4"),
        (0.5, "sig4", "0.5"),
        (["a", "b"], "text", "a b"),
        (None, "fixed3", "–"),
        (True, "text", "yes"),
        (1e-7, "text", "1e-7"),
    ],
)
def test_named_formats(value, fmt, text):
    assert format_number(value, fmt) == text


def test_an_unknown_format_is_an_error():
    with pytest.raises(ValueError, match="unknown number format"):
        format_number(1, "fixed")


def test_every_page_prints_the_parameter_count_with_a_thin_space(client):
    count = format_number(client.get("/api/model").json()["parameter_count"], "int")
    assert THIN_SPACE in count
    for path in ("/", "/about"):
        html = client.get(path).text
        assert count in html, path
        digits = re.escape(count.replace(THIN_SPACE, ""))
        assert not re.search(rf"{digits[:2]}[ ,\u00a0\u202f]{digits[2:]}", html), f"{path} spells it another way"


def test_no_script_or_template_formats_numbers_on_its_own():
    """toFixed, toExponential, toLocaleString, digit grouping and %-formats live in the two formatters only."""
    own = re.compile(r"toFixed|toExponential|toPrecision|toLocaleString|\\B\(\?=|\{:,\}|\"%\.\d+f\"|\|format\(")
    files = [*sorted((ROOT / "static").rglob("*.js")), *sorted((ROOT / "templates").glob("*.html"))]
    found = [
        f"{f.relative_to(ROOT)}: {m.group()}"
        for f in files
        if f.name != "format.js"
        for m in own.finditer(f.read_text(encoding="utf-8"))
    ]
    assert not found, found
