"""The parameters a trace reads, under their trace ids, and the version that names a set of weights."""

from __future__ import annotations

import hashlib

import numpy as np

from model import ids
from model.transformer import EncoderDecoder
from recorder.graph import to_numpy


def parameters(model: EncoderDecoder) -> dict[str, np.ndarray]:
    """Every parameter under its trace id, weight matrices as (d_in, d_out), in the order the model uses
    them: E (and P, learned positions), then per sub-layer its norm's γ (and β) under `{station}.norm`
    before the maps (pre-norm) or under `{station}.ln` after them (post-norm, the paper's), the maps'
    W_* (and b_*, with biases; SwiGLU adds W_3), the final stack norms `enc.norm` and `dec.norm` (pre-norm)
    and the untied output matrix `out.W_U` (d_model × V)."""
    cfg = model.cfg
    out: dict[str, np.ndarray] = {"E": to_numpy(model.embedding)}
    if model.positions is not None:  # learned positions: the table P, max_len × d_model
        out["P"] = to_numpy(model.positions)

    def linear(prefix: str, name: str, lin) -> None:
        out[ids.join(prefix, f"W_{name}")] = to_numpy(lin.weight.T)
        if lin.bias is not None:
            out[ids.join(prefix, f"b_{name}")] = to_numpy(lin.bias)

    def norm(prefix: str, module) -> None:
        out[ids.join(prefix, "gamma")] = to_numpy(module.weight)
        if getattr(module, "bias", None) is not None:
            out[ids.join(prefix, "beta")] = to_numpy(module.bias)

    def sublayer(prefix: str, maps, connection) -> None:
        if cfg.norm_first:
            norm(ids.join(prefix, "norm"), connection.norm)
        for name, lin in maps:
            linear(prefix, name, lin)
        if not cfg.norm_first:
            norm(ids.join(prefix, "ln"), connection.norm)

    def attention(a) -> list:
        return [(name, getattr(a, f"w_{name}")) for name in "qkvo"]

    def ffn(f) -> list:
        return [(name, getattr(f, f"w_{name}")) for name in (("1", "3", "2") if f.w_3 is not None else ("1", "2"))]

    for i, layer in enumerate(model.encoder_layers):
        sublayer(ids.sublayer_id("enc", i, "self"), attention(layer.self_attn), layer.sublayer[0])
        sublayer(ids.sublayer_id("enc", i, "ffn"), ffn(layer.feed_forward), layer.sublayer[1])
    if model.encoder_norm is not None:
        norm(ids.join("enc", "norm"), model.encoder_norm)
    for i, layer in enumerate(model.decoder_layers):
        sublayer(ids.sublayer_id("dec", i, "self"), attention(layer.self_attn), layer.sublayer[0])
        sublayer(ids.sublayer_id("dec", i, "cross"), attention(layer.src_attn), layer.sublayer[1])
        sublayer(ids.sublayer_id("dec", i, "ffn"), ffn(layer.feed_forward), layer.sublayer[2])
    if model.decoder_norm is not None:
        norm(ids.join("dec", "norm"), model.decoder_norm)
    if model.output is not None:
        out[ids.join("out", "W_U")] = to_numpy(model.output.T)
    return out


def weights_version(model: EncoderDecoder) -> str:
    h = hashlib.sha256()
    for k, v in sorted(model.state_dict().items()):
        h.update(k.encode())
        h.update(v.detach().numpy().tobytes())
    return h.hexdigest()[:16]
