"""Nothing about the model is written in static/: its shape, the names of its tensors, the words on
its blocks and the tour all come from the scene (scene/layout.py, content/steps' front matter).

How this checks: every JavaScript and CSS file under static/ is searched for what a copy of the
model's knowledge would look like — a trace id (`enc.0.…`, `src.x0`, `out.probs`, …), a parameter
name (`W_q`, `W_2`, `ln.gamma`), a head index pattern (`h\\d`, `.h0`), a number of the shape as a
constant (`N_HEADS`, `D_K`, `√8`, `√32`, `65×32`), or a table of steps or views (`STEPS`, `VIEWS`).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

STATIC = Path(__file__).resolve().parents[2] / "static"
FILES = sorted(p for p in STATIC.rglob("*") if p.suffix in (".js", ".css"))
FORBIDDEN = {
    "a trace id": re.compile(r"""['"`/(](?:enc|dec|src|tgt|out|const)\.[a-z0-9_*\[\]]"""),
    "a parameter name": re.compile(r"\b(?:W_[qkvo12]|b_[qkvo12]|ln\.gamma|ln\.beta)\b"),
    "a head pattern": re.compile(r"\\.h\\d|\.h\d\b|\bh\\d"),
    "a shape constant": re.compile(
        r"\b(?:N_HEADS|D_K|D_MODEL|N_LAYERS|VOCAB_SIZE)\b|√\s*\d"
        r"|\b65\s*[×x]\s*32\b|\b32\s*[×x]\s*128\b"
    ),
    "a step or view table": re.compile(r"\b(?:STEPS|VIEWS)\b|\bview\s*:\s*['\"][a-z0-9-]+['\"]"),
    "a tensor-name regex": re.compile(
        r"[\^|(/]\s*(?:enc|dec|src|tgt|out)\\\."
        r"|\\\.(?:weights|masked|hidden|ids|scores|sum|concat|proj)\b"
    ),
}


def test_there_are_stage_files_to_check():
    assert any(p.parent.name == "stage" for p in FILES) and len(FILES) >= 8


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(STATIC)))
def test_no_knowledge_of_the_model_is_written_in_static(path):
    text = path.read_text(encoding="utf-8")
    found = [
        f"{what}: {m.group(0)!r} (line {text.count(chr(10), 0, m.start()) + 1})"
        for what, rx in FORBIDDEN.items()
        for m in rx.finditer(text)
    ]
    assert found == []


def test_the_check_catches_what_the_first_version_wrote():
    # lines from the first version's static/stage/*.js; each must be caught
    old = [
        "const N_HEADS = 4, D_K = 8;",
        "if (/\\.weights$|^out\\.probs$/.test(id)) return 'bar';",
        "E: 'E  (65×32, shared)', 'const.sqrt_d': '×√32'",
        "export const STEPS = [",
        "ids(stage, /^enc\\.0\\.self\\.h\\d\\.weights$/)",
        "if (id.endsWith('.W_2')) return 'W_{2}ᵀ';",
        "stage.block('src.x0')",
    ]
    for line in old:
        assert any(rx.search(line) for rx in FORBIDDEN.values()), line
