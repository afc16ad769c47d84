"""Node and parameter ids: the one grammar that writes them and the one parser that reads them.

An id is words joined by dots, read left to right from the widest part of the model to the tensor:

    [lens.] where [.layer] [.sublayer] [.word …]        the head, when there is one, as `hN` among the words

    src.emb  tgt.x0  src.rope.cos               an embedding side (src, tgt) and what it holds there
    enc.0.self.q  enc.0.self.q.h2               a sub-layer's tensor, and head 2's slice of it
    dec.1.cross.h3.weights                      head 3's own tensor
    dec.1.cross.W_q  enc.0.ffn.ln.gamma         a sub-layer's parameters
    enc.norm  dec.norm.gamma  dec.mask          a whole stack's
    out.ET  out.probs  lens.dec.1.probs         the output layer, and the logit lens after a decoder layer
    const.sqrt_d  E  P  W_U                     constants, and parameters shared across the model

Everything that needs to know what a tensor is (labels, descriptions, the scene's stations, the
article's figures, the ablation parser) reads a `Name`'s fields; nobody splits an id again. Layers and
heads are counted from 0 in ids and from 1 in what a reader sees (`reader_name`).
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

STACKS = ("enc", "dec")
SIDES = ("src", "tgt")
SUBLAYERS = ("self", "cross", "ffn")
_STACK_WORDS = {"enc": "encoder", "dec": "decoder"}
_SUBLAYER_WORDS = {"self": "self-attention", "cross": "cross-attention", "ffn": "feed-forward"}


@dataclass(frozen=True)
class Name:
    """What an id says: where the tensor lives and what it is there."""

    id: str
    where: str  # the first word after any `lens.`: enc, dec, src, tgt, out, const, or a shared parameter (E, P)
    words: tuple[str, ...]  # the words after the sublayer (or after `where`), the head word left out
    layer: int | None = None  # counted from 0
    sublayer: str | None = None  # self | cross | ffn
    head: int | None = None  # counted from 0
    lens: bool = False  # a logit-lens side node (`lens.dec.L.*`)

    @property
    def stack(self) -> str | None:
        """enc or dec, for a tensor inside one of the two stacks."""
        return self.where if self.where in STACKS else None

    @property
    def side(self) -> str | None:
        """src or tgt, for the embedding rows of the source or the target."""
        return self.where if self.where in SIDES else None

    @property
    def role(self) -> str:
        """The last word: what the tensor is (q, scores, weights, W_q, gamma, x0, logits, gate, …)."""
        return self.words[-1] if self.words else self.where

    @property
    def parent(self) -> str | None:
        """The word before the role (`ln` in `enc.0.ffn.ln.gamma`, `k` in `enc.0.self.k.rot`)."""
        return self.words[-2] if len(self.words) > 1 else None

    @property
    def station(self) -> str | None:
        """The sub-layer this tensor belongs to (`enc.0.self`), or None outside the sub-layers."""
        if self.sublayer is None:
            return None
        return sublayer_id(self.where, self.layer, self.sublayer)

    @property
    def is_head_slice(self) -> bool:
        """A head's slice of a whole-width tensor (`enc.0.self.q.h2`), not a head's own tensor."""
        return self.head is not None and self.id.endswith(f".{head_word(self.head)}")

    @property
    def is_attention(self) -> bool:
        return self.sublayer in ("self", "cross")

    def reader_name(self) -> str:
        """The part as a reader counts it: "decoder 2 · cross-attention · head 4"."""
        parts = []
        if self.stack is not None:
            parts.append(f"{_STACK_WORDS[self.stack]}{'' if self.layer is None else f' {self.layer + 1}'}")
        if self.sublayer is not None:
            masked = "masked " if self.sublayer == "self" and self.stack == "dec" else ""
            parts.append(masked + _SUBLAYER_WORDS[self.sublayer])
        if self.head is not None:
            parts.append(f"head {self.head + 1}")
        return " · ".join(parts)


def head_word(head: int) -> str:
    return f"h{head}"


def _is_head_word(word: str) -> bool:
    return len(word) > 1 and word[0] == "h" and word[1:].isdigit()


def join(*words: object) -> str:
    """An id from its words (numbers written as they are)."""
    return ".".join(str(w) for w in words)


def sublayer_id(stack: str, layer: int, sublayer: str) -> str:
    """`enc.0.self`: the prefix of everything a sub-layer holds."""
    if stack not in STACKS or sublayer not in SUBLAYERS:
        raise ValueError(f"no sub-layer {stack}.{layer}.{sublayer}")
    return join(stack, layer, sublayer)


def head_id(sublayer: str, head: int, role: str) -> str:
    """A head's own tensor: `enc.0.self.h2.scores`."""
    return join(sublayer, head_word(head), role)


def head_slice_id(whole: str, head: int) -> str:
    """A head's slice of a whole-width tensor: `enc.0.self.q.h2`."""
    return join(whole, head_word(head))


def lens_id(layer: int, role: str) -> str:
    """The logit lens after decoder layer `layer`: `lens.dec.1.probs`."""
    return join("lens", "dec", layer, role)


def compose(name: Name) -> str:
    """The id a Name's fields write (parse's inverse: compose(parse(i)) == i for every id the trace mints)."""
    words = list(name.words)
    if name.head is not None:  # a head's own tensor has its word before the role; a slice, after
        at = len(words) if name.is_head_slice else len(words) - 1
        words.insert(at, head_word(name.head))
    inner = [
        name.where,
        *([] if name.layer is None else [name.layer]),
        *([] if name.sublayer is None else [name.sublayer]),
        *words,
    ]
    return join(*(["lens"] if name.lens else []), *inner)


def sibling(node_id: str, role: str) -> str:
    """The id of the tensor in the same place with another role: `dec.0.self.h1.scores` → `dec.0.self.h1.masked`
    (a head's slice stays a slice: `enc.0.self.q.h2` → `enc.0.self.k.h2`)."""
    name = parse(node_id)
    return compose(dataclasses.replace(name, words=(*name.words[:-1], role)))


@functools.cache
def parse(node_id: str) -> Name:
    """The Name of an id; the grammar's one reader."""
    words = node_id.split(".")
    lens = words[0] == "lens" and len(words) > 1
    if lens:
        words = words[1:]
    where, rest = words[0], words[1:]
    layer = sublayer = None
    if where in STACKS and rest and rest[0].isdigit():
        layer, rest = int(rest[0]), rest[1:]
        if rest and rest[0] in SUBLAYERS:
            sublayer, rest = rest[0], rest[1:]
    heads = [i for i, w in enumerate(rest) if _is_head_word(w)]
    head = int(rest[heads[0]][1:]) if heads else None
    kept = tuple(w for i, w in enumerate(rest) if i not in heads[:1])
    return Name(id=node_id, where=where, words=kept, layer=layer, sublayer=sublayer, head=head, lens=lens)
