"""The scene: what the stage draws, computed from a trace, the model's config and the tour.

One description, two renderers (SPEC §4.1): the three.js stage (static/stage/) and the pythreejs
notebook view (scene/notebook.py) only draw what this module decides — every block (a trace node or
a parameter, one cell per entry) with its kind, label, description, station and position; the
stations and their titles; the connectors; the labels; the colours; and each step's subject, camera
view and animation targets. Pure Python and numpy, so a model of another shape draws unchanged.

Geometry (world units, one cell = 1, blocks in the z = 0 plane, y up): a block's (x, y) is its
top-left corner; cell (r, c) has its centre at (x + col_x(c) + 0.5, y − r − 0.5), where col_x adds
`HEAD_GAP` after every `gap_every` columns (the head slices of Q, K, V). What each block *is* comes
from the trace's own graph: the kind from its op and dtype, head gaps from the Slice nodes that cut
it, the transposed W₂ from the ReLU under it, token axes propagated through the ops.
"""

from __future__ import annotations

import copy
import fnmatch
import functools
import math
import re
from collections import OrderedDict
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from article.lessons import WORKED, worked_blocks
from article.tour import TourStep
from model.ablation import parts
from model.transformer import Config
from model.vocab import VOCAB
from recorder import paper_layout

FORMAT = "anatomy-scene/1"
HEAD_GAP = 1  # empty columns between head slices inside a block
V_GAP = 3  # between blocks stacked in a station: room for a label line
H_GAP = 4  # between blocks side by side
HEAD_COL_GAP = 2  # between the columns of two heads
STATION_GAP = 14  # between stations: room for the station's title
LABEL_ROOM = 2.2  # a block's label sits above its top edge; views keep room for it
TOWER_GAP = 24  # between E and each tower
# a cell: its square, its tallest; ids and booleans lie flat, a −∞ entry low, and nothing is thinner than the minimum
CELL = {"footprint": 0.86, "max_height": 2.4, "head_gap": HEAD_GAP,
        "flat_height": 0.15, "masked_height": 0.12, "min_height": 0.06}
VIEW_MARGIN = 1.03  # a step's subject fills 1/1.03 of the stage along its tighter dimension
FOV_DEG = 30.0  # both renderers' vertical field of view
FIT_EXTRA = 4.0  # the fit rule steps back this much more, so the nearest cells' heights stay inside the view
EXPLAIN_MARGIN = 1.08  # framing an explained cell's inputs keeps a little more room around them
# what a renderer's camera needs beyond each view: the fit rule's inputs (fit_distance)
CAMERA = {"fov_deg": FOV_DEG, "label_room": LABEL_ROOM, "margin": VIEW_MARGIN, "fit_extra": FIT_EXTRA,
          "explain_margin": EXPLAIN_MARGIN}
ELEVATION = 0.08  # enough to see the cells' heights, little enough to keep them square on screen
AZIMUTH = {"src": -0.08, "tgt": 0.08, "shared": 0.0}

PALETTES = Path(__file__).resolve().parent / "palettes"
NORM_OPS = ("LayerNormalization", "RMSNormalization")


# ---------------------------------------------------------------------------------------------
# The documents (serialised with dataclasses.asdict; the API documents them from these classes)

@dataclass
class Block:
    id: str
    op: str  # the ONNX operator that computed it, or "Parameter"
    kind: str  # how cells are drawn: value | bar | masked | relu | bool | ids
    label: str  # the name on the stage (^{…} superscript, _{…} subscript)
    description: str  # the inspector's first line
    station: str  # id of the station it sits in
    tower: str  # src | tgt | shared
    param: bool
    shape: list[int]  # the tensor's shape
    rows: int  # drawn rows and columns (a vector lies as a row; ids stand as a column)
    cols: int
    x: float
    y: float
    w: float  # drawn width, head gaps included
    gap_every: int = 0  # a gap after every gap_every columns (0: none)
    transposed: bool = False  # drawn as its transpose (cell (r, c) is tensor entry (c, r))
    row_axis: str | None = None  # source | target | vocab: what a row stands for
    col_axis: str | None = None
    value_axis: str | None = None  # vocab: the values are token ids
    inputs: list[str] = field(default_factory=list)
    raw: dict | None = None  # {of, factor, label}: the inspector shows the entry before scaling
    row_stats: bool = False  # the inspector shows the row's mean and standard deviation
    mask: str | None = None  # the boolean tensor that says which cells are masked


@dataclass
class SliceAlias:
    """A Slice node drawn inside the block it cuts (a head's columns of Q, K or V)."""

    id: str
    of: str
    col_offset: int
    cols: int


@dataclass
class Station:
    id: str
    title: str
    tower: str
    x: float
    y: float  # top edge
    w: float
    h: float


@dataclass
class Connector:
    kind: str  # thread | rail | arc | tie | loop
    color: str
    lines: list[list[list[float]]]  # polylines of [x, y, z] points


@dataclass
class Label:
    text: str
    x: float
    y: float
    size: float  # line height in world units
    role: str  # block | param | station | token
    anchor: str = "left"  # left | center | right
    baseline: str = "bottom"  # bottom | middle
    room: float = 0.0  # the widest it may grow to without running into its neighbour (0: any)


@dataclass
class View:
    box: list[float]  # [min_x, max_x, min_y, max_y] of what must be seen
    target: list[float]  # the look-at point
    azimuth: float
    elevation: float
    margin: float = VIEW_MARGIN


@dataclass
class SceneStep:
    step: int
    title: str
    subject: list[str]  # block ids the text talks about: lit and framed
    lit: list[str]  # every block lit (subject and context); empty: nothing is dimmed
    view: View
    animation: dict  # {name, …targets}


@dataclass
class Switch:
    """A part the reader can switch off (model/ablation.py), and where the stage offers it."""

    id: str  # the part, as /api/trace?ablate= names it
    kind: str  # head | sublayer
    label: str  # what the switch says
    station: str  # the station it belongs to
    block: str | None  # a head: its output block (the switch sits at its label); a sub-layer: None (at its title)
    off: bool  # switched off in this trace
    x: float  # where the stage puts the switch: beside the head's label or the station's title
    y: float
    anchor: str  # left | right: which side of the switch (x, y) is


@dataclass
class Scene:
    format: str
    config: dict
    cell: dict  # footprint, max_height, head_gap, flat/masked/min heights: how a cell is drawn (both renderers)
    palette: dict
    axes: dict[str, list[str]]  # token lists by axis name
    blocks: list[Block]
    slices: list[SliceAlias]
    stations: list[Station]
    connectors: list[Connector]
    labels: list[Label]
    bounds: list[float]
    overview: View
    steps: list[SceneStep]
    cells: int
    # what the inspector calls row i of a block whose rows stand for an axis; rows count from 0 everywhere,
    # and a decoder row is named by what it reads and what it writes
    row_names: dict[str, list[str]] = field(default_factory=dict)
    switches: list[Switch] = field(default_factory=list)  # every part that can be switched off, in model order
    lens: list[str] = field(default_factory=list)  # blocks of the logit lens: side nodes, off the forward path
    camera: dict = field(default_factory=lambda: dict(CAMERA))  # field of view and the fit rule's inputs

    def to_json(self) -> dict:
        return asdict(self)

    def block(self, block_id: str) -> Block:
        return next(b for b in self.blocks if b.id == block_id)


