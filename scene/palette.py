"""Colours: published palettes (scene/palettes/README.md), sampled into the scene's palette; nothing
else picks colours for values."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

PALETTES = Path(__file__).resolve().parent / "palettes"


@functools.cache
def read_palette(name: str) -> np.ndarray:
    return np.loadtxt(PALETTES / f"{name}.txt")  # (256, 3) sRGB in 0..1


def _hex(rgb: np.ndarray) -> str:
    return "#" + "".join(f"{round(float(v) * 255):02x}" for v in rgb)


def sample(table: np.ndarray, n: int = 33) -> list[str]:
    """n evenly spaced entries of a 256-entry table, ends included (n odd keeps the centre)."""
    idx = np.round(np.linspace(0, len(table) - 1, n)).astype(int)
    return [_hex(table[i]) for i in idx]


def palette() -> dict:
    return {
        "diverging": sample(read_palette("cet-cbd1")),  # values, centred on 0 (Kovesi's CET-CBD1)
        "sequential": sample(read_palette("batlow")),  # probabilities 0..1 (Crameri's batlow)
        "masked": "#7a1020",  # −∞: dark red
        "relu_zero": "#2a2c31",  # a ReLU unit that is off
        "bool_true": "#c8c8c2",
        "ids": "#8c93a6",
        "absent": "#a0709a",  # compare mode: a cell the other input does not have (drawn hatched, never as 0)
        "row_max": "#ffffff",  # the outline of the largest probability in a row
        "background": "#16181d",
        "labels": {"block": "#ece8df", "param": "#c9d3e6", "station": "#f1c27d", "token": "#ffe9a8"},
        "marks": {"chosen": "#ffffff", "reference": "#ff5fd2"},  # rings: the piece written, the reference
        "connectors": {"thread": "#9aa3b5", "rail": "#9b6bff", "arc": "#ff9a3c", "tie": "#2ec4b6", "loop": "#ffd23f"},
        "source": "P. Kovesi, CET-CBD1 (arXiv:1509.03700); F. Crameri, batlow (doi:10.5281/zenodo.1243862)",
    }
