"""The layout: every station as a tree of boxes (scene/boxes.py), the two towers they stack into, and
where each block lands. E (and P) sit at the bottom centre, the encoder tower on the left, the decoder
tower on the right, each station over the one before it.

One layout serves every config: each station names every tensor any config can give it (a pre-norm or a
post-norm, rotary's tables and rotated Q and K, SwiGLU's gate and up projection, an untied output, the
gates of the parts a reader may switch off, whose places every structure keeps: scene/gates.py), and a tensor
the model lacks takes no room.
"""

from __future__ import annotations

import functools

from model import ids
from model.transformer import Config
from scene.boxes import B, H, Node, R, S, V, block_ids, measure, place
from scene.document import Block, Station
from scene.measures import H_GAP, HEAD_COL_GAP, STATION_GAP, TOWER_GAP
from scene.words import station_title

TOWER_START_Y = 8.0  # the bottom of each tower's first station
SHARED_TOP = -4  # E and P hang from this line, under the towers
SPARE_Y = -4.0 - 80  # a row for anything no station names, far under E
SHARED_BLOCK, SHARED_OTHER, SHARED = "E", "P", "shared"  # the shared blocks and their station (and tower)
DEFAULT_SHARED_WIDTH = 32  # the towers' distance from the centre without an E
LEFT_TOWER = "src"  # the encoder's tower stands left of the centre, the decoder's right


def _norm(p: str, where: str) -> Node:
    """A norm's gain γ and bias β (LayerNorm; RMSNorm has γ only) under its output."""
    return V([B(ids.join(p, where, "gamma")), B(ids.join(p, where, "beta")), B(ids.join(p, where))])


def _embedding(side: str, cfg: Config) -> Node:
    """Bottom → top: the looked-up rows (ids beside them), scaled by √d, the positions (the table added,
    or rotary's cos and sin tables), their sum x⁽⁰⁾. With rotary positions x⁽⁰⁾ is the scaled rows
    themselves, so the constant stands beside it."""
    at = functools.partial(ids.join, side)
    const = "const.sqrt_d" if side == "src" else "const.neg_inf"
    rotary = cfg.positional == "rotary"
    return V(
        [
            H([B(at("ids"), hold=1), B(at("emb"))], gap=2),
            None if rotary else H([B(const, hold=1), B(at("scaled"))], gap=2),
            H([B(at("positions"), hold=1), B(at("pe")), B(at("rope", "cos")), B(at("rope", "sin"))], gap=2),
            H([B(const, hold=1) if rotary else S(1), B(at("x0")), B("dec.mask") if side == "tgt" else None], gap=2),
        ]
    )


def _attention(p: str, heads: int) -> Node:
    """An attention sub-layer's blocks, bottom → top: a pre-norm, if any; W^Q W^K W^V under Q K V (head slices
    with gaps, the rotated Q and K above them); per head the scores, the masked scores, the softmax and the head's
    output (and the product and zero gate that switch it off), the heads standing over V, flush with its right edge,
    so that a head's weights and the value rows they weight are one view (step 9); Concat under W^O under the
    projection (and the sub-layer's gate); the residual sum, then a post-norm."""
    proj = [
        V([B(ids.join(p, f"W_{m}")), B(ids.join(p, f"b_{m}")), B(ids.join(p, m)), B(ids.join(p, m, "rot"))])
        for m in "qkv"
    ]
    per_head = [
        V([B(ids.head_id(p, i, k)) for k in ("scores", "masked", "weights", "out", "off", "gate")])
        for i in range(heads)
    ]  # off and gate: drawn only while the head is switched off
    return V(
        [
            _norm(p, "norm"),
            H(proj),
            R(H(per_head, gap=HEAD_COL_GAP)),
            V([B(ids.join(p, k)) for k in ("concat", "W_o", "b_o")] + [_switched(B(ids.join(p, "proj")), p)]),
            V([B(ids.join(p, "sum")), _norm(p, "ln")]),
        ]
    )


def _feed_forward(p: str) -> Node:
    """A pre-norm, if any; W₁ under the hidden layer before its activation (SwiGLU: the gate through σ
    and SiLU, beside W₃ and the up projection), the hidden units, W₂ drawn transposed so its columns
    line up with them, then b₂ and the output, the residual sum, a post-norm."""
    at = functools.partial(ids.join, p)
    return V(
        [
            _norm(p, "norm"),
            H(
                [
                    V([B(at(k)) for k in ("W_1", "b_1", "hidden_pre", "sigmoid", "silu")]),
                    V([B(at(k)) for k in ("W_3", "b_3", "up")]),
                ],
                align="top",
            ),
            V([B(at(k)) for k in ("hidden", "W_2", "b_2")] + [_switched(B(at("out")), p), B(at("sum"))]),
            _norm(p, "ln"),
        ]
    )