# ---------------------------------------------------------------------------------------------
# Colours: published palettes (scene/palettes/README.md), sampled

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
        "background": "#16181d",
        "labels": {"block": "#ece8df", "param": "#c9d3e6", "station": "#f1c27d", "token": "#ffe9a8"},
        "connectors": {"thread": "#9aa3b5", "rail": "#9b6bff", "arc": "#ff9a3c", "tie": "#2ec4b6",
                       "loop": "#ffd23f"},
        "source": "P. Kovesi, CET-CBD1 (arXiv:1509.03700); F. Crameri, batlow (doi:10.5281/zenodo.1243862)",
    }


# ---------------------------------------------------------------------------------------------
# The tensors: trace nodes and parameters, as the scene needs them

@dataclass
class Tensor:
    id: str
    op: str
    inputs: list[str]
    attrs: dict
    shape: tuple[int, ...]
    dtype: str


def tensors_of(trace, params: dict[str, np.ndarray]) -> dict[str, Tensor]:
    out = {pid: Tensor(pid, "Parameter", [], {}, tuple(np.shape(v)), "float32") for pid, v in params.items()}
    for n in trace.nodes:
        out[n.id] = Tensor(n.id, n.op, list(n.inputs), dict(n.attrs), tuple(n.value.shape), str(n.value.dtype))
    return out


def kind_of(t: Tensor) -> str:
    """How the cells are drawn, from the op and dtype (never from the id)."""
    if t.op == "Softmax":
        return "bar"
    if t.op == "Where":
        return "masked"
    if t.op == "Relu":
        return "relu"
    if t.dtype == "bool":
        return "bool"
    if t.dtype.startswith("int"):
        return "ids"
    return "value"


def token_axes(tensors: dict[str, Tensor], trace) -> dict[str, tuple[str | None, str | None]]:
    """What each tensor's rows and columns stand for (source or target tokens, the vocabulary),
    seeded at the inputs and carried through every op in the order computed."""
    axes: dict[str, tuple[str | None, str | None]] = {"E": ("vocab", None), "out.W_U": (None, "vocab")}
    for pid, t in tensors.items():
        if t.op == "Parameter" and pid not in axes:
            axes[pid] = (None, None)
    for n in trace.nodes:
        t = tensors[n.id]
        side = {"src": "source", "tgt": "target"}.get(n.id.split(".")[0])
        ins = [axes.get(i, (None, None)) for i in t.inputs]
        if t.op == "Constant":
            if t.id == "dec.mask":
                a = ("target", "target")
            elif side and len(t.shape) >= 1:
                a = (side, None)
            else:
                a = (None, None)
        elif t.op == "Gather":
            a = (ins[1][0], ins[0][1])
        elif t.op == "Gemm":
            a = (ins[0][0], ins[1][0] if t.attrs.get("transB") else ins[1][1])
        elif t.op == "MatMul":
            a = (ins[0][0], ins[1][1])
        elif t.op == "Transpose":
            a = (ins[0][1], ins[0][0])
        elif t.op == "Where":
            a = ins[1]
        elif t.op in ("Slice", "Concat"):
            a = (ins[0][0], None)
        elif t.op == "ArgMax":
            a = (ins[0][0], None)
        else:  # elementwise: Add, Mul, Relu, Softmax, LayerNormalization
            a = next((x for x, i in zip(ins, t.inputs) if len(tensors[i].shape) == len(t.shape)), (None, None))
        axes[n.id] = a
    return axes


# ---------------------------------------------------------------------------------------------
# Words: labels and descriptions (the one place they are written)

def label_of(t: Tensor, cfg: Config, memory: str | None) -> str:
    recipe = recipe_words(t, cfg, memory)
    if recipe:
        return recipe[0]
    i, last = t.id, t.id.split(".")[-1]
    d, dk, dff, v = cfg.d_model, cfg.d_k, cfg.d_ff, cfg.vocab_size
    side = "x" if i.startswith("src.") else "y"
    fixed = {"E": f"E  ({v}×{d}, shared)", "P": "P (learned positions)", "const.sqrt_d": f"×√{d}",
             "const.neg_inf": "−∞", "dec.mask": "causal mask", "out.ET": "Eᵀ (tied)",
             "out.logits": "logits = h·Eᵀ", "out.probs": "softmax: probabilities", "out.tokens": "argmax"}
    if i in fixed:
        return fixed[i]
    if i.startswith("lens."):  # the logit lens after a decoder layer
        return {"logits": "lens: h·Eᵀ", "probs": "lens: softmax", "tokens": "lens: argmax"}.get(last, i)
    if last in ("gate", "off"):  # a part switched off (model/ablation.py)
        return "×0" if last == "gate" else "switched off"
    if i.startswith(("src.", "tgt.")):
        return {"ids": "ids", "emb": f"E[{side}]", "scaled": f"E[{side}]·√{d}", "pe": "PE", "positions": "pos",
                "x0": f"{side}^{{(0)}}"}.get(last, i)
    if last.startswith(("W_", "b_")) and len(last) == 3 and last[2] in "qkvo":
        return f"{last[0]}^{{{last[2].upper()}}}"
    if last in ("q", "k", "v"):
        return last.upper()
    parts = i.split(".")
    if len(parts) >= 4 and parts[-2].startswith("h") and parts[-2][1:].isdigit():
        scale = "QKᵀ/√" + str(dk) if t.attrs.get("alpha", 1.0) != 1.0 else "QKᵀ"
        return {"scores": scale, "masked": "masked", "weights": "softmax",
                "out": f"head {int(parts[-2][1:]) + 1}"}.get(last, i)
    words = {"concat": "Concat(heads)", "proj": "Concat·W^{O}", "gamma": "γ", "beta": "β",
             "sum": "X + Sublayer(X)", "W_1": "W_{1}", "b_1": "b_{1}", "W_2": "W_{2}ᵀ", "b_2": "b_{2}",
             "hidden_pre": "xW_{1} + b_{1}", "hidden": f"ReLU (n × {dff})", "out": "FFN(x) = ReLU·W_{2} + b_{2}"}
    if last == "ln":
        return "LayerNorm = memory z" if i == memory else "LayerNorm"
    return words.get(last, i)


