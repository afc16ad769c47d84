"""Words: every block's label and description and every station's title, the one place they are written.

One set of words serves every config: where a model departs from the paper (pre-norm, RMSNorm, rotary
positions, SwiGLU, no biases, an untied output) the words say so, read from the config and from what the
id names (model/ids.py), never from the id's spelling. A label is drawn on the stage (^{…} superscript,
_{…} subscript); a description is the inspector's first line.
"""

from __future__ import annotations

from model import ids
from model.transformer import Config
from scene.tensors import NORM_OPS, Tensor

WQKVO = ("W_q", "W_k", "W_v", "W_o", "b_q", "b_k", "b_v", "b_o")


def _norm(cfg: Config) -> str:
    return "RMSNorm" if cfg.norm == "rms" else "LayerNorm"


def _subscript(n: int) -> str:
    return str(n).translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))


def _swiglu_words(cfg: Config) -> dict[str, tuple[str, str]]:
    """SwiGLU's feed-forward, by role: (label, description)."""
    d, dff = cfg.d_model, cfg.d_ff
    return {
        "W_1": ("W_{1} (gate)", f"W₁ ({d} × {dff}), the gate's weights"),
        "W_3": ("W_{3} (up)", f"W₃ ({d} × {dff}), the up projection"),
        "W_2": ("W_{2}ᵀ", f"W₂ ({dff} × {d}), drawn transposed"),
        "hidden_pre": ("xW_{1}", "x·W₁, the gate before SiLU"),
        "sigmoid": ("σ(xW_{1})", "σ(x·W₁), the logistic sigmoid"),
        "silu": ("SiLU = xW_{1}·σ", "SiLU(x·W₁) = x·W₁·σ(x·W₁)"),
        "up": ("xW_{3}", "x·W₃, the up projection"),
        "hidden": (f"SiLU ⊙ xW_{{3}} (n × {dff})", "SwiGLU hidden units: SiLU(x·W₁) ⊙ x·W₃"),
        "out": ("FFN(x) = hidden·W_{2}", "FFN(x) = (SiLU(x·W₁) ⊙ x·W₃)·W₂"),
    }


def _swiglu(name: ids.Name, cfg: Config) -> tuple[str, str] | None:
    # the feed-forward's own tensors only: a head's output has the role `out` too
    if cfg.ffn != "swiglu" or name.sublayer != "ffn":
        return None
    return _swiglu_words(cfg).get(name.role)


def _fixed_labels(cfg: Config) -> dict[str, str]:
    d, v = cfg.d_model, cfg.vocab_size
    norm = _norm(cfg)
    return {
        "E": f"E  ({v}×{d}, shared)" if cfg.tie_output else f"E  ({v}×{d}, input only)",
        "P": "P (learned positions)",
        "const.sqrt_d": f"×√{d}",
        "const.neg_inf": "−∞",
        "dec.mask": "causal mask",
        "out.ET": "Eᵀ (tied)",
        "out.W_U": f"W_{{U}} ({d}×{v}, untied)",
        "out.logits": "logits = h·Eᵀ" if cfg.tie_output else "logits = h·W_{U}",
        "out.probs": "softmax: probabilities",
        "out.tokens": "argmax",
        "enc.norm": f"final {norm} = memory z",
        "dec.norm": f"final {norm} = h",
    }


def _side_label(name: ids.Name, cfg: Config) -> str:
    """The embedding rows of the source (x) or the target (y)."""
    side, role, d = "x" if name.side == "src" else "y", name.role, cfg.d_model
    if name.parent == "rope" and role in ("cos", "sin"):
        return f"{role} pos·θ"
    if role == "x0" and cfg.positional == "rotary":
        return f"{side}^{{(0)}} = E[{side}]·√{d}"
    return {
        "ids": "ids",
        "emb": f"E[{side}]",
        "scaled": f"E[{side}]·√{d}",
        "pe": "PE",
        "positions": "pos",
        "x0": f"{side}^{{(0)}}",
    }.get(role, name.id)


def _head_label(name: ids.Name, t: Tensor, cfg: Config) -> str:
    scale = f"QKᵀ/√{cfg.d_k}" if t.attrs.get("alpha", 1.0) != 1.0 else "QKᵀ"
    return {"scores": scale, "masked": "masked", "weights": "softmax", "out": f"head {name.head + 1}"}.get(
        name.role, name.id
    )