def _switched(output: Node, p: str) -> Node:
    """A sub-layer's output with, at its right, its zero gate and the zeroed branch (drawn only while the
    sub-layer is switched off): in the output's row, so that their kept place makes no station taller and
    a view of the output and the residual sum over it (steps 13 and 22) frames them as closely as before."""
    return H([output, H([B(ids.join(p, "gate")), B(ids.join(p, "off"))], gap=2)])


def _lens(layer: int) -> Node:
    """The logit lens after a decoder layer, drawn like the output station it imitates (a pre-norm model's
    lens begins with the final norm, as its output does)."""
    return V(
        [
            B(ids.lens_id(layer, "norm")),
            B(ids.lens_id(layer, "logits")),
            H([B(ids.lens_id(layer, "probs")), B(ids.lens_id(layer, "tokens"))], gap=2),
        ]
    )


def _output() -> Node:
    return V([B("out.ET"), B("out.W_U"), B("out.logits"), H([B("out.probs"), B("out.tokens")], gap=2)])


def towers(cfg: Config) -> dict[str, list[tuple[str, Node]]]:
    """Each tower's stations, bottom → top, as (station id, its tree)."""
    src = [("src.emb", _embedding("src", cfg))]
    tgt = [("tgt.emb", _embedding("tgt", cfg))]
    for layer in range(cfg.n_layers):
        enc, dec = (functools.partial(ids.sublayer_id, stack, layer) for stack in ids.STACKS)
        src += [(enc("self"), _attention(enc("self"), cfg.n_heads)), (enc("ffn"), _feed_forward(enc("ffn")))]
        tgt += [
            (dec("self"), _attention(dec("self"), cfg.n_heads)),
            (dec("cross"), _attention(dec("cross"), cfg.n_heads)),
            (dec("ffn"), _feed_forward(dec("ffn"))),
            (ids.join("lens", "dec", layer), _lens(layer)),
        ]
    src.append(("enc.norm", _norm("enc", "norm")))  # a pre-norm model's final norms
    tgt.append(("dec.norm", _norm("dec", "norm")))
    tgt.append(("out", _output()))
    return {"src": src, "tgt": tgt}


def shared_tree() -> Node:
    """E and P side by side, under the gap between the towers."""
    return H([B(SHARED_BLOCK), B(SHARED_OTHER)], gap=TOWER_GAP)


def _stack_towers(towers_: dict, inner: float, pos: dict, by_id: dict[str, Block]) -> list[Station]:
    """Places each tower's stations one over the other and gives their blocks their station and tower."""
    stations = []
    for side, st in towers_.items():
        width = max(node.w for _, node, _ in st)
        x0 = -inner - width if side == LEFT_TOWER else inner
        y = TOWER_START_Y
        for sid, node, title in st:
            if node.missing:
                continue
            place(node, x0, y, pos)
            stations.append(Station(sid, title, side, x0, y + node.h, node.w, node.h))
            for bid in block_ids(node):
                by_id[bid].station, by_id[bid].tower = sid, side
            y += node.h + STATION_GAP
    return stations


def lay_out(blocks: list[Block], cfg: Config) -> tuple[list[Station], dict[str, int]]:
    """Places every block (its x, y, station and tower); returns the stations and the reading order."""
    by_id = {b.id: b for b in blocks}
    dims = {b.id: (b.w, b.rows) for b in blocks}
    towers_ = {
        side: [(sid, measure(node, dims), station_title(sid, cfg)) for sid, node in st]
        for side, st in towers(cfg).items()
    }
    shared = measure(shared_tree(), dims)
    pos: dict[str, tuple[float, float]] = {}
    place(shared, -shared.w / 2, SHARED_TOP - shared.h, pos)
    inner = dims.get(SHARED_BLOCK, (DEFAULT_SHARED_WIDTH, 0))[0] / 2 + TOWER_GAP
    stations = _stack_towers(towers_, inner, pos, by_id)
    # anything no station names (a tensor a future model adds) still gets drawn, in a row under E
    spare_x = inner
    for b in blocks:
        if b.id in (SHARED_BLOCK, SHARED_OTHER):
            b.station = SHARED
        if b.id not in pos:
            pos[b.id] = (spare_x, SPARE_Y)
            spare_x += b.w + H_GAP
            b.station = b.station or SHARED
        b.x, b.y = float(pos[b.id][0]), float(pos[b.id][1])
    e = by_id.get(SHARED_BLOCK)
    if e:
        stations.append(Station(SHARED, station_title(SHARED), SHARED, e.x, e.y, e.w, e.rows))
    return stations, {bid: k for k, bid in enumerate(pos)}