def description_of(t: Tensor, cfg: Config) -> str:
    recipe = recipe_words(t, cfg, None)
    if recipe:
        return recipe[1]
    i, last = t.id, t.id.split(".")[-1]
    d, dk, h, dff = cfg.d_model, cfg.d_k, cfg.n_heads, cfg.d_ff
    parts = i.split(".")
    head = int(parts[-2][1:]) + 1 if len(parts) >= 4 and parts[-2][:1] == "h" and parts[-2][1:].isdigit() else None
    fixed = {
        "E": "E, the shared embedding table (vocabulary × d_model)", "P": "P, learned position vectors",
        "dec.mask": "causal mask (row i reads columns 0…i)", "const.sqrt_d": "√d_model",
        "const.neg_inf": "−∞ (fills masked scores)", "out.ET": "Eᵀ, the tied output projection",
        "out.logits": "logits = h·Eᵀ", "out.probs": "output probabilities softmax(logits)",
        "out.tokens": "chosen token (argmax)",
    }
    if i in fixed:
        return fixed[i]
    if i.startswith("lens."):
        layer = int(parts[2]) + 1
        return {"logits": f"logit lens: decoder {layer}'s output · Eᵀ (not on the forward path)",
                "probs": f"logit lens: what the model would output if decoding stopped after decoder {layer}",
                "tokens": f"logit lens: the most probable piece after decoder {layer}"}.get(last, i)
    if last in ("gate", "off"):
        what = f"head {head}" if head is not None else "this sub-layer's branch"
        return (f"switched off: the zero that multiplies {what}" if last == "gate"
                else f"{what} × 0: switched off, nothing reaches the next step")
    side_words = {"ids": "token ids", "emb": "E[token], the looked-up rows", "scaled": f"E[token]·√{d}",
                  "pe": "positional encoding PE" if t.op != "Gather" else "learned positions P[pos]",
                  "positions": "positions 0, 1, 2, …", "x0": f"x⁽⁰⁾ = E[token]·√{d} + PE"}
    if i.startswith(("src.", "tgt.")) and last in side_words:
        return side_words[last]
    if head is not None:
        scaled = f"QKᵀ/√{dk}" if t.attrs.get("alpha", 1.0) != 1.0 else "QKᵀ (unscaled)"
        return {"scores": f"scores {scaled}, head {head}", "masked": f"masked scores, head {head}",
                "weights": f"attention weights softmax(·), head {head}",
                "out": f"head {head} output = weights·V"}.get(last, i)
    if last.startswith(("W_", "b_")) and len(last) == 3 and last[2] in "qkvo":
        m = last[2].upper()
        return f"W^{m} (d_in × d_out)" if last[0] == "W" else f"bias b^{m}"
    if last in ("q", "k", "v"):
        m = last.upper()
        return f"{m} = X·W^{m} + b^{m}"
    words = {"concat": f"Concat(head₁ … head{_subscript(h)})", "proj": "Concat·W^O + b^O",
             "sum": "residual sum X + Sublayer(X)", "ln": "LayerNorm(X + Sublayer(X))", "gamma": "LayerNorm gain γ",
             "beta": "LayerNorm bias β", "W_1": f"W₁ ({d} × {dff})", "b_1": "bias b₁", "hidden_pre": "x·W₁ + b₁",
             "hidden": "ReLU(x·W₁ + b₁)", "W_2": f"W₂ ({dff} × {d}), drawn transposed", "b_2": "bias b₂",
             "out": "FFN(x) = ReLU(·)·W₂ + b₂"}
    return words.get(last, i)


def _subscript(n: int) -> str:
    return str(n).translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))


def station_title(sid: str, cfg: Config | None = None) -> str:
    if sid in ("enc.norm", "dec.norm"):
        norm = "RMSNorm" if cfg is not None and cfg.norm == "rms" else "LayerNorm"
        return f"{'Encoder' if sid == 'enc.norm' else 'Decoder'} · final {norm}"
    if sid == "out" and cfg is not None and not cfg.tie_output:
        return "Linear (W_U, untied) and softmax"
    if sid == "src.emb":
        return "Input embedding"
    if sid == "tgt.emb":
        return "Output embedding (shifted right)"
    if sid == "out":
        return "Linear (Eᵀ) and softmax"
    if sid == "shared":
        return "Shared parameters"
    if sid.startswith("lens."):
        return f"Logit lens after decoder {int(sid.split('.')[-1]) + 1}"
    stack, layer, part = sid.split(".")
    name = {"self": "masked self-attention" if stack == "dec" else "self-attention", "cross": "cross-attention",
            "ffn": "feed-forward"}[part]
    return f"{'Encoder' if stack == 'enc' else 'Decoder'} {int(layer) + 1} · {name}"


# ---------------------------------------------------------------------------------------------
# Layout: a tiny box model (blocks, horizontal and vertical stacks), stations, towers

@dataclass
class _Node:
    t: str  # b | h | v | s (spacer)
    id: str = ""
    items: list[_Node] = field(default_factory=list)
    gap: float = 0
    align: str = "start"  # h: bottom | top; v: left
    w: float = 0
    h: float = 0
    missing: bool = False


def B(block_id: str, hold: float = 0) -> _Node:
    """A block; when the model has no such tensor, `hold` keeps its width free (so columns stay aligned)."""
    return _Node("b", id=block_id, w=hold)


def S(w: float) -> _Node:
    return _Node("s", w=w)


def H(items: list, gap: float = H_GAP, align: str = "bottom") -> _Node:
    return _Node("h", items=[i for i in items if i], gap=gap, align=align)


def V(items: list, gap: float = V_GAP) -> _Node:  # items bottom → top, left-aligned
    return _Node("v", items=[i for i in items if i], gap=gap)


def _measure(node: _Node, dims: dict[str, tuple[float, float]]) -> _Node:
    if node.t == "s":
        return node
    if node.t == "b":
        if node.id not in dims and node.w:
            node.t = "s"  # held room
            return node
        node.missing = node.id not in dims
        node.w, node.h = dims.get(node.id, (0, 0))
        return node
    for i in node.items:
        _measure(i, dims)
    items = [i for i in node.items if not i.missing]
    node.missing = not any(i.t != "s" for i in items)
    gaps = max(0, len(items) - 1) * node.gap
    if node.t == "h":
        node.w, node.h = sum(i.w for i in items) + gaps, max([i.h for i in items], default=0)
    else:
        node.w, node.h = max([i.w for i in items], default=0), sum(i.h for i in items) + gaps
    return node


def _place(node: _Node, x: float, y: float, pos: dict[str, tuple[float, float]]) -> None:
    """Places a measured node with its bottom-left corner at (x, y); pos[id] = (x, top y)."""
    if node.missing or node.t == "s":
        return
    if node.t == "b":
        pos[node.id] = (x, y + node.h)
        return
    cur = x if node.t == "h" else y
    for i in node.items:
        if i.missing:
            continue
        if node.t == "h":
            _place(i, cur, y + (node.h - i.h if node.align == "top" else 0), pos)
            cur += i.w + node.gap
        else:
            _place(i, x, cur, pos)
            cur += i.h + node.gap


def _embedding(side: str) -> _Node:
    """Bottom → top: the looked-up rows (ids beside them), scaled by √d, the positions, their sum."""
    const = "const.sqrt_d" if side == "src" else "const.neg_inf"
    return V([
        H([B(f"{side}.ids", hold=1), B(f"{side}.emb")], gap=2),
        H([B(const, hold=1), B(f"{side}.scaled")], gap=2),
        H([B(f"{side}.positions", hold=1), B(f"{side}.pe")], gap=2),
        H([S(1), B(f"{side}.x0"), B("dec.mask") if side == "tgt" else None], gap=2),
    ])


def _attention(p: str, heads: int) -> _Node:
    """SPEC §5.1, bottom → top: W^Q W^K W^V under Q K V (head slices with gaps), then per head the
    scores, the masked scores, the softmax and the head's output; Concat under W^O under the projection;
    the residual sum, γ and β, the LayerNorm."""
    proj = [V([B(f"{p}.W_{m}"), B(f"{p}.b_{m}"), B(f"{p}.{m}")]) for m in "qkv"]
    per_head = [V([B(f"{p}.h{i}.{k}") for k in ("scores", "masked", "weights", "out", "off", "gate")])
                for i in range(heads)]  # off and gate: only when the head is switched off
    return V([
        H(proj),
        H(per_head, gap=HEAD_COL_GAP),
        V([B(f"{p}.concat"), B(f"{p}.W_o"), B(f"{p}.b_o"), B(f"{p}.proj"), _switch(p)]),
        V([B(f"{p}.sum"), B(f"{p}.ln.gamma"), B(f"{p}.ln.beta"), B(f"{p}.ln")]),
    ])


