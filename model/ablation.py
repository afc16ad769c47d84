"""Switching parts of the model off: single attention heads and whole sub-layers, by name.

A part is named as the trace names its tensors:
  a head      `enc.L.self.hH`, `dec.L.self.hH`, `dec.L.cross.hH`  (its output, weights·V, becomes 0)
  a sub-layer `enc.L.self`, `enc.L.ffn`, `dec.L.self`, `dec.L.cross`, `dec.L.ffn`
              (its branch leaves the residual sum: LayerNorm(x + 0) = LayerNorm(x); pre-norm, x + 0 = x)

Two equivalent forms of the same ablation: the trace multiplies the part's output by a zero constant
inside the graph (recorder/record.py), and `ablated()` returns a copy of the model whose weights say the
same (the head's d_k input columns of W^O zeroed; a sub-layer's output weights and bias zeroed), which
greedy decoding and the research desk run batched. tests/recorder/test_ablation.py checks that both agree.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable
from dataclasses import dataclass

import torch

from model import ids
from model.transformer import Config, EncoderDecoder

SUBLAYERS = {"enc": ("self", "ffn"), "dec": ("self", "cross", "ffn")}
ATTENTION = ("self", "cross")
PART = re.compile(r"^(enc|dec)\.(\d+)\.(self|cross|ffn)(?:\.h(\d+))?$")
MAX_TEXT = 2000  # characters of an ablation list read at most
QUOTED_CHARS = 80  # how much of a bad part's name a refusal repeats (as Python's repr writes it)
STACK_NAMES = {"enc": "encoder", "dec": "decoder"}
# parse_ablation's refusals, filled with str.format ({name} is the repr of the name's first QUOTED_CHARS);
# `rules` sends them with the data `_why` reads, so static/compute/refusals.js refuses alike
MESSAGES = {
    "too_long": "the ablation list is {length} characters long (at most {most}); accepted: {accepted}",
    "refused": "cannot switch off {name}: {why}; accepted: {accepted}",
    "not_a_part": "not a part's name",
    "layers": "the model has {layers} layers per stack (0–{last})",
    "no_sublayer": "the {stack} has no {kind} sub-layer",
    "ffn_heads": "a feed-forward sub-layer has no heads",
    "heads": "the model has {heads} heads per attention (h0–h{last})",
}


@dataclass(frozen=True)
class Part:
    id: str
    kind: str  # head | sublayer
    sublayer: str  # the sub-layer's id (a head's own sub-layer; a sub-layer's is its id)
    head: int | None = None


def parts(cfg: Config) -> list[Part]:
    """Every part that can be switched off, in the order the model computes them."""
    out = []
    for stack in ("enc", "dec"):
        for layer in range(cfg.n_layers):
            for kind in SUBLAYERS[stack]:
                sid = ids.sublayer_id(stack, layer, kind)
                out.append(Part(sid, "sublayer", sid))
                if kind in ATTENTION:
                    out += [Part(ids.join(sid, ids.head_word(h)), "head", sid, h) for h in range(cfg.n_heads)]
    return out


def accepted(cfg: Config) -> str:
    """The accepted forms, in words, for error messages."""
    last, heads = cfg.n_layers - 1, cfg.n_heads - 1
    return (
        f"a comma-separated list of parts: a head as enc.L.self.hH, dec.L.self.hH or dec.L.cross.hH, "
        f"a sub-layer as enc.L.self, enc.L.ffn, dec.L.self, dec.L.cross or dec.L.ffn "
        f"(layer L 0–{last}, head H 0–{heads}), e.g. dec.{last}.cross.h{heads},enc.0.ffn; empty for none"
    )


def parse_ablation(text: str | Iterable[str] | None, cfg: Config) -> tuple[str, ...]:
    """The parts named in `text` (comma-separated, or several strings), checked against the model and
    returned once each in the model's order. Raises ValueError naming the bad part and the accepted forms."""
    if text is None:
        return ()
    items = [text] if isinstance(text, str) else list(text)
    joined = ",".join(items)
    if len(joined) > MAX_TEXT:
        raise ValueError(MESSAGES["too_long"].format(length=len(joined), most=MAX_TEXT, accepted=accepted(cfg)))
    order = {p.id: k for k, p in enumerate(parts(cfg))}
    named = [s.strip() for s in joined.split(",") if s.strip()]
    for name in named:
        if name not in order:
            raise ValueError(
                MESSAGES["refused"].format(name=repr(name[:QUOTED_CHARS]), why=_why(name, cfg), accepted=accepted(cfg))
            )
    return tuple(sorted(set(named), key=order.__getitem__))


def _why(name: str, cfg: Config) -> str:
    m = PART.match(name)
    if not m:
        return MESSAGES["not_a_part"]
    stack, layer, kind, head = m.group(1), int(m.group(2)), m.group(3), m.group(4)
    if layer >= cfg.n_layers:
        return MESSAGES["layers"].format(layers=cfg.n_layers, last=cfg.n_layers - 1)
    if kind not in SUBLAYERS[stack]:
        return MESSAGES["no_sublayer"].format(stack=STACK_NAMES[stack], kind=kind)
    if head is not None and kind not in ATTENTION:
        return MESSAGES["ffn_heads"]
    if head is not None and int(head) >= cfg.n_heads:
        return MESSAGES["heads"].format(heads=cfg.n_heads, last=cfg.n_heads - 1)
    return MESSAGES["not_a_part"]  # e.g. a leading zero (h01)


def rules(cfg: Config) -> dict:
    """What parse_ablation reads, as data for a client that refuses alike: the limits, the part pattern (in
    Python's syntax: its \\d is Python's decimal), the sub-layers, the model's sizes and the messages."""
    return {
        "max_text": MAX_TEXT,
        "quoted_chars": QUOTED_CHARS,
        "pattern": PART.pattern,
        "sublayers": {k: list(v) for k, v in SUBLAYERS.items()},
        "attention": list(ATTENTION),
        "stack_names": STACK_NAMES,
        "layers": cfg.n_layers,
        "heads": cfg.n_heads,
        "accepted": accepted(cfg),
        "messages": MESSAGES,
    }


def _module(model: EncoderDecoder, sublayer: str):
    name = ids.parse(sublayer)
    mod = (model.encoder_layers if name.stack == "enc" else model.decoder_layers)[name.layer]
    return {"self": mod.self_attn, "cross": getattr(mod, "src_attn", None), "ffn": mod.feed_forward}[name.sublayer]


def ablated(model: EncoderDecoder, names: Iterable[str]) -> EncoderDecoder:
    """A copy of the model with the named parts switched off in its weights (the model is never edited).

    A head: its d_k input columns of W^O are zeroed, so Concat(heads)·W^O gets nothing from it (the same
    as multiplying the head's output by 0). A sub-layer: the weights and bias that make its output
    (W^O and b^O of an attention, W₂ and b₂ of a feed-forward network; a model without biases has only
    the weights) are zeroed, so its branch adds 0.
    """
    names = list(names)
    out = copy.deepcopy(model)
    out.eval()
    by_id = {p.id: p for p in parts(model.cfg)}
    with torch.no_grad():
        for name in names:
            p = by_id[name]
            mod = _module(out, p.sublayer)
            last = mod.w_2 if ids.parse(p.sublayer).sublayer == "ffn" else mod.w_o
            if p.kind == "head":
                last.weight[:, p.head * mod.d_k : (p.head + 1) * mod.d_k] = 0.0
            else:
                last.weight.zero_()
                if last.bias is not None:
                    last.bias.zero_()
    return out
