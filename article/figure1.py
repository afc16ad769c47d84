"""The paper's Figure 1, drawn by us: one box per part of the encoder-decoder diagram, each linked to
the article's steps about it.

Which steps a box stands for is not written anywhere: it is derived from the tour. A box names the
blocks of the scene it is made of (trace ids, as globs, minus exceptions); its steps are those whose
subject (content/steps front matter, expanded by scene/views.py against the scene's blocks) shows any
of them, and a click on the box goes to the first. The overview in step 1 and the map beside the stage
(templates/figure1.html) are the same drawing.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Box:
    id: str
    label: str
    says: str  # one line: what this part does (the hover text)
    blocks: tuple[str, ...]  # globs of the scene's block ids
    excluding: tuple[str, ...] = ()
    where: str = ""  # the part as the map names it, with its stack and attention (the label where it says enough)


NORM = ("{p}.sum", "{p}.ln", "{p}.ln.*")


def _norms(prefix: str) -> tuple[str, ...]:
    """A sub-layer's residual sum and LayerNorm: drawn as its own "Add & Norm" box."""
    return tuple(g.format(p=prefix) for g in NORM)


def _norm(prefix: str, says: str, of: str) -> Box:
    return Box(f"{prefix.replace('.*.', '-')}-norm", "Add & Norm", says, _norms(prefix), where=f"{of} · Add & Norm")


BOXES: tuple[Box, ...] = (
    Box(
        "input-embedding",
        "Input Embedding",
        "Looks up each English word's row of the shared table E and scales it by √d_model.",
        ("E", "src.ids", "src.emb", "src.scaled", "const.sqrt_d"),
    ),
    Box(
        "output-embedding",
        "Output Embedding",
        "Looks up the German pieces written so far, shifted right behind <s>, in the same table E.",
        ("tgt.ids", "tgt.emb", "tgt.scaled"),
    ),
    Box(
        "positional-encoding",
        "Positional Encoding",
        "Adds a fixed pattern of sines and cosines that tells each row its position.",
        ("src.pe", "tgt.pe", "src.x0", "tgt.x0", "P", "src.positions", "tgt.positions"),
    ),
    Box(
        "enc-attention",
        "Multi-Head Attention",
        "Encoder self-attention: every English word reads every English word, in several heads.",
        ("enc.*.self.*",),
        _norms("enc.*.self"),
        where="encoder · self-attention",
    ),
    _norm(
        "enc.*.self",
        "Adds the sub-layer's input back (the residual) and normalises each row (LayerNorm).",
        "encoder · self-attention",
    ),
    Box(
        "enc-ffn",
        "Feed Forward",
        "Two matrices and a ReLU, applied to each word's row on its own.",
        ("enc.*.ffn.*",),
        _norms("enc.*.ffn"),
        where="encoder · feed-forward",
    ),
    _norm(
        "enc.*.ffn",
        "Adds the feed-forward input back and normalises; the last layer's output is the memory z.",
        "encoder · feed-forward",
    ),
    Box(
        "dec-masked",
        "Masked Multi-Head Attention",
        "Decoder self-attention: each German row reads itself and the rows before it, never after.",
        ("dec.*.self.*", "dec.mask"),
        _norms("dec.*.self"),
        where="decoder · masked self-attention",
    ),
    _norm(
        "dec.*.self",
        "Adds the masked attention's input back and normalises each row.",
        "decoder · masked self-attention",
    ),
    Box(
        "dec-cross",
        "Multi-Head Attention",
        "Cross-attention: each German row reads the encoder's memory z, the English side.",
        ("dec.*.cross.*",),
        _norms("dec.*.cross"),
        where="decoder · cross-attention",
    ),
    _norm("dec.*.cross", "Adds the cross-attention's input back and normalises each row.", "decoder · cross-attention"),
    Box(
        "dec-ffn",
        "Feed Forward",
        "The decoder's own two matrices and ReLU, applied to each German row on its own.",
        ("dec.*.ffn.*",),
        _norms("dec.*.ffn"),
        where="decoder · feed-forward",
    ),
    _norm(
        "dec.*.ffn",
        "Adds the feed-forward input back and normalises: the decoder's output row h.",
        "decoder · feed-forward",
    ),
    Box(
        "linear",
        "Linear",
        "Scores the last row against every row of E (the tied output layer, Eᵀ): one logit per token.",
        ("out.ET", "out.logits"),
    ),
    Box(
        "softmax",
        "Softmax",
        "Turns the logits into probabilities for the next piece; the most probable is written and fed back.",
        ("out.probs", "out.tokens"),
    ),
)


@dataclass
class PlacedBox:
    box: Box
    steps: list[int] = field(default_factory=list)  # the steps whose subject shows any of the box's blocks

    @property
    def step(self) -> int | None:
        return self.steps[0] if self.steps else None


def members(box: Box, block_ids: list[str]) -> set[str]:
    """The scene's blocks a box is made of."""
    keep = {i for g in box.blocks for i in fnmatch.filter(block_ids, g)}
    return keep - {i for g in box.excluding for i in fnmatch.filter(block_ids, g)}


def place(scene) -> dict[str, PlacedBox]:
    """Each box with its steps, from a scene (its blocks and its steps' subjects: the tour)."""
    ids = [b.id for b in scene.blocks]
    out = {}
    for box in BOXES:
        mine = members(box, ids)
        out[box.id] = PlacedBox(box, [s.step for s in scene.steps if mine & set(s.subject)])
    return out
