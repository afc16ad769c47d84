"""Every ANATOMY_* environment variable is a field of one Settings object (app/settings.py), read there and
nowhere else, and the README's table of settings lists exactly those fields."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from app.settings import PREFIX, Settings

ROOT = Path(__file__).resolve().parents[2]
SETTINGS_MODULE = ROOT / "app" / "settings.py"
READERS = ("app", "research", "scene", "article", "recorder", "model", "bench", "scripts")  # Python that may read


def readme_variables() -> list[str]:
    """The first column of the README's table of settings, in order."""
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Settings\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `(ANATOMY_\w+)` \|", section, re.M)


def environment_reads(source: str) -> list[str]:
    """The ANATOMY_* names a module reads from os.environ or os.getenv (a subscript, .get, or getenv)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Subscript):
            key, where = node.slice, node.value
        elif isinstance(node, ast.Call) and node.args:
            key, where = node.args[0], node.func
        else:
            continue
        text = ast.unparse(where)
        if (
            ("environ" in text or "getenv" in text)
            and isinstance(key, ast.Constant)
            and str(key.value).startswith(PREFIX)
        ):
            found.append(key.value)
    return found


def test_the_readme_lists_exactly_the_fields_of_settings():
    fields = [PREFIX + name.upper() for name in Settings.model_fields]
    assert readme_variables() == fields


def test_every_field_says_what_it_does():
    assert all(f.description for f in Settings.model_fields.values())


def test_no_module_but_the_settings_module_reads_an_anatomy_variable():
    readers = {
        str(p.relative_to(ROOT)): names
        for room in READERS
        for p in (ROOT / room).rglob("*.py")
        if "__pycache__" not in p.parts and p != SETTINGS_MODULE and (names := environment_reads(p.read_text()))
    }
    assert not readers, f"read app.settings.settings instead: {readers}"


@pytest.mark.parametrize(
    "source, name",
    [
        ('os.environ.get("ANATOMY_PORT", "1")', "ANATOMY_PORT"),
        ('os.environ["ANATOMY_X"]', "ANATOMY_X"),
        ('os.getenv("ANATOMY_HOST")', "ANATOMY_HOST"),
    ],
)
def test_the_check_sees_a_read(source, name):
    assert environment_reads(source) == [name]


def test_a_variable_sets_its_field(monkeypatch):
    monkeypatch.setenv("ANATOMY_CACHE_MB", "64")
    monkeypatch.setenv("ANATOMY_COMPRESS", "0")
    s = Settings()
    assert s.cache_mb == 64 and s.compress is False and s.port == 8000