def _layer_label(name: ids.Name, t: Tensor, cfg: Config, memory: str | None) -> str:
    """A sub-layer's tensors and parameters, by role."""
    role = name.role
    if role == "rot":
        return f"RoPE({name.parent.upper()})"
    if role == "norm" and t.op in NORM_OPS:
        return _norm(cfg)
    if role == "sum":
        return "X + Sublayer(Norm(X))" if cfg.norm_first else "X + Sublayer(X)"
    if role in WQKVO:
        return f"{role[0]}^{{{role[2].upper()}}}"
    if role in ("q", "k", "v"):
        return role.upper()
    swiglu = _swiglu(name, cfg)
    if swiglu:
        return swiglu[0]
    if name.head is not None and not name.is_head_slice:
        return _head_label(name, t, cfg)
    if role == "ln":
        return "LayerNorm = memory z" if name.id == memory else "LayerNorm"
    return {
        "concat": "Concat(heads)",
        "proj": "Concat·W^{O}",
        "gamma": "γ",
        "beta": "β",
        "W_1": "W_{1}",
        "b_1": "b_{1}",
        "W_2": "W_{2}ᵀ",
        "b_2": "b_{2}",
        "hidden_pre": "xW_{1} + b_{1}",
        "hidden": f"ReLU (n × {cfg.d_ff})",
        "out": "FFN(x) = ReLU·W_{2} + b_{2}",
    }.get(role, name.id)


def label_of(t: Tensor, cfg: Config, memory: str | None) -> str:
    """The block's name on the stage; `memory` is the id of the encoder's output z."""
    fixed = _fixed_labels(cfg)
    if t.id in fixed:
        return fixed[t.id]
    name = ids.parse(t.id)
    if name.lens:  # the logit lens after a decoder layer, through the model's own output layer
        return {
            "norm": f"lens: {_norm(cfg)}",
            "logits": "lens: h·Eᵀ" if cfg.tie_output else "lens: h·W_{U}",
            "probs": "lens: softmax",
            "tokens": "lens: argmax",
        }.get(name.role, t.id)
    if name.role in ("gate", "off"):  # a part switched off (model/ablation.py)
        return "×0" if name.role == "gate" else "switched off"
    if name.side:
        return _side_label(name, cfg)
    return _layer_label(name, t, cfg, memory)


def _fixed_descriptions(cfg: Config) -> dict[str, str]:
    norm = _norm(cfg)
    return {
        "E": (
            "E, the shared embedding table (vocabulary × d_model)"
            if cfg.tie_output
            else "E, the embedding table (vocabulary × d_model); the output has its own W_U"
        ),
        "P": "P, learned position vectors",
        "dec.mask": "causal mask (row i reads columns 1…i)",
        "const.sqrt_d": "√d_model",
        "const.neg_inf": "−∞ (fills masked scores)",
        "out.ET": "Eᵀ, the tied output projection",
        "out.W_U": "W_U, the output projection, separate from E (d_model × vocabulary)",
        "out.logits": "logits = h·Eᵀ" if cfg.tie_output else "logits = h·W_U",
        "out.probs": "output probabilities softmax(logits)",
        "out.tokens": "chosen token (argmax)",
        "enc.norm": f"{norm} after the last layer: the stack's output memory z",
        "dec.norm": f"{norm} after the last layer: the stack's output h",
    }


def _lens_description(name: ids.Name, cfg: Config) -> str:
    layer = name.layer + 1
    out = "Eᵀ" if cfg.tie_output else "W_U"
    return {
        "norm": f"logit lens: decoder {layer}'s output through the final {_norm(cfg)}, as the output reads it",
        "logits": f"logit lens: decoder {layer}'s output · {out} (not on the forward path)",
        "probs": f"logit lens: what the model would output if decoding stopped after decoder {layer}",
        "tokens": f"logit lens: the most probable piece after decoder {layer}",
    }.get(name.role, name.id)


def _switched_off_description(name: ids.Name) -> str:
    what = f"head {name.head + 1}" if name.head is not None else "this sub-layer's branch"
    return (
        f"switched off: the zero that multiplies {what}"
        if name.role == "gate"
        else f"{what} × 0: switched off, nothing reaches the next step"
    )


def _side_description(name: ids.Name, t: Tensor, cfg: Config) -> str | None:
    role, d = name.role, cfg.d_model
    if name.parent == "rope" and role in ("cos", "sin"):
        return f"rotation table {role}(pos·θ_i), θ_i = 10000^(−2i/d_k), one row per position"
    if cfg.positional == "rotary" and role == "x0":
        return f"x⁽⁰⁾ = E[token]·√{d} (no PE: positions enter Q and K by rotation)"
    if cfg.positional == "rotary" and role == "positions":
        return "positions 0, 1, 2, … (index the rotation tables)"
    return {
        "ids": "token ids",
        "emb": "E[token], the looked-up rows",
        "scaled": f"E[token]·√{d}",
        "pe": "positional encoding PE" if t.op != "Gather" else "learned positions P[pos]",
        "positions": "positions 0, 1, 2, …",
        "x0": f"x⁽⁰⁾ = E[token]·√{d} + PE",
    }.get(role)