def _feed_forward(p: str) -> _Node:
    """W₁ under the hidden layer (before and after ReLU), W₂ drawn transposed so its columns line up
    with the hidden units, then b₂ and the output, the residual sum, γ and β, the LayerNorm."""
    return V([B(f"{p}.{k}") for k in ("W_1", "b_1", "hidden_pre", "hidden", "W_2", "b_2", "out")]
             + [_switch(p)] + [B(f"{p}.{k}") for k in ("sum", "ln.gamma", "ln.beta", "ln")])


def _switch(p: str) -> _Node:
    """A sub-layer switched off: its zero gate beside the zeroed branch (absent otherwise)."""
    return H([B(f"{p}.gate"), B(f"{p}.off")], gap=2)


def _lens(layer: int) -> _Node:
    """The logit lens after a decoder layer, drawn like the output station it imitates."""
    p = f"lens.dec.{layer}"
    return V([B(f"{p}.logits"), H([B(f"{p}.probs"), B(f"{p}.tokens")], gap=2)])


def _output() -> _Node:
    return V([B("out.ET"), B("out.logits"), H([B("out.probs"), B("out.tokens")], gap=2)])


def _towers(cfg: Config) -> dict[str, list[tuple[str, _Node]]]:
    if not paper_layout(cfg):
        return _recipe_towers(cfg)
    src = [("src.emb", _embedding("src"))]
    tgt = [("tgt.emb", _embedding("tgt"))]
    for layer in range(cfg.n_layers):
        src += [(f"enc.{layer}.self", _attention(f"enc.{layer}.self", cfg.n_heads)),
                (f"enc.{layer}.ffn", _feed_forward(f"enc.{layer}.ffn"))]
        tgt += [(f"dec.{layer}.self", _attention(f"dec.{layer}.self", cfg.n_heads)),
                (f"dec.{layer}.cross", _attention(f"dec.{layer}.cross", cfg.n_heads)),
                (f"dec.{layer}.ffn", _feed_forward(f"dec.{layer}.ffn")),
                (f"lens.dec.{layer}", _lens(layer))]
    tgt.append(("out", _output()))
    return {"src": src, "tgt": tgt}


