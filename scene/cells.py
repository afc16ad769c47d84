"""Cells: where each entry of a block stands, how high it is drawn and in what colour.

The one Python definition of the cell rule (the three.js stage implements the same rule in its
shader; the pythreejs view, scene/notebook.py, and the tests use these functions):

- Position: cell (r, c) of a block has its centre at (x + col_x(c) + 0.5, y − r − 0.5, 0); its box
  has a FOOTPRINT × FOOTPRINT square and stands on the z = 0 plane, up to z = height (down, if
  negative). FOOTPRINT and MAX_HEIGHT are the scene's (`scene.measures.CELL`, sent as `scene.cell`).
- How a tensor lies as a block (`drawn`, the one place that decides it, for the layout, this rule and
  the notebook): a block drawn `transposed` shows tensor entry (c, r) at cell (r, c); a 1-D tensor
  lies as one row (ids stand as one column); a 0-D one is 1 × 1. Head slices are columns of their
  block, `HEAD_GAP` apart (`col_x`).
- Height: value / max|value| of the block × MAX_HEIGHT, signed (kinds value, relu, masked);
  probabilities (kind bar, a softmax), ids and booleans are flat tiles (FLAT): a probability is
  read by its colour alone (the camera looks at the blocks nearly face-on, where heights barely
  show). No box is thinner than MIN_HEIGHT, so a zero still shows.
- Colour: value, relu and masked cells take value / max|value| (−1…1 onto 0…1) along the diverging
  stops (evenly spaced, ends included), linearly between neighbouring stops; probabilities take
  the probability (0…1) along the sequential stops, drawn unlit so the screen shows that colour;
  a ReLU output of exactly 0 is `relu_zero`; booleans are `bool_true` or `masked` (false: the
  cell is masked out); ids are `ids`.
  A −∞ entry (a masked score) is low and `masked` in any kind.
- Mark: the largest probability of each row of a bar block (its distribution: the softmax's last
  axis; a column of a block drawn transposed), ties all marked, is outlined in `row_max`, the
  outline `mark_width` of the cell's side wide (the stage draws it; the notebook view does not).
"""

from __future__ import annotations

import numpy as np

from scene.document import Block
from scene.measures import CELL, HEAD_GAP

FOOTPRINT = CELL["footprint"]  # a cell's square (the pitch is 1)
MAX_HEIGHT = CELL["max_height"]  # the height of the block's largest |value|, or of a probability of 1
FLAT = CELL["flat_height"]  # ids and booleans
MASKED_HEIGHT = CELL["masked_height"]  # a −∞ entry
MIN_HEIGHT = CELL["min_height"]


def drawn(a: np.ndarray, transposed: bool) -> np.ndarray:
    """A tensor as it lies in its block, (rows, cols): transposed or not; a vector as one row, integer
    ids as one column; a scalar as 1 × 1."""
    if a.ndim == 0:
        return a.reshape(1, 1)
    if a.ndim == 1:
        return a.reshape(-1, 1) if a.dtype.kind == "i" else a.reshape(1, -1)
    return a.T if transposed else a


def drawn_shape(shape: tuple[int, ...], dtype: str, transposed: bool) -> tuple[int, int]:
    """The drawn rows and columns of a tensor of this shape and dtype (`drawn`, without its values)."""
    rows, cols = drawn(np.broadcast_to(np.zeros((), dtype=dtype), shape), transposed).shape
    return int(rows), int(cols)


def drawn_values(block: Block, value) -> np.ndarray:
    """A block's tensor as float64 (rows, cols) in drawn order; −∞ stays −∞."""
    return drawn(np.asarray(value), block.transposed).astype(np.float64)


def head_gap_every(cols: int, head_cols: int) -> int:
    """Every how many columns a block of `cols` columns has a head gap (0: none): only where whole heads
    of `head_cols` columns, more than one, fill it."""
    return head_cols if head_cols and cols % head_cols == 0 and cols > head_cols else 0


def drawn_width(cols: int, gap_every: int) -> int:
    return cols + (cols // gap_every - 1) * HEAD_GAP if gap_every else cols


def col_x(gap_every: int, c: int) -> float:
    """Where column c starts inside its block: the head gaps before it added."""
    return c + (c // gap_every) * HEAD_GAP if gap_every else c


def row_y(b: Block, r: float) -> float:
    """The centre line of row r of a block."""
    return b.y - r - 0.5


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
    if block.kind in ("bar", "ids", "bool"):
        h = np.full(v.shape, FLAT)
    else:
        h = safe / block_scale(drawn) * MAX_HEIGHT
    h = np.where(inf, MASKED_HEIGHT, h)
    return np.where(np.abs(h) < MIN_HEIGHT, np.where(h < 0, -MIN_HEIGHT, MIN_HEIGHT), h)


def hex_rgb(colour: str) -> np.ndarray:
    s = colour.lstrip("#")
    return np.array([int(s[i : i + 2], 16) / 255 for i in (0, 2, 4)])


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
