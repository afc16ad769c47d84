"""Cells: where each entry of a block stands, how high it is drawn and in what colour.

The one Python definition of the cell rule (the three.js stage implements the same rule in its
shader; the pythreejs view, scene/notebook.py, and the tests use these functions):

- Position: cell (r, c) of a block has its centre at (x + col_x(c) + 0.5, y − r − 0.5, 0); its box
  has a FOOTPRINT × FOOTPRINT square and stands on the z = 0 plane, up to z = height (down, if
  negative). FOOTPRINT and MAX_HEIGHT are the scene's (`scene.layout.CELL`, sent as `scene.cell`).
- Values in drawn order (`drawn_values`): a block drawn `transposed` shows tensor entry (c, r) at
  cell (r, c); a 1-D tensor lies as one row (ids stand as one column); a 0-D one is 1 × 1.
- Height: value / max|value| of the block × MAX_HEIGHT, signed (kinds value, relu, masked); a
  softmax bar is its probability (0…1) × MAX_HEIGHT; ids and booleans are flat tiles (FLAT).
  No box is thinner than MIN_HEIGHT, so a zero still shows.
- Colour: value, relu and masked cells take value / max|value| (−1…1 onto 0…1) along the diverging
  stops (evenly spaced, ends included), linearly between neighbouring stops; bars take the
  probability (0…1) along the sequential stops; a ReLU output of exactly 0 is `relu_zero`;
  booleans are `bool_true` or `masked` (false: the cell is masked out); ids are `ids`.
  A −∞ entry (a masked score) is low and `masked` in any kind.
"""

from __future__ import annotations

import numpy as np

from scene.layout import CELL, Block, col_x

FOOTPRINT = CELL["footprint"]  # a cell's square (the pitch is 1)
MAX_HEIGHT = CELL["max_height"]  # the height of the block's largest |value|, or of a probability of 1
FLAT = CELL["flat_height"]  # ids and booleans
MASKED_HEIGHT = CELL["masked_height"]  # a −∞ entry
MIN_HEIGHT = CELL["min_height"]


def drawn_values(block: Block, value) -> np.ndarray:
    """A block's tensor as float64 (rows, cols) in drawn order; −∞ stays −∞."""
    a = np.asarray(value, dtype=np.float64)
    if a.ndim == 2 and block.transposed:
        a = a.T
    return a.reshape(block.rows, block.cols)


def block_scale(drawn: np.ndarray) -> float:
    """max|value| over the finite entries, 1 for a block of zeros (the stage's uScale)."""
    finite = np.abs(drawn[np.isfinite(drawn)])
    m = float(finite.max()) if finite.size else 0.0
    return m or 1.0


def cell_centres(block: Block) -> np.ndarray:
    """(rows·cols, 3) centres in row-major drawn order, on the z = 0 plane."""
    r, c = np.divmod(np.arange(block.rows * block.cols), block.cols)
    x = block.x + np.array([col_x(block.gap_every, int(j)) for j in range(block.cols)])[c] + 0.5
    y = block.y - r - 0.5
    return np.stack([x, y, np.zeros_like(x)], axis=1).astype(np.float64)


def cell_heights(block: Block, drawn: np.ndarray) -> np.ndarray:
    """(rows·cols,) signed heights in world units."""
    v = drawn.ravel()
    inf = ~np.isfinite(v)
    safe = np.where(inf, 0.0, v)
    if block.kind == "bar":
        h = np.clip(safe, 0.0, 1.0) * MAX_HEIGHT
    elif block.kind in ("ids", "bool"):
        h = np.full(v.shape, FLAT)
    else:
        h = safe / block_scale(drawn) * MAX_HEIGHT
    h = np.where(inf, MASKED_HEIGHT, h)
    return np.where(np.abs(h) < MIN_HEIGHT, np.where(h < 0, -MIN_HEIGHT, MIN_HEIGHT), h)


def hex_rgb(colour: str) -> np.ndarray:
    s = colour.lstrip("#")
    return np.array([int(s[i:i + 2], 16) / 255 for i in (0, 2, 4)])


def on_stops(stops: list[str], t: np.ndarray) -> np.ndarray:
    """Colours at positions t (0…1) along evenly spaced stops, linear between neighbours: (N, 3)."""
    table = np.array([hex_rgb(s) for s in stops])
    p = np.clip(t, 0.0, 1.0) * (len(table) - 1)
    i = np.minimum(np.floor(p).astype(int), len(table) - 2)
    f = (p - i)[:, None]
    return table[i] * (1 - f) + table[i + 1] * f


def cell_colours(block: Block, drawn: np.ndarray, palette: dict) -> np.ndarray:
    """(rows·cols, 3) sRGB colours in 0…1."""
    v = drawn.ravel()
    inf = ~np.isfinite(v)
    safe = np.where(inf, 0.0, v)
    if block.kind == "bar":
        out = on_stops(palette["sequential"], safe)
    elif block.kind == "ids":
        out = np.tile(hex_rgb(palette["ids"]), (v.size, 1))
    elif block.kind == "bool":
        out = np.where((safe > 0.5)[:, None], hex_rgb(palette["bool_true"]), hex_rgb(palette["masked"]))
    else:
        out = on_stops(palette["diverging"], (safe / block_scale(drawn) + 1) / 2)
        if block.kind == "relu":
            out[safe == 0] = hex_rgb(palette["relu_zero"])
    out[inf] = hex_rgb(palette["masked"])
    return out
