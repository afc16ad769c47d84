"""The command lines: translate (python -m model), trace (python -m recorder), and one-line errors for bad
arguments."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, package: str = "model") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", package, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_translate_prints_number_english_and_german_per_input():
    r = run("translate", "42", "forty two", "17 000")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "42\tforty two\tzweiundvierzig",
        "42\tforty two\tzweiundvierzig",
        "17000\tseventeen thousand\tsiebzehntausend",
    ]


def test_trace_prints_the_graph_as_json():
    r = run("42", package="recorder")
    assert r.returncode == 0, r.stderr
    t = json.loads(r.stdout)
    assert t["input"]["german"] == "zweiundvierzig"
    assert {n["op"] for n in t["nodes"]} >= {"Gather", "Gemm", "Softmax", "LayerNormalization", "Where", "ArgMax"}


@pytest.mark.parametrize(
    ("package", "args"),
    [
        ("model", ["translate", "abc"]),
        ("model", ["translate", "-4"]),
        ("recorder", ["1000000"]),
        ("recorder", []),
        ("recorder", ["42", "43"]),
        ("model", ["trace", "42"]),
        ("model", ["nonsense"]),
        ("model", []),
        ("model", ["train", "--processes", "0"]),
        ("model", ["train", "--processes", "two"]),
    ],
)
def test_a_bad_argument_gets_one_line_and_a_nonzero_exit(package, args):
    r = run(*args, package=package)
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