def col_x(gap_every: int, c: int) -> float:
    return c + (c // gap_every) * HEAD_GAP if gap_every else c


# ---------------------------------------------------------------------------------------------
# The scene

# A scene is mostly structure: the blocks, stations, views, rails and arcs follow from the graph's ids,
# ops, inputs, attributes and shapes alone, and every input with the same graph shares them. Only the
# tokens are the input's own: the axes' words, the row names, the token labels and the threads from
# E's rows. So the structure is built once per graph and kept (a cold trace's largest part after the
# model itself; bench/bench_decode.py), and each trace adds its tokens to a shallow copy. Nothing
# changes a scene after it is built, so the copies may share the structure's lists.
STRUCTURES: OrderedDict[tuple, Scene] = OrderedDict()
STRUCTURES_KEPT = 64  # source length × output length × ablation × model: a few dozen in practice


def build_scene(trace, cfg: Config, params: dict[str, np.ndarray], tour: list[TourStep]) -> Scene:
    key = _structure_key(trace, cfg, params, tour)
    base = STRUCTURES.get(key)
    if base is None:
        base = STRUCTURES[key] = _build_structure(trace, cfg, params, tour)
        while len(STRUCTURES) > STRUCTURES_KEPT:
            STRUCTURES.popitem(last=False)
    else:
        STRUCTURES.move_to_end(key)
    scene = copy.copy(base)
    scene.axes = _token_axes_words(trace)
    scene.row_names = row_names(trace)
    by_id = {b.id: b for b in scene.blocks}
    scene.connectors = [_threads(scene, by_id, trace)] + base.connectors
    scene.labels = base.labels + _token_labels(scene, trace)
    return scene


def _structure_key(trace, cfg: Config, params: dict[str, np.ndarray], tour: list[TourStep]) -> tuple:
    """Everything the structure reads: the graph (not its values), the parameters' shapes, the config,
    the tour and what is switched off."""
    graph = tuple((n.id, n.op, tuple(n.inputs), repr(n.attrs), n.value.shape, n.value.dtype.str)
                  for n in trace.nodes)
    return (graph, tuple((k, np.shape(v)) for k, v in params.items()), repr(cfg), repr(tour),  # 0.05 ms
            tuple(sorted(getattr(trace, "ablation", ()))),
            tuple(i for layer in getattr(trace, "lens", ()) for i in (layer.logits, layer.probs, layer.tokens)))


def _token_axes_words(trace) -> dict[str, list[str]]:
    return {"source": list(trace.source_tokens), "target": list(trace.target_tokens),
            "output": list(trace.output_tokens), "vocab": list(VOCAB.tokens)}


def _build_structure(trace, cfg: Config, params: dict[str, np.ndarray], tour: list[TourStep]) -> Scene:
    tensors = tensors_of(trace, params)
    axes = token_axes(tensors, trace)
    memory = _memory_id(trace)
    slices = [t for t in tensors.values() if t.op == "Slice"]
    blocks = _blocks(tensors, axes, cfg, memory, slices)
    stations, order = _lay_out(blocks, cfg)
    blocks.sort(key=lambda b: order.get(b.id, len(order)))  # reading order: keyboard Tab walks it
    by_id = {b.id: b for b in blocks}
    aliases = [SliceAlias(t.id, t.inputs[0], int(t.attrs["starts"][0]), int(t.shape[1])) for t in slices]
    bounds = _bounds(blocks)
    overview = View(box=bounds, target=_centre(bounds), azimuth=-0.12, elevation=0.08)
    scene = Scene(FORMAT, cfg.to_dict(), CELL, palette(), {}, blocks, aliases, stations, [], [], bounds,
                  overview, [], sum(b.rows * b.cols for b in blocks))
    scene.connectors = _connectors(scene, by_id, tensors, memory)
    scene.labels = _labels(scene)
    names = (tuple(b.id for b in scene.blocks), tuple((s.id, s.of) for s in scene.slices))
    scene.steps = [_step(s, scene, by_id, tensors, cfg, names) for s in tour]
    scene.switches = _switches(scene, cfg, set(getattr(trace, "ablation", ())))
    scene.lens = [i for layer in getattr(trace, "lens", ()) for i in (layer.logits, layer.probs, layer.tokens)
                  if i in by_id]
    return scene


def row_names(trace) -> dict[str, list[str]]:
    """The inspector's words for a row: the token a source or vocabulary row stands for; for a decoder
    row, the piece it reads and the piece it writes (row 0 reads <s> and writes the first piece)."""
    return {"source": [f"token “{t}”" for t in trace.source_tokens],
            "target": [f"reads “{a}”, writes “{b}”" for a, b in zip(trace.target_tokens, trace.output_tokens,
                                                                      strict=True)],
            "vocab": [f"token “{t}”" for t in VOCAB.tokens]}


def _switches(scene: Scene, cfg: Config, off: set[str]) -> list[Switch]:
    """A switch per part whose station is drawn: a head's on its output block's label, a sub-layer's on
    its station's title."""
    stations = {s.id: s for s in scene.stations}
    by_id = {b.id: b for b in scene.blocks}
    out = []
    for p in parts(cfg):
        st = stations.get(p.sublayer)
        if st is None:
            continue
        if p.kind == "head":
            b = by_id.get(f"{p.id}.out")
            if b is None:
                continue
            # above the head's output block, right-aligned with it: the label "head N" is at its left
            out.append(Switch(p.id, "head", f"head {p.head + 1}", p.sublayer, b.id, p.id in off,
                              b.x + b.w, b.y + 1.2, "right"))
        else:
            # the title sits over the station, toward the gap between the towers; the switch on its far side
            left = st.tower == "src"
            out.append(Switch(p.id, "sublayer", station_title(p.id), p.sublayer, None, p.id in off,
                              st.x - 1 if left else st.x + st.w + 1, st.y + STATION_GAP / 2,
                              "right" if left else "left"))
    return out


def _memory_id(trace) -> str | None:
    enc = [n.id for n in trace.nodes if n.id.startswith("enc.") and n.op in NORM_OPS]
    return enc[-1] if enc else None


def _blocks(tensors: dict[str, Tensor], axes: dict, cfg: Config, memory: str | None,
            slices: list[Tensor]) -> list[Block]:
    sliced = {s.inputs[0]: int(s.shape[1]) for s in slices}  # q, k, v → d_k
    for t in tensors.values():  # rotary Q and K: the tensor rotated has the same head columns
        if t.id in sliced and t.op == "RotaryEmbedding":
            sliced[t.inputs[0]] = sliced[t.id]
    headed = dict(sliced)
    for t in tensors.values():
        if t.id in sliced and t.op in ("Gemm", "MatMul") and t.inputs[1] in tensors \
                and tensors[t.inputs[1]].op == "Parameter":  # the weights and bias that make a sliced tensor
            for w in t.inputs[1:]:
                headed[w] = sliced[t.id]
        if t.op == "Concat":
            headed[t.id] = int(tensors[t.inputs[0]].shape[1])
    relu = {t.id for t in tensors.values() if t.op == "Relu"} | _gated_units(tensors)
    transposed = {t.inputs[1] for t in tensors.values() if t.op in ("Gemm", "MatMul") and t.inputs[0] in relu}
    out = []
    for t in tensors.values():
        if t.op == "Slice":
            continue
        rows, cols = _drawn_shape(t, t.id in transposed)
        gap = headed.get(t.id, 0) if cfg.n_heads > 1 else 0
        gap = gap if gap and cols % gap == 0 and cols > gap else 0
        ra, ca = axes.get(t.id, (None, None))
        if t.id in transposed:
            ra, ca = ca, ra
        b = Block(id=t.id, op=t.op, kind=kind_of(t), label=label_of(t, cfg, memory),
                  description=description_of(t, cfg), station="", tower="shared", param=t.op == "Parameter",
                  shape=list(t.shape), rows=rows, cols=cols, x=0.0, y=0.0,
                  w=cols + (cols // gap - 1) * HEAD_GAP if gap else cols, gap_every=gap,
                  transposed=t.id in transposed, row_axis=ra, col_axis=ca,
                  value_axis="vocab" if t.op in ("ArgMax",) or (t.op == "Constant" and t.dtype.startswith("int")
                                                                  and t.id.endswith(".ids")) else None,
                  inputs=list(t.inputs))
        if t.op == "Mul" and len(t.inputs) == 2 and tensors[t.inputs[1]].shape == ():
            b.raw = {"of": t.inputs[0], "factor_of": t.inputs[1],
                     "label": "raw E entry" if tensors[t.inputs[0]].op == "Gather" else "input"}
        b.row_stats = (t.op == "Add" and ".sum" in t.id) or t.op in NORM_OPS
        if t.op == "Where":
            b.mask = t.inputs[0]
        elif t.op in ("Gemm", "Softmax") and t.id.rsplit(".", 1)[-1] in ("scores", "weights"):
            b.mask = next((m for m in _mask_of(t, tensors)), None)
        out.append(b)
    return out


def _mask_of(t: Tensor, tensors: dict[str, Tensor]) -> list[str]:
    """The mask that applies to a head's scores or weights (the causal mask, in masked self-attention)."""
    prefix = t.id.rsplit(".", 1)[0]
    masked = tensors.get(prefix + ".masked")
    return [masked.inputs[0]] if masked else []


def _drawn_shape(t: Tensor, transposed: bool) -> tuple[int, int]:
    if len(t.shape) == 0:
        return 1, 1
    if len(t.shape) == 1:
        return (t.shape[0], 1) if t.dtype.startswith("int") else (1, t.shape[0])
    return (t.shape[1], t.shape[0]) if transposed else (t.shape[0], t.shape[1])


def _lay_out(blocks: list[Block], cfg: Config) -> tuple[list[Station], dict[str, int]]:
    """E (and P) at the bottom centre, the encoder tower on the left, the decoder tower on the right."""
    by_id = {b.id: b for b in blocks}
    dims = {b.id: (b.w, b.rows) for b in blocks}
    towers = {side: [(sid, _measure(node, dims), station_title(sid, cfg)) for sid, node in st]
              for side, st in _towers(cfg).items()}
    shared = _measure(H([B("E"), B("P")], gap=TOWER_GAP), dims)
    pos: dict[str, tuple[float, float]] = {}
    _place(shared, -shared.w / 2, -4 - shared.h, pos)
    inner = dims.get("E", (32, 0))[0] / 2 + TOWER_GAP
    stations = []
    for side, st in towers.items():
        width = max(node.w for _, node, _ in st)
        x0 = -inner - width if side == "src" else inner
        y = 8.0
        for sid, node, title in st:
            if node.missing:
                continue
            _place(node, x0, y, pos)
            stations.append(Station(sid, title, side, x0, y + node.h, node.w, node.h))
            for bid in _ids(node):
                by_id[bid].station, by_id[bid].tower = sid, side
            y += node.h + STATION_GAP
    # anything no station names (a tensor a future model adds) still gets drawn, in a row under E
    spare_x = dims.get("E", (32, 0))[0] / 2 + TOWER_GAP
    for b in blocks:
        if b.id in ("E", "P"):
            b.station = "shared"
        if b.id not in pos:
            pos[b.id] = (spare_x, -4.0 - 80)
            spare_x += b.w + H_GAP
            b.station = b.station or "shared"
        b.x, b.y = float(pos[b.id][0]), float(pos[b.id][1])
    e = by_id.get("E")
    if e:
        stations.append(Station("shared", station_title("shared"), "shared", e.x, e.y, e.w, e.rows))
    return stations, {bid: k for k, bid in enumerate(pos)}


def _ids(node: _Node) -> list[str]:
    if node.t == "b":
        return [] if node.missing else [node.id]
    return [i for item in node.items for i in _ids(item)]


def _rect(b: Block) -> list[float]:
    return [b.x, b.x + b.w, b.y - b.rows, b.y]


def _bounds(blocks: list[Block]) -> list[float]:
    rs = np.array([_rect(b) for b in blocks])
    return [float(rs[:, 0].min()), float(rs[:, 1].max()), float(rs[:, 2].min()), float(rs[:, 3].max())]


def _centre(box: list[float]) -> list[float]:
    return [(box[0] + box[1]) / 2, (box[2] + box[3]) / 2, 0.0]


def row_y(b: Block, r: float) -> float:
    return b.y - r - 0.5


def _bezier(a: tuple, c: tuple, e: tuple, n: int = 24) -> list[list[float]]:
    return _beziers([a], [c], [e], n)[0]


def _beziers(a: list, c: list, e: list, n: int = 24) -> list[list[list[float]]]:
    """Quadratic Bézier curves from each a through control c to e, n + 1 points each, to 3 decimals:
    one array expression for all of them (a trace's threads are 20–30 curves; point by point in Python
    they took 1 ms of a cold trace)."""
    t = np.linspace(0.0, 1.0, n + 1)[None, :, None]
    a, c, e = (np.asarray(v, dtype=np.float64)[:, None, :] for v in (a, c, e))
    return np.round((1 - t) ** 2 * a + 2 * (1 - t) * t * c + t * t * e, 3).tolist()


CONNECTOR_Z = 0.2  # connectors run just in front of the blocks' plane


def _threads(scene: Scene, by_id: dict[str, Block], trace) -> Connector:
    """From E's row of each token to its row of the embedding (left side for the source, right side for
    the target): the one connector that depends on the input's tokens."""
    z, starts, controls, ends = CONNECTOR_Z, [], [], []
    e = by_id.get("E")
    for n in trace.nodes:
        if n.op != "Gather" or n.inputs[0] != "E" or e is None:
            continue
        emb, ids = by_id[n.id], by_id.get(n.inputs[1])
        left_end = (ids.x if ids else emb.x) - 0.3
        src = emb.tower == "src"
        for r, tok in enumerate(trace.node(n.inputs[1]).value.tolist()):
            a = (e.x if src else e.x + e.w, row_y(e, tok), z)
            b = (left_end, row_y(emb, r), z)
            starts.append(a), ends.append(b)
            controls.append((a[0] - 30 if src else a[0] + 30, (a[1] + b[1]) / 2, 8))
    threads = _beziers(starts, controls, ends) if starts else []
    return Connector("thread", scene.palette["connectors"]["thread"], threads)


def _connectors(scene: Scene, by_id: dict[str, Block], tensors: dict[str, Tensor],
                memory: str | None) -> list[Connector]:
    """Every connector but the threads (`_threads`): they follow from the structure alone."""
    colors = scene.palette["connectors"]
    z = CONNECTOR_Z
    out = []
    e = by_id.get("E")
    # residual rails: the sub-layer's input X up the station's left side and into the sum
    rails = []
    for b in scene.blocks:
        t = tensors[b.id]
        if t.op != "Add" or not b.row_stats or not t.inputs or t.inputs[0] not in by_id:
            continue
        x = by_id[t.inputs[0]]
        st = next((s for s in scene.stations if s.id == b.station), None)
        margin = (st.x if st else b.x) - 3
        start = (x.x + 1, x.y + 0.3, z)
        rails.append([list(start), [start[0], x.y + 1.5, z], [margin, x.y + 1.5, z], [margin, row_y(b, 0), z],
                      [b.x - 0.3, row_y(b, 0), z]])
    out.append(Connector("rail", colors["rail"], rails))
    # memory arcs: z to every cross-attention's W^K and W^V (the Gemms that read the memory)
    arcs = []
    mem = by_id.get(memory) if memory else None
    if mem:
        for t in tensors.values():
            if t.op in ("Gemm", "MatMul") and t.inputs and t.inputs[0] == memory and t.inputs[1] in by_id:
                w = by_id[t.inputs[1]]
                a = (mem.x + mem.w, mem.y - mem.rows / 2, z)
                b = (w.x + w.w / 2, w.y - w.rows - 0.3, z)
                arcs.append(_bezier(a, ((a[0] + b[0]) / 2, max(a[1], b[1]) + 12, 40), b, 40))
    out.append(Connector("arc", colors["arc"], arcs))
    # the tie: E at the bottom to Eᵀ at the top (the Transpose of E), through the gap between towers
    ties = []
    for t in tensors.values():
        if t.op == "Transpose" and t.inputs == ["E"] and e and t.id in by_id:
            et = by_id[t.id]
            gx = e.x + e.w + 6
            ties.append([[e.x + e.w, e.y - 0.5, z], [gx, e.y - 0.5, z], [gx, et.y - et.rows / 2, z],
                         [et.x - 0.3, et.y - et.rows / 2, z]])
    out.append(Connector("tie", colors["tie"], ties))
    # the loop: the chosen tokens (ArgMax) back into the decoder's input, one row down
    loops = []
    argmax = next((by_id[t.id] for t in tensors.values() if t.op == "ArgMax" and t.id in by_id), None)
    tgt_ids = next((by_id[b.inputs[1]] for b in scene.blocks
                    if b.op == "Gather" and b.inputs[0] == "E" and b.tower == "tgt" and b.inputs[1] in by_id), None)
    if argmax and tgt_ids:
        out_x, y0 = scene.bounds[1] + 6, tgt_ids.y - tgt_ids.rows - 4
        mid = tgt_ids.x + tgt_ids.w / 2
        loops.append([[argmax.x + argmax.w + 0.3, row_y(argmax, 0), z], [out_x, row_y(argmax, 0), z],
                      [out_x, y0, z], [mid, y0, z], [mid, tgt_ids.y - tgt_ids.rows - 0.3, z]])
    out.append(Connector("loop", colors["loop"], loops))
    return out


def _labels(scene: Scene) -> list[Label]:
    """Block and station labels; the token labels are `_token_labels`."""
    out = []
    for b in scene.blocks:
        small = b.rows == 1 and b.cols == 1
        head = b.op != "Parameter" and any(p[:1] == "h" and p[1:].isdigit() for p in b.id.split("."))
        out.append(Label(b.label, b.x, b.y + 0.45, 1.1 if small else 1.5, "param" if b.param else "block",
                         room=b.w + 1.7 if head else max(b.w + 3.5, 8)))
    for s in scene.stations:
        if s.id == "shared":
            continue
        left = s.tower == "src"
        out.append(Label(s.title, s.x + s.w if left else s.x, s.y + STATION_GAP / 2, 6.5, "station",
                         anchor="right" if left else "left", baseline="middle", room=s.w))
    return out


def _token_labels(scene: Scene, trace) -> list[Label]:
    """Token names beside the id columns and the chosen tokens."""
    out = []
    for b in scene.blocks:
        if b.value_axis != "vocab":
            continue
        tokens = (VOCAB.tokens_of(trace.node(b.id).value.tolist()) if b.op == "ArgMax"
                  else scene.axes.get(b.row_axis or "", []))
        for r, tok in enumerate(tokens[:b.rows]):
            if b.op == "ArgMax":
                out.append(Label(tok, b.x + b.w + 0.6, row_y(b, r), 0.85, "token", baseline="middle"))
            else:
                out.append(Label(tok, b.x - 0.6, row_y(b, r), 0.85, "token", anchor="right", baseline="middle"))
    return out


# ---------------------------------------------------------------------------------------------
# The tour: subjects, views, animation targets

def expand(globs: list[str], scene: Scene, cfg: Config, names: tuple | None = None) -> list[str]:
    """Block ids matching the globs ({last} is the last layer); a head slice stands for its block."""
    names = names or (tuple(b.id for b in scene.blocks), tuple((s.id, s.of) for s in scene.slices))
    out: dict[str, None] = {}
    for g in globs:
        out.update(dict.fromkeys(_matching(g.replace("{last}", str(cfg.n_layers - 1)), names)))
    return list(out)


@functools.lru_cache(maxsize=4096)  # the names depend on the model's shape, not on the input
def _matching(glob: str, names: tuple[tuple[str, ...], tuple[tuple[str, str], ...]]) -> tuple[str, ...]:
    match = re.compile(fnmatch.translate(glob)).match
    ids, aliases = names
    return tuple(dict.fromkeys([i for i in ids if match(i)] + [of for a, of in aliases if match(a)]))


def _step(s: TourStep, scene: Scene, by_id: dict[str, Block], tensors: dict[str, Tensor], cfg: Config,
          names: tuple) -> SceneStep:
    subject = expand(s.subject, scene, cfg, names)
    lit = subject + [i for i in expand(s.also, scene, cfg, names) if i not in subject]
    if s.view == "overview" or not subject:
        view = scene.overview
        if s.angle:
            view = View(scene.overview.box, scene.overview.target, s.angle[0], s.angle[1], scene.overview.margin)
    else:
        rs = np.array([_rect(by_id[i]) for i in subject])
        box = [float(rs[:, 0].min()), float(rs[:, 1].max()), float(rs[:, 2].min()), float(rs[:, 3].max()) + LABEL_ROOM]
        towers = {by_id[i].tower for i in subject}
        az = s.angle[0] if s.angle else AZIMUTH[towers.pop() if len(towers) == 1 else "shared"]
        el = s.angle[1] if s.angle else ELEVATION
        view = View(box, _centre(box), az, el)
    anim = ANIMATIONS.get(s.animation)
    if anim is None:
        raise ValueError(f"step {s.step}: unknown animation {s.animation!r}; known: {sorted(ANIMATIONS)}")
    return SceneStep(s.step, s.title, subject, lit, view, {"name": s.animation, **anim(scene, tensors, cfg)})


def _station_nodes(scene: Scene, station: str, op: str) -> list[str]:
    return [b.id for b in scene.blocks if b.station == station and b.op == op]


def _first_station(scene: Scene, stack: str, part: str) -> str | None:
    return next((s.id for s in scene.stations if s.id.startswith(stack + ".") and s.id.endswith("." + part)), None)


def _one_cell(scene: Scene, tensors: dict[str, Tensor], cfg: Config) -> dict:
    """Step 6: one cell of Q = row 0 of X (the worked row's token) against column 5 of W^Q, plus b^Q column 5."""
    st = _first_station(scene, "enc", "self")
    q = tensors.get(f"{st}.q")
    if q is None:
        return {}
    return {"x": q.inputs[0], "w": q.inputs[1], "b": q.inputs[2] if len(q.inputs) > 2 else None, "out": q.id,
            "row": min(WORKED["row"], q.shape[0] - 1), "col": min(5, q.shape[1] - 1)}


def _worked_row(scene: Scene, tensors: dict[str, Tensor], cfg: Config) -> dict:
    """The worked attention row of article/lessons.py, framed in each block it passes through: its
    row of scores, its row of weights, the head's value rows (its columns of V) and its output row."""
    ids, r = worked_blocks(), WORKED["row"]
    if any(ids[k] not in tensors for k in ("scores", "weights", "out", "v")):
        return {}
    n, dk = tensors[ids["scores"]].shape[1], tensors[ids["out"]].shape[1]
    off = int(tensors[ids["v"]].attrs["starts"][0])
    return {"rects": [[ids["scores"], [r, r, 0, n - 1]], [ids["weights"], [r, r, 0, n - 1]],
                      [ids["v_full"], [0, n - 1, off, off + dk - 1]], [ids["out"], [r, r, 0, dk - 1]]]}


def _sweep(scene: Scene, tensors: dict[str, Tensor], cfg: Config) -> dict:
    """Step 9: each head's softmax row sweeps down while its output fills row by row; then the worked row
    stays framed (`rects`)."""
    st = _first_station(scene, "enc", "self")
    pairs = [[t.inputs[0], t.id] for t in tensors.values()
             if t.op == "MatMul" and tensors[t.inputs[0]].op == "Softmax" and t.id.startswith(f"{st}.")]
    return {"pairs": pairs, **_worked_row(scene, tensors, cfg)}


def _residual(scene: Scene, tensors: dict[str, Tensor], cfg: Config) -> dict:
    st = _first_station(scene, "enc", "self")
    return {"sum": f"{st}.sum", "ln": f"{st}.ln" if f"{st}.ln" in tensors else None}


def _mask(scene: Scene, tensors: dict[str, Tensor], cfg: Config) -> dict:
    st = _first_station(scene, "dec", "self")
    masked = _station_nodes(scene, st, "Where")
    return {"blocks": masked + sorted({tensors[m].inputs[0] for m in masked})}


def _arcs(scene: Scene, tensors: dict[str, Tensor], cfg: Config) -> dict:
    return {"blocks": [b.id for b in scene.blocks if b.op == "Softmax" and b.station.endswith(".cross")]}


def _loop(scene: Scene, tensors: dict[str, Tensor], cfg: Config) -> dict:
    return {"blocks": [b.id for b in scene.blocks if b.tower == "tgt" and not b.param and b.row_axis == "target"]}


def _dropout(scene: Scene, tensors: dict[str, Tensor], cfg: Config) -> dict:
    st = _first_station(scene, "enc", "self")
    return {"block": f"{st}.proj"}


def _parameters(scene: Scene, tensors: dict[str, Tensor], cfg: Config) -> dict:
    return {"blocks": [b.id for b in scene.blocks if b.param]}


ANIMATIONS = {
    "none": lambda scene, tensors, cfg: {},
    "one-cell": _one_cell, "sweep": _sweep, "residual": _residual, "mask": _mask, "arcs": _arcs,
    "loop": _loop, "dropout": _dropout, "parameters": _parameters,
}


def fit_distance(view: View, fov_deg: float, aspect: float) -> float:
    """The camera distance at which the view's box fills the screen (the renderers use this rule; the web
    stage applies it to the band of its height that its overlays leave free, static/stage/camera.js)."""
    w = (view.box[1] - view.box[0]) * view.margin
    h = (view.box[3] - view.box[2]) * view.margin
    t = math.tan(math.radians(fov_deg) / 2)
    return max(h / 2 / t, w / 2 / (t * aspect)) + FIT_EXTRA


# ---------------------------------------------------------------------------------------------
# Today's recipe (recorder.record.trace_recipe's ids): words and stations. The paper's layout above is
# untouched; these apply only when the config leaves it (pre-norm, RMSNorm, rotary, SwiGLU, no biases,
# untied output).

def _gated_units(tensors: dict[str, Tensor]) -> set[str]:
    """SwiGLU's hidden units: a Mul of SiLU (a Mul by a Sigmoid) and the up projection."""
    sigmoid = {t.id for t in tensors.values() if t.op == "Sigmoid"}
    silu = {t.id for t in tensors.values() if t.op == "Mul" and any(i in sigmoid for i in t.inputs)}
    return {t.id for t in tensors.values() if t.op == "Mul" and any(i in silu for i in t.inputs)}


def recipe_words(t: Tensor, cfg: Config, memory: str | None) -> tuple[str, str] | None:
    """(label, description) of a tensor only a config outside the paper's layout has, or whose words
    change there; None otherwise (then the paper's words apply)."""
    if paper_layout(cfg):
        return None
    i, last = t.id, t.id.split(".")[-1]
    d, dff, v = cfg.d_model, cfg.d_ff, cfg.vocab_size
    norm = "RMSNorm" if cfg.norm == "rms" else "LayerNorm"
    b = cfg.bias
    if i == "E":
        untied = "" if cfg.tie_output else "; the output has its own W_U"
        return (f"E  ({v}×{d}, shared)" if cfg.tie_output else f"E  ({v}×{d}, input only)",
                "E, the embedding table (vocabulary × d_model)" + untied)
    if i == "out.W_U":
        return f"W_{{U}} ({d}×{v}, untied)", "W_U, the output projection, separate from E (d_model × vocabulary)"
    if i == "out.logits" and not cfg.tie_output:
        return "logits = h·W_{U}", "logits = h·W_U"
    if i in ("enc.norm", "dec.norm"):
        word = "memory z" if i == "enc.norm" else "h"
        return f"final {norm} = {word}", f"{norm} after the last layer: the stack's output {word}"
    if last in ("cos", "sin") and i.startswith(("src.rope", "tgt.rope")):
        return f"{last} pos·θ", f"rotation table {last}(pos·θ_i), θ_i = 10000^(−2i/d_k), one row per position"
    if cfg.positional == "rotary" and i.startswith(("src.", "tgt.")):
        side = "x" if i.startswith("src.") else "y"
        if last == "x0":
            return (f"{side}^{{(0)}} = E[{side}]·√{d}",
                    f"x⁽⁰⁾ = E[token]·√{d} (no PE: positions enter Q and K by rotation)")
        if last == "positions":
            return "pos", "positions 0, 1, 2, … (index the rotation tables)"
    if last == "rot":
        m = i.split(".")[-2].upper()
        return f"RoPE({m})", f"{m} rotated: each pair (2i, 2i+1) of each head turned by pos·θ_i"
    if last == "gamma" and i.split(".")[-2] == "norm":
        return "γ", f"{norm} gain γ" + (" (RMSNorm has no β)" if cfg.norm == "rms" else "")
    if last == "beta" and i.split(".")[-2] == "norm":
        return "β", "LayerNorm bias β"
    if last == "norm" and t.op in NORM_OPS:
        return norm, f"{norm}(X), the sub-layer's input (pre-norm)"
    if last == "sum" and cfg.norm_first:
        return "X + Sublayer(Norm(X))", "residual sum X + Sublayer(Norm(X)); no norm after it (pre-norm)"
    if last in ("q", "k", "v") and not b:
        m = last.upper()
        return m, f"{m} = X·W^{m} (no bias)"
    if last == "proj" and not b:
        return "Concat·W^{O}", "Concat·W^O (no bias)"
    if cfg.ffn == "swiglu":
        words = {"W_1": ("W_{1} (gate)", f"W₁ ({d} × {dff}), the gate's weights"),
                 "W_3": ("W_{3} (up)", f"W₃ ({d} × {dff}), the up projection"),
                 "W_2": ("W_{2}ᵀ", f"W₂ ({dff} × {d}), drawn transposed"),
                 "hidden_pre": ("xW_{1}", "x·W₁, the gate before SiLU"),
                 "sigmoid": ("σ(xW_{1})", "σ(x·W₁), the logistic sigmoid"),
                 "silu": ("SiLU = xW_{1}·σ", "SiLU(x·W₁) = x·W₁·σ(x·W₁)"),
                 "up": ("xW_{3}", "x·W₃, the up projection"),
                 "hidden": (f"SiLU ⊙ xW_{{3}} (n × {dff})", "SwiGLU hidden units: SiLU(x·W₁) ⊙ x·W₃"),
                 "out": ("FFN(x) = hidden·W_{2}", "FFN(x) = (SiLU(x·W₁) ⊙ x·W₃)·W₂")}
        if last in words:
            return words[last]
    return None


def _recipe_embedding(side: str, cfg: Config) -> _Node:
    if cfg.positional != "rotary":
        return _embedding(side)
    return V([
        H([B(f"{side}.ids", hold=1), B(f"{side}.emb")], gap=2),
        H([B(f"{side}.positions", hold=1), B(f"{side}.rope.cos"), B(f"{side}.rope.sin")], gap=2),
        H([B("const.sqrt_d" if side == "src" else "const.neg_inf", hold=1), B(f"{side}.x0"),
           B("dec.mask") if side == "tgt" else None], gap=2),
    ])


def _recipe_attention(p: str, heads: int) -> _Node:
    """Bottom → top: the pre-norm (γ, and β for LayerNorm) and its output, W^Q W^K W^V under Q K V (and
    the rotated Q and K), the heads, Concat and W^O, the residual sum (then a post-norm, if any)."""
    proj = [V([B(f"{p}.W_{m}"), B(f"{p}.b_{m}"), B(f"{p}.{m}"), B(f"{p}.{m}.rot")]) for m in "qkv"]
    per_head = [V([B(f"{p}.h{i}.{k}") for k in ("scores", "masked", "weights", "out")]) for i in range(heads)]
    return V([
        V([B(f"{p}.norm.gamma"), B(f"{p}.norm.beta"), B(f"{p}.norm")]),
        H(proj),
        H(per_head, gap=HEAD_COL_GAP),
        V([B(f"{p}.concat"), B(f"{p}.W_o"), B(f"{p}.b_o"), B(f"{p}.proj")]),
        V([B(f"{p}.sum"), B(f"{p}.ln.gamma"), B(f"{p}.ln.beta"), B(f"{p}.ln")]),
    ])


def _recipe_feed_forward(p: str) -> _Node:
    """The pre-norm, then W₁ (gate) beside W₃ (up), the gate through σ and SiLU beside x·W₃, their
    product (the hidden units), W₂ drawn transposed, the output and the residual sum."""
    return V([
        V([B(f"{p}.norm.gamma"), B(f"{p}.norm.beta"), B(f"{p}.norm")]),
        H([V([B(f"{p}.W_1"), B(f"{p}.b_1"), B(f"{p}.hidden_pre"), B(f"{p}.sigmoid"), B(f"{p}.silu")]),
           V([B(f"{p}.W_3"), B(f"{p}.b_3"), B(f"{p}.up")])], align="top"),
        V([B(f"{p}.hidden"), B(f"{p}.W_2"), B(f"{p}.b_2"), B(f"{p}.out"), B(f"{p}.sum"),
           B(f"{p}.ln.gamma"), B(f"{p}.ln.beta"), B(f"{p}.ln")]),
    ])


def _recipe_towers(cfg: Config) -> dict[str, list[tuple[str, _Node]]]:
    src = [("src.emb", _recipe_embedding("src", cfg))]
    tgt = [("tgt.emb", _recipe_embedding("tgt", cfg))]
    for layer in range(cfg.n_layers):
        src += [(f"enc.{layer}.self", _recipe_attention(f"enc.{layer}.self", cfg.n_heads)),
                (f"enc.{layer}.ffn", _recipe_feed_forward(f"enc.{layer}.ffn"))]
        tgt += [(f"dec.{layer}.self", _recipe_attention(f"dec.{layer}.self", cfg.n_heads)),
                (f"dec.{layer}.cross", _recipe_attention(f"dec.{layer}.cross", cfg.n_heads)),
                (f"dec.{layer}.ffn", _recipe_feed_forward(f"dec.{layer}.ffn"))]
    src.append(("enc.norm", V([B("enc.norm.gamma"), B("enc.norm.beta"), B("enc.norm")])))
    tgt.append(("dec.norm", V([B("dec.norm.gamma"), B("dec.norm.beta"), B("dec.norm")])))
    tgt.append(("out", V([B("out.ET"), B("out.W_U"), B("out.logits"), H([B("out.probs"), B("out.tokens")], gap=2)])))
    return {"src": src, "tgt": tgt}