def _norm_description(name: ids.Name, t: Tensor, cfg: Config) -> str | None:
    """A pre-norm's parameters and output, and the residual sum (whose words say where the norm is)."""
    norm, role = _norm(cfg), name.role
    if name.parent == "norm" and role == "gamma":
        return f"{norm} gain γ" + (" (RMSNorm has no β)" if cfg.norm == "rms" else "")
    if name.parent == "norm" and role == "beta":
        return "LayerNorm bias β"
    if role == "norm" and t.op in NORM_OPS:
        return f"{norm}(X), the sub-layer's input (pre-norm)"
    if role == "sum":
        return (
            "residual sum X + Sublayer(Norm(X)); no norm after it (pre-norm)"
            if cfg.norm_first
            else "residual sum X + Sublayer(X)"
        )
    return None


def _head_description(name: ids.Name, t: Tensor, cfg: Config) -> str:
    head = name.head + 1
    scaled = f"QKᵀ/√{cfg.d_k}" if t.attrs.get("alpha", 1.0) != 1.0 else "QKᵀ (unscaled)"
    return {
        "scores": f"scores {scaled}, head {head}",
        "masked": f"masked scores, head {head}",
        "weights": f"attention weights softmax(·), head {head}",
        "out": f"head {head} output = weights·V",
    }.get(name.role, name.id)


def _layer_description(name: ids.Name, t: Tensor, cfg: Config) -> str:
    """A sub-layer's tensors and parameters, by role."""
    role, d, dff = name.role, cfg.d_model, cfg.d_ff
    if role == "rot":
        m = name.parent.upper()
        return f"{m} rotated: each pair (2i, 2i+1) of each head turned by pos·θ_i"
    norm = _norm_description(name, t, cfg)
    if norm:
        return norm
    if role in ("q", "k", "v"):
        m = role.upper()
        return f"{m} = X·W^{m} + b^{m}" if cfg.bias else f"{m} = X·W^{m} (no bias)"
    swiglu = _swiglu(name, cfg)
    if swiglu:
        return swiglu[1]
    if name.head is not None and not name.is_head_slice:
        return _head_description(name, t, cfg)
    if role in WQKVO:
        m = role[2].upper()
        return f"W^{m} (d_in × d_out)" if role[0] == "W" else f"bias b^{m}"
    return {
        "concat": f"Concat(head₁ … head{_subscript(cfg.n_heads)})",
        "proj": "Concat·W^O + b^O" if cfg.bias else "Concat·W^O (no bias)",
        "ln": "LayerNorm(X + Sublayer(X))",
        "gamma": "LayerNorm gain γ",
        "beta": "LayerNorm bias β",
        "W_1": f"W₁ ({d} × {dff})",
        "b_1": "bias b₁",
        "hidden_pre": "x·W₁ + b₁",
        "hidden": "ReLU(x·W₁ + b₁)",
        "W_2": f"W₂ ({dff} × {d}), drawn transposed",
        "b_2": "bias b₂",
        "out": "FFN(x) = ReLU(·)·W₂ + b₂",
    }.get(role, name.id)


def description_of(t: Tensor, cfg: Config) -> str:
    """The inspector's first line for a block."""
    fixed = _fixed_descriptions(cfg)
    if t.id in fixed:
        return fixed[t.id]
    name = ids.parse(t.id)
    if name.lens:
        return _lens_description(name, cfg)
    if name.role in ("gate", "off"):
        return _switched_off_description(name)
    side = _side_description(name, t, cfg) if name.side else None
    return side or _layer_description(name, t, cfg)


def station_title(sid: str, cfg: Config | None = None) -> str:
    """A station's title: "Encoder 1 · self-attention", "Logit lens after decoder 2", …"""
    norm = "RMSNorm" if cfg is not None and cfg.norm == "rms" else "LayerNorm"
    untied = cfg is not None and not cfg.tie_output
    fixed = {
        "enc.norm": f"Encoder · final {norm}",
        "dec.norm": f"Decoder · final {norm}",
        "src.emb": "Input embedding",
        "tgt.emb": "Output embedding (shifted right)",
        "out": "Linear (W_U, untied) and softmax" if untied else "Linear (Eᵀ) and softmax",
        "shared": "Shared parameters",
    }
    if sid in fixed:
        return fixed[sid]
    name = ids.parse(sid)
    if name.lens:
        return f"Logit lens after decoder {name.layer + 1}"
    words = name.reader_name()  # "decoder 2 · masked self-attention"
    return words[:1].upper() + words[1:]


def part_name(node_id: str, station: str = "") -> str:
    """The part a tensor belongs to, as a reader counts it (layers and heads from 1): "decoder 2 ·
    cross-attention · head 4" inside a layer; elsewhere its station's title ("input embedding",
    "logit lens after decoder 2"). The stage shows it beside the id wherever it shows the id."""
    name = ids.parse(node_id)
    if name.layer is not None and name.stack is not None and not name.lens:
        return name.reader_name()
    return station[:1].lower() + station[1:]
