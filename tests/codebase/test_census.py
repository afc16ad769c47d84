"""The census of rules written in both languages: every function of the Python packages whose name (in
snake_case) is also a function of the page's per-input rules (static/compute/) or of the engine
(static/engine/). A rule the page computes for one input is written once, in the page; the server keeps
the network, the recording, the program and each shape's structure. A shared name is a twin unless it is
one of the allowed kinds below, each with its reason; any other fails, and so does an allowance that
no longer matches anything (so the list stays the census, not a wish).

The twins the design allows are the number words (with their refusal messages: static/js/numbers.js,
static/compute/refusals.js) and number formatting (static/js/format.js), which both sides need and which
exhaustive parity tests hold equal (tests/page/test_numbers_js.py: all 1 000 000 numbers; tests/page/test_format.py:
the format table). Shared names that are not one rule written twice are listed, with what each side's
function does."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYTHON = ("model", "recorder", "article", "scene", "app", "research")
PAGE_RULES = ("static/compute", "static/engine")
DECLARED = re.compile(
    r"^\s*(?:export\s+)?(?:async\s+)?function\s+(\w+)"
    r"|^\s*(?:export\s+)?const\s+(\w+)\s*=\s*(?:async\s*)?(?:\([^)]*\)|\w+)\s*=>",
    re.M,
)

# the same name, not the same rule
NOT_TWINS = {
    "fill": "a refusal message's template (refusals.js: the number words' twin, tests/page/test_numbers_js.py) and a "
    "window's label; app/figures.py's fills the figures' HTML slots",
    "hex": "a code point as a refusal message writes it (refusals.js); scene/palette.py's is a colour",
    "beam_search": "the engine's beam search runs the program's decoding in the page (static/engine/ is the "
    "network, evaluated from the program recorder/program.py emits); model/decode.py's is torch's",
    "greedy": "the engine's greedy decoding over the program, as beam_search",
    "length_penalty": "the engine's, over the program's `decoding` settings, as beam_search",
    "decoder": "the engine's decoder pass over the program; recorder/record.py's records torch's",
    "instantiate": "the engine fills the program's lengths; recorder/program.py's probes the recorder",
    "plain": "a JSON value in the program (program.js); recorder/program.py's makes one",
    "read": "a program's input (program.js); recorder/program.py's and app/service/research_views.py's read files",
    "rotary": "the ONNX op the engine evaluates; the recorder records it",
    "slice": "the ONNX op the engine evaluates; recorder/onnx_model.py writes it",
    "compute": "an op's compute (engine/ops.js); app/routes/deeper.py's renders a page",
    "col_x": "where a column lies, for the input's windows (windows.js); scene/cells.py's for the notebook's cells",
    "row_y": "where a row lies, for the input's threads and labels (scene.js); scene/cells.py's for the structure",
    "part": "a phone's part of the input (windows.js); research/views.py's names an ablated part",
    "parts": "the input's phone parts (windows.js); model/ablation.py lists the switchable parts",
    "json_patched": "applies the structure's JSON difference (json_diff.js); app/service/json_diff.py writes it and "
    "checks it by patching back",
    "mean": "arithmetic",
    "norm": "arithmetic (a row's length); the Python ones are layer norms and names",
    "node": "a trace node by id (tensors.js)",
    "row": "a tensor's row (tensors.js)",
    "cell": "an exercise's evidence cell; research/views.py's is a table cell",
    "table": "a topic table; research/views.py's is a results table",
    "parameter_count": "step 25's question counts a station's tensors (exercises.js); article/figures.py counts "
    "the paper's base and big models",
    "weights_url": "which of the program's weights a request runs (trace.js); app/documents/schemas.py makes the URLs",
}


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def python_functions(root: Path, folders: tuple[str, ...]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for folder in folders:
        for path in (root / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("__"):
                    out.setdefault(node.name.lstrip("_"), set()).add(str(path.relative_to(root)))
    return out


def page_functions(root: Path) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for folder in PAGE_RULES:
        for path in (root / folder).rglob("*.js"):
            for m in DECLARED.finditer(path.read_text(encoding="utf-8")):
                out.setdefault(snake(m.group(1) or m.group(2)), set()).add(str(path.relative_to(root)))
    return out


def census(root: Path = ROOT, folders: tuple[str, ...] = PYTHON) -> dict[str, tuple[list[str], list[str]]]:
    """Each function name both languages define: (its Python modules, its page modules)."""
    py, js = python_functions(root, folders), page_functions(root)
    return {name: (sorted(py[name]), sorted(js[name])) for name in sorted(set(py) & set(js))}


def test_no_per_input_rule_is_written_in_both_languages():
    found = census()
    twins = {name: where for name, where in found.items() if name not in NOT_TWINS}
    assert twins == {}, f"written in Python and in the page: {twins}"


def test_every_allowance_still_names_a_shared_function():
    found = census()
    assert sorted(NOT_TWINS) == sorted(n for n in found if n in NOT_TWINS)


def test_a_rule_written_again_in_python_is_caught(tmp_path):
    """A planted copy of the worked row's choice (chooseWorked, static/compute/worked.js) in a Python module."""
    for folder in (*PYTHON, "static"):
        (tmp_path / folder).symlink_to(ROOT / folder)
    (tmp_path / "planted").mkdir()
    (tmp_path / "planted" / "copy.py").write_text("def choose_worked(t):\n    return t\n")
    assert "choose_worked" not in census(tmp_path)
    assert census(tmp_path, (*PYTHON, "planted"))["choose_worked"] == (
        ["planted/copy.py"],
        ["static/compute/worked.js"],
    )
