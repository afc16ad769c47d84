"""The trace: every tensor of one translation, as a self-describing graph of ONNX-style operations.

The encoder runs once over the source, the decoder once over <s> + the model's own greedy output
(what it reads at inference). Each node names its ONNX operator, its inputs (ids of earlier nodes or
parameters), its attributes, its shape and its data, so any client can recompute every node from
its inputs (tests/onnx_numpy.py does, without torch). Parameters are graph tensors too, listed
apart so that they can be sent once (`parameters()`).

Conventions: weight matrices are stored as the paper writes them, (d_in, d_out), so that
`Gemm(X, W, b) = X·W + b`; torch's nn.Linear keeps Wᵀ. Masked scores are −∞ (null in JSON).

The trace follows every option of `Config` or refuses it (`check_traceable`): any width, head count,
d_k (the inner width h·d_k need not be d_model), depth and vocabulary; scores with or without the
1/√d_k scale (Gemm's alpha is 1 without it); sinusoidal positions (a Constant) or learned ones (the
table `P`, gathered at `{side}.positions`). Configs beyond the paper's layout (pre-normalisation,
RMSNorm, rotary positions, SwiGLU, no biases, an untied output: today's recipe, `MODERN`) are traced
by the functions under "Today's recipe" below, with ONNX opset 23's own operators:
RMSNormalization, RotaryEmbedding, Sigmoid and Mul for SwiGLU's SiLU, MatMul for a map without bias.
One convention of every node holds for RotaryEmbedding too: the trace has no batch axis (one
sentence), so its input is (sequence, h·d_k), the opset's 3-D (batch, sequence, hidden) form with
batch = 1 left out. ALiBi is refused with a ValueError naming the option.
"""

from __future__ import annotations

import functools
import hashlib
import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import numpy as np
import torch
from torch import Tensor

from article.lessons import teaching_figures
from model.ablation import ablated, parse_ablation
from model.decode import greedy_checking
from model.numbers import join_german, to_english, to_german_pieces
from model.transformer import (
    NORM_EPSILON,
    Config,
    EncoderDecoder,
    MultiHeadedAttention,
    rotate,
    sinusoid_angles,
    sinusoid_table,
)
from model.vocab import EOS, VOCAB

LN_EPSILON = 1e-5  # nn.LayerNorm's default, which the model uses


@dataclass
class Node:
    id: str
    op: str
    inputs: list[str]
    attrs: dict
    value: np.ndarray

    def to_json(self) -> dict:
        v = self.value
        return {"id": self.id, "op": self.op, "inputs": self.inputs, "attrs": self.attrs,
                "shape": list(v.shape), "dtype": dtype_name(v.dtype), "data": np.ascontiguousarray(v).ravel()}


@functools.cache
def dtype_name(dtype: np.dtype) -> str:
    """str(dtype), remembered: numpy builds the name in Python each time (about 7 µs, 237 times a trace)."""
    return str(dtype)


def described(description: str) -> Any:
    """A required dataclass field with a description (pydantic copies it into the OpenAPI schema)."""
    return field(metadata={"description": description})


def optional(description: str) -> Any:
    """A described field that is null where the model's layout has no such tensor (the modern recipe)."""
    return field(default=None, metadata={"description": description})


TRACE_FORMAT = "anatomy-trace/1"


# The trace's header: the one definition of what a trace says besides its nodes. The service sends
# these dataclasses as they are (orjson serialises dataclasses), and app/schemas.py documents them.

@dataclass(kw_only=True)
class TraceInput:
    """The input as a number and in English, and the model's German for it."""

    number: int
    english: list[str]
    german_pieces: list[str] = described("the model's greedy output, without </s>")
    german: str = described("the pieces joined")
    reference_pieces: list[str] = described("the correct German pieces")
    correct: bool


@dataclass(kw_only=True)
class Derived:
    """Per-input numbers the article quotes (`data-live` keys), computed from the trace."""

    number: int
    english: str
    german: str
    german_pieces: str
    reference_german: str
    source_tokens: list[str]
    target_tokens: list[str]
    output_tokens: list[str]
    n_source: int
    n_target: int
    first_token: str
    first_token_mean: float
    first_token_std: float
    ffn_zero_fraction: float
    least_certain_prob: float
    least_certain_token: str
    least_certain_position: int
    cross_alignment: str = described("per decoder row (reads → writes): the source token its last-layer "
                                     "cross-attention, averaged over heads, rests on most")
    position_losses: str = described("each output piece and its loss −ln p (no smoothing), to 3 decimals")
    mean_position_loss: float = described("the mean of those losses")
    # the teaching steps' numbers (article/lessons.py)
    least_certain_reads: str = described("what the least certain choice's decoder row reads")
    worked_head: int = described("the worked attention row's head, named from 1 (encoder layer 1)")
    worked_row: int = described("its row, counted from 0")
    worked_token: str
    worked_scores: str = described("the row's scaled scores, per source token, to 3 decimals")
    worked_weights: str = described("its softmax weights, per source token")
    worked_unscaled_weights: str = described("the softmax of the same scores without the 1/√d_k scale")
    worked_top_token: str
    worked_top_weight: float
    worked_unscaled_top_weight: float
    worked_blend: str = described("the weighted sum of the value rows, written out")
    worked_output: str = described("the head's output row: that weighted sum, to 3 decimals")
    worked_v_top: str = described("the value row of the token with the largest weight")
    und_rows: str = described("each row that writes und: the two source tokens its last-layer cross-attention, "
                              "averaged over heads, weighs most, with the weights")
    units_on_their_word: str = described("of the units written just before und, how many rows rest most on "
                                         "their English word (last layer, head-averaged)")
    decoder_pairs: str = described("each decoder row's context → the piece it writes")
    row_reads_writes: list[str] = described("per decoder row: the piece it reads → the piece it writes")
    ffn_active_units: float = described("encoder layer 1: mean number of hidden units not zeroed by the ReLU")
    ffn_active_min: int
    ffn_active_max: int
    scaled_row_norms: str | None = optional("length of each scaled embedding row √d·E[token], to 2 decimals")
    pe_row_norm: float | None = optional("mean length of the positional-encoding rows")
    attn_input_norm: float = described("encoder layer 1: mean row length of the attention sub-layer's input")
    attn_output_norm: float = described("… and of its output, the correction added to it")
    ln_row_mean: float | None = optional("the first token's row after LayerNorm, γ and β: its mean")
    ln_row_std: float | None = optional("… and its standard deviation")
    logit_lens: str = described("per decoder layer, the most probable piece at each position if decoding "
                                "stopped after it, with its probability (the lens nodes' argmax)")


@dataclass(kw_only=True)
class LensPiece:
    piece: str
    p: float = described("its probability under the lens")


@dataclass(kw_only=True)
class LensLayer:
    """The logit lens after one decoder layer: side nodes, not on the forward path."""

    layer: int = described("the decoder layer (0 = the first)")
    reads: str = described("the node it reads: that layer's output")
    logits: str = described("node: reads · Eᵀ")
    probs: str = described("node: softmax of those logits")
    tokens: str = described("node: the most probable piece per position")
    top: list[list[LensPiece]] = described("per decoder position, the most probable pieces, best first")


@dataclass(kw_only=True)
class TraceHeader:
    """Everything a trace holds but its nodes."""

    format: str = described(TRACE_FORMAT)
    weights_version: str
    input: TraceInput
    source_tokens: list[str] = described("the encoder's rows: the English words, then </s>")
    target_tokens: list[str] = described("the decoder's rows: <s>, then the model's output")
    output_tokens: list[str] = described("what each decoder row predicts")
    memory: str | None = described("the node that is the encoder's memory z")
    parameters: list[str] = described("parameter ids the nodes refer to (see /api/weights)")
    derived: Derived
    ablation: list[str] = described("the parts switched off (model/ablation.py), in the model's order; "
                                     "each is a `part.gate` zero constant and a `part.off` node in the graph")
    lens: list[LensLayer] = described("the logit lens per decoder layer: side nodes `lens.dec.L.*`, "
                                      "computed from the forward path, never read by it")


@dataclass
class Trace:
    number: int
    source_tokens: list[str]
    target_tokens: list[str]  # the decoder's rows: <s> + the model's output
    output_tokens: list[str]  # what each decoder row predicts (ends with </s> when the model stops)
    nodes: list[Node]
    parameter_ids: list[str]
    derived: dict = field(default_factory=dict)
    weights_version: str = ""
    memory: str | None = None  # the node that is the encoder's output z (the last encoder layer's)
    ablation: list[str] = field(default_factory=list)  # parts switched off
    lens: list[LensLayer] = field(default_factory=list)  # the logit lens per decoder layer

    def node(self, node_id: str) -> Node:
        return next(n for n in self.nodes if n.id == node_id)

    def header(self) -> TraceHeader:
        pieces = [t for t in self.output_tokens if t != EOS]
        reference = to_german_pieces(self.number)
        return TraceHeader(
            format=TRACE_FORMAT, weights_version=self.weights_version,
            input=TraceInput(number=self.number, english=to_english(self.number), german_pieces=pieces,
                             german=join_german(pieces), reference_pieces=reference, correct=pieces == reference),
            source_tokens=self.source_tokens, target_tokens=self.target_tokens, output_tokens=self.output_tokens,
            memory=self.memory, parameters=self.parameter_ids, derived=Derived(**self.derived),
            ablation=list(self.ablation), lens=list(self.lens))

    def to_json(self) -> dict:
        """The header's fields and the nodes (their data as numpy arrays, for orjson)."""
        return {**asdict(self.header()), "nodes": [n.to_json() for n in self.nodes]}


def _np(t: Tensor) -> np.ndarray:
    return t.detach().numpy().copy()


def parameters(model: EncoderDecoder) -> dict[str, np.ndarray]:
    """Every parameter under its trace id, weight matrices as (d_in, d_out)."""
    if not paper_layout(model.cfg):
        return recipe_parameters(model)
    out: dict[str, np.ndarray] = {"E": _np(model.embedding)}
    if model.positions is not None:  # learned positions: the table P, max_len × d_model
        out["P"] = _np(model.positions)

    def attn(prefix: str, a: MultiHeadedAttention) -> None:
        for name in ("q", "k", "v", "o"):
            lin = getattr(a, f"w_{name}")
            out[f"{prefix}.W_{name}"], out[f"{prefix}.b_{name}"] = _np(lin.weight.T), _np(lin.bias)

    def norm(prefix: str, ln) -> None:
        out[f"{prefix}.ln.gamma"], out[f"{prefix}.ln.beta"] = _np(ln.weight), _np(ln.bias)

    def ffn(prefix: str, f) -> None:
        out[f"{prefix}.W_1"], out[f"{prefix}.b_1"] = _np(f.w_1.weight.T), _np(f.w_1.bias)
        out[f"{prefix}.W_2"], out[f"{prefix}.b_2"] = _np(f.w_2.weight.T), _np(f.w_2.bias)

    for i, layer in enumerate(model.encoder_layers):
        attn(f"enc.{i}.self", layer.self_attn), norm(f"enc.{i}.self", layer.sublayer[0].norm)
        ffn(f"enc.{i}.ffn", layer.feed_forward), norm(f"enc.{i}.ffn", layer.sublayer[1].norm)
    for i, layer in enumerate(model.decoder_layers):
        attn(f"dec.{i}.self", layer.self_attn), norm(f"dec.{i}.self", layer.sublayer[0].norm)
        attn(f"dec.{i}.cross", layer.src_attn), norm(f"dec.{i}.cross", layer.sublayer[1].norm)
        ffn(f"dec.{i}.ffn", layer.feed_forward), norm(f"dec.{i}.ffn", layer.sublayer[2].norm)
    return out


def weights_version(model: EncoderDecoder) -> str:
    h = hashlib.sha256()
    for k, v in sorted(model.state_dict().items()):
        h.update(k.encode())
        h.update(v.detach().numpy().tobytes())
    return h.hexdigest()[:16]


class _Graph:
    """Runs each operation in torch and records it as a node."""

    def __init__(self, params: dict[str, np.ndarray]):
        self.nodes: list[Node] = []
        self.values: dict[str, Tensor] = {k: torch.from_numpy(v) for k, v in params.items()}

    def add(self, node_id: str, op: str, inputs: list[str], value: Tensor, **attrs) -> Tensor:
        self.values[node_id] = value
        self.nodes.append(Node(node_id, op, inputs, attrs, _np(value)))
        return value

    def const(self, node_id: str, value: Tensor, **attrs) -> Tensor:
        return self.add(node_id, "Constant", [], value, **attrs)

    def gemm(self, node_id: str, x: str, w: str, b: str) -> Tensor:
        v = self.values
        return self.add(node_id, "Gemm", [x, w, b], v[x] @ v[w] + v[b])

    def layer_norm(self, node_id: str, x: str, prefix: str) -> Tensor:
        g, b = f"{prefix}.ln.gamma", f"{prefix}.ln.beta"
        out = torch.nn.functional.layer_norm(self.values[x], (self.values[x].shape[-1],), self.values[g],
                                             self.values[b], LN_EPSILON)
        return self.add(node_id, "LayerNormalization", [x, g, b], out, axis=-1, epsilon=LN_EPSILON)


def _embed(g: _Graph, side: str, ids: list[int], cfg: Config) -> str:
    """x⁽⁰⁾ = E[ids]·√d_model + PE  (§3.4, §3.5); PE is the sinusoid table, or rows of the learned P."""
    g.const(f"{side}.ids", torch.tensor(ids, dtype=torch.int64))
    g.add(f"{side}.emb", "Gather", ["E", f"{side}.ids"], g.values["E"][g.values[f"{side}.ids"]], axis=0)
    g.add(f"{side}.scaled", "Mul", [f"{side}.emb", "const.sqrt_d"], g.values[f"{side}.emb"] * g.values["const.sqrt_d"])
    if cfg.positional == "learned":
        if len(ids) > cfg.max_len:
            raise ValueError(f"{side} has {len(ids)} positions; the learned table P covers max_len = {cfg.max_len}")
        positions = g.const(f"{side}.positions", torch.arange(len(ids), dtype=torch.int64))
        g.add(f"{side}.pe", "Gather", ["P", f"{side}.positions"], g.values["P"][positions], axis=0)
    else:
        g.const(f"{side}.pe", sinusoid_table(len(ids), cfg.d_model),
                formula="PE(pos,2i)=sin(pos/10000^(2i/d)), PE(pos,2i+1)=cos(…)")
    g.add(f"{side}.x0", "Add", [f"{side}.scaled", f"{side}.pe"], g.values[f"{side}.scaled"] + g.values[f"{side}.pe"])
    return f"{side}.x0"


def _switched_off(g: _Graph, part: str, value: str, off: frozenset[str]) -> str:
    """`value`, or when `part` is switched off, `part.off` = value × `part.gate` (a zero constant)."""
    if part not in off:
        return value
    g.const(f"{part}.gate", torch.tensor(0.0), ablation=part)
    g.add(f"{part}.off", "Mul", [value, f"{part}.gate"], g.values[value] * g.values[f"{part}.gate"])
    return f"{part}.off"


def _heads(g: _Graph, p: str, cut: dict[str, str], cfg: Config, masked: bool,
           off: frozenset[str] = frozenset()) -> None:
    """Each head's slice of the Q, K and V nodes named in `cut`, its scaled scores (masked in the
    decoder's self-attention), softmax weights and output, then the heads' Concat (`{p}.concat`)."""
    h, d_k = cfg.n_heads, cfg.d_k
    outs = []
    for i in range(h):
        for m in "qkv":
            g.add(f"{p}.{m}.h{i}", "Slice", [cut[m]], g.values[cut[m]][:, i * d_k:(i + 1) * d_k],
                  axes=[1], starts=[i * d_k], ends=[(i + 1) * d_k])
        q, k, v = (g.values[f"{p}.{m}.h{i}"] for m in "qkv")
        alpha = 1 / math.sqrt(d_k) if cfg.scale_scores else 1.0
        scores = g.add(f"{p}.h{i}.scores", "Gemm", [f"{p}.q.h{i}", f"{p}.k.h{i}"], (q @ k.T) * alpha,
                       alpha=alpha, transB=1)
        logits_id = f"{p}.h{i}.scores"
        if masked:
            scores = g.add(f"{p}.h{i}.masked", "Where", ["dec.mask", logits_id, "const.neg_inf"],
                           torch.where(g.values["dec.mask"], scores, g.values["const.neg_inf"]))
            logits_id = f"{p}.h{i}.masked"
        w = g.add(f"{p}.h{i}.weights", "Softmax", [logits_id], scores.softmax(-1), axis=-1)
        g.add(f"{p}.h{i}.out", "MatMul", [f"{p}.h{i}.weights", f"{p}.v.h{i}"], w @ v)
        outs.append(_switched_off(g, f"{p}.h{i}", f"{p}.h{i}.out", off))
    g.add(f"{p}.concat", "Concat", outs, torch.cat([g.values[o] for o in outs], dim=1), axis=1)


def _attention(g: _Graph, p: str, x: str, kv: str, cfg: Config, masked: bool, off: frozenset[str] = frozenset()) -> str:
    """Multi-head attention as slices per head (§3.2.2), then the residual sum and LayerNorm.

    Q, K, V are h·d_k wide (not necessarily d_model); head i is columns i·d_k … (i+1)·d_k; the scores
    are Gemm(Q_i, K_i, alpha, transB=1) with alpha = 1/√d_k, or 1 when the config does not scale.
    A head switched off (in `off`) enters the Concat multiplied by zero; a sub-layer switched off
    enters the residual sum multiplied by zero (model/ablation.py).
    """
    g.gemm(f"{p}.q", x, f"{p}.W_q", f"{p}.b_q")
    g.gemm(f"{p}.k", kv, f"{p}.W_k", f"{p}.b_k")
    g.gemm(f"{p}.v", kv, f"{p}.W_v", f"{p}.b_v")
    _heads(g, p, {m: f"{p}.{m}" for m in "qkv"}, cfg, masked, off)
    g.gemm(f"{p}.proj", f"{p}.concat", f"{p}.W_o", f"{p}.b_o")
    branch = _switched_off(g, p, f"{p}.proj", off)
    g.add(f"{p}.sum", "Add", [x, branch], g.values[x] + g.values[branch])
    g.layer_norm(f"{p}.ln", f"{p}.sum", p)
    return f"{p}.ln"


def _feed_forward(g: _Graph, p: str, x: str, off: frozenset[str] = frozenset()) -> str:
    """FFN(x) = max(0, x·W_1 + b_1)·W_2 + b_2 (§3.3), then the residual sum and LayerNorm (the branch
    multiplied by zero when the sub-layer is switched off)."""
    g.gemm(f"{p}.hidden_pre", x, f"{p}.W_1", f"{p}.b_1")
    g.add(f"{p}.hidden", "Relu", [f"{p}.hidden_pre"], torch.relu(g.values[f"{p}.hidden_pre"]))
    g.gemm(f"{p}.out", f"{p}.hidden", f"{p}.W_2", f"{p}.b_2")
    branch = _switched_off(g, p, f"{p}.out", off)
    g.add(f"{p}.sum", "Add", [x, branch], g.values[x] + g.values[branch])
    g.layer_norm(f"{p}.ln", f"{p}.sum", p)
    return f"{p}.ln"


# Every field of Config, each followed by trace() (or refused by check_traceable). A field added to
# Config and not listed here makes trace() refuse every model until the trace learns it.
FOLLOWED_OPTIONS = frozenset({"vocab_size", "d_model", "n_heads", "d_k", "d_ff", "n_layers", "dropout",
                              "positional", "max_len", "scale_scores", "norm_first", "pad_id",
                              "norm", "ffn", "bias", "tie_output"})
TRACED_POSITIONALS = ("sinusoidal", "learned", "rotary")


def check_traceable(cfg: Config) -> None:
    """Raise a ValueError naming each option of `cfg` that trace() does not follow.

    Refused: positional "alibi" (a bias inside the scores that no ONNX operator names), n_layers < 1,
    and any Config field the trace does not know. Dropout is followed by tracing in eval mode.
    """
    refused = [f"{name} (unknown to the trace)" for name in sorted({f.name for f in fields(cfg)} - FOLLOWED_OPTIONS)]
    if cfg.positional not in TRACED_POSITIONALS:
        refused.append(f"positional={cfg.positional!r} (traced: {', '.join(TRACED_POSITIONALS)})")
    if cfg.n_layers < 1:
        refused.append(f"n_layers={cfg.n_layers} (at least one layer per stack)")
    if refused:
        raise ValueError("trace() does not follow " + "; ".join(refused))


def check_ablation_traceable(cfg: Config, ablation: tuple[str, ...] | list[str]) -> None:
    """Raise a ValueError when parts are switched off in a layout other than the paper's: the gates are
    built into the paper layout's functions only, and a trace must never show such a model intact."""
    if ablation and not paper_layout(cfg):
        raise ValueError("switching parts off is traced for the paper's layout only (post-LayerNorm, ReLU, "
                         "biases, tied output: the 2017 model); leave the ablation out for this model")


@torch.no_grad()
def trace(model: EncoderDecoder, number: int, params: dict[str, np.ndarray] | None = None,
          version: str = "", ablation: tuple[str, ...] | list[str] = ()) -> Trace:
    """The whole computation for one input; `params` and `version` may be passed in cached.

    `ablation` names parts switched off (model/ablation.py): greedy decoding runs without them, and
    the graph multiplies each one's output by a zero constant (`part.gate`, `part.off`), so that
    re-executing the nodes gives the ablated output. With no ablation the graph is the intact model's.
    After the forward path come the logit lens nodes (`lens.dec.L.*`, listed in the header's `lens`).

    Follows every option of the model's Config or raises ValueError (see `check_traceable`).
    """
    cfg = model.cfg
    check_traceable(cfg)
    model.eval()
    switched_off = parse_ablation(list(ablation), cfg)  # checked, once each, in the model's order
    off = frozenset(switched_off)
    check_ablation_traceable(cfg, switched_off)
    params = params if params is not None else parameters(model)
    if not paper_layout(cfg):
        return trace_recipe(model, number, params, version)
    source, output, rows, g = _start(ablated(model, off) if off else model, number, params)
    m = len(rows)

    x = _embed(g, "src", VOCAB.ids(source), cfg)
    for i in range(cfg.n_layers):
        x = _attention(g, f"enc.{i}.self", x, x, cfg, masked=False, off=off)
        x = _feed_forward(g, f"enc.{i}.ffn", x, off)
    memory = x

    y = _embed(g, "tgt", VOCAB.ids(rows), cfg)
    # row i may read columns 0..i; like the model's tgt_mask, never a padding column (only an untrained
    # model emits <pad>, but the trace follows pad_id all the same)
    causal = torch.ones(m, m, dtype=torch.bool).tril()
    g.const("dec.mask", causal & (torch.tensor(VOCAB.ids(rows)) != cfg.pad_id))
    layer_outputs = []
    for i in range(cfg.n_layers):
        y = _attention(g, f"dec.{i}.self", y, y, cfg, masked=True, off=off)
        y = _attention(g, f"dec.{i}.cross", y, memory, cfg, masked=False, off=off)
        y = _feed_forward(g, f"dec.{i}.ffn", y, off)
        layer_outputs.append(y)

    g.add("out.ET", "Transpose", ["E"], g.values["E"].T, perm=[1, 0])
    logits = g.add("out.logits", "MatMul", [y, "out.ET"], g.values[y] @ g.values["out.ET"])
    probs = g.add("out.probs", "Softmax", ["out.logits"], logits.softmax(-1), axis=-1)
    chosen = g.add("out.tokens", "ArgMax", ["out.probs"], probs.argmax(-1), axis=-1, keepdims=0)
    out_tokens = VOCAB.tokens_of(chosen.tolist())
    lens = [_lens(g, i, h) for i, h in enumerate(layer_outputs)]
    t = Trace(number, source, rows, out_tokens, g.nodes, list(params), weights_version=version, memory=memory,
              ablation=list(switched_off), lens=lens)
    t.derived = derived_figures(t, model)
    return t


LENS_TOP = 3  # pieces per position in the header's lens summary


def _lens(g: _Graph, layer: int, h: str) -> LensLayer:
    """The logit lens after decoder layer `layer`: its output h through the tied output projection and the
    softmax, as if decoding stopped there (nostalgebraist 2020). Side nodes: nothing on the forward path
    reads them. The header keeps each position's LENS_TOP most probable pieces."""
    p = f"lens.dec.{layer}"
    logits = g.add(f"{p}.logits", "MatMul", [h, "out.ET"], g.values[h] @ g.values["out.ET"])
    probs = g.add(f"{p}.probs", "Softmax", [f"{p}.logits"], logits.softmax(-1), axis=-1)
    g.add(f"{p}.tokens", "ArgMax", [f"{p}.probs"], probs.argmax(-1), axis=-1, keepdims=0)
    top = probs.topk(min(LENS_TOP, probs.shape[-1]), dim=-1)
    return LensLayer(layer=layer, reads=h, logits=f"{p}.logits", probs=f"{p}.probs", tokens=f"{p}.tokens",
                     top=[[LensPiece(piece=VOCAB.tokens[int(i)], p=float(v)) for v, i in zip(vs, ids, strict=True)]
                          for vs, ids in zip(top.values.tolist(), top.indices.tolist(), strict=True)])


def derived_figures(t: Trace, model: EncoderDecoder) -> dict:
    """The per-input numbers the article quotes, each computed from the trace's own tensors."""
    cfg = model.cfg
    first_sum = t.node("enc.0.self.sum").value[0]
    hidden = t.node("enc.0.ffn.hidden").value
    probs = t.node("out.probs").value
    chosen = t.node("out.tokens").value
    p_chosen = probs[np.arange(len(chosen)), chosen]
    worst = int(p_chosen.argmin())
    losses = -np.log(p_chosen.astype(np.float64))  # each piece's cross-entropy, unsmoothed
    last = cfg.n_layers - 1
    cross = np.mean([t.node(f"dec.{last}.cross.h{i}.weights").value for i in range(cfg.n_heads)], axis=0)
    pieces = [tok for tok in t.output_tokens if tok != EOS]
    return {
        "number": t.number,
        "english": " ".join(to_english(t.number)),
        "german": join_german(pieces),
        "german_pieces": " ".join(pieces),
        "reference_german": join_german(to_german_pieces(t.number)),
        "source_tokens": t.source_tokens,
        "target_tokens": t.target_tokens,
        "output_tokens": t.output_tokens,
        "n_source": len(t.source_tokens),
        "n_target": len(t.target_tokens),
        "first_token": t.source_tokens[0],
        "first_token_mean": float(first_sum.mean()),
        "first_token_std": float(first_sum.std()),  # population std, as LayerNorm uses
        "ffn_zero_fraction": float((hidden == 0).mean()),
        "least_certain_prob": float(p_chosen[worst]),
        "least_certain_token": t.output_tokens[worst],
        "least_certain_position": worst,
        # each decoder row named by what it reads and writes, then the source token it rests on most
        "cross_alignment": "; ".join(
            f"{t.target_tokens[r]} → {t.output_tokens[r]}: {t.source_tokens[int(cross[r].argmax())]}"
            for r in range(len(t.output_tokens))),
        "position_losses": ", ".join(f"{tok} {loss:.3f}" for tok, loss in zip(t.output_tokens, losses, strict=True)),
        "mean_position_loss": float(losses.mean()),
        "least_certain_reads": t.target_tokens[worst],
        **teaching_figures(t),
        "logit_lens": "; ".join(f"after decoder {la.layer + 1}: "
                                + " ".join(f"{top[0].piece} ({top[0].p:.2f})" for top in la.top) for la in t.lens),
    }


# ---------------------------------------------------------------------------------------------
# Today's recipe: pre-normalisation, RMSNorm, rotary positions, SwiGLU, no biases, untied output.
# Kept apart from the paper's functions above, which stay exactly as they were for the 2017 model;
# these follow each option on its own, so any mix of them (pre-LN with LayerNorm, say) is traced.

def paper_layout(cfg: Config) -> bool:
    """True when the config uses only the paper's layout, which the functions above trace."""
    return (not cfg.norm_first and cfg.norm == "layer" and cfg.ffn == "relu" and cfg.bias and cfg.tie_output
            and cfg.positional in ("sinusoidal", "learned"))


def recipe_parameters(model: EncoderDecoder) -> dict[str, np.ndarray]:
    """`parameters()` for any layout: norms under `{station}.norm` (pre) or `{station}.ln` (post), the
    final stack norms `enc.norm` and `dec.norm`, SwiGLU's W_3, no b_* without biases, and the untied
    output matrix `out.W_U` (d_model × V, as weight matrices are stored)."""
    cfg = model.cfg
    out: dict[str, np.ndarray] = {"E": _np(model.embedding)}
    if model.positions is not None:
        out["P"] = _np(model.positions)
    where = "norm" if cfg.norm_first else "ln"

    def linear(prefix: str, name: str, lin) -> None:
        out[f"{prefix}.W_{name}"] = _np(lin.weight.T)
        if lin.bias is not None:
            out[f"{prefix}.b_{name}"] = _np(lin.bias)

    def norm(prefix: str, module) -> None:
        out[f"{prefix}.gamma"] = _np(module.weight)
        if getattr(module, "bias", None) is not None:
            out[f"{prefix}.beta"] = _np(module.bias)

    def attn(prefix: str, a: MultiHeadedAttention, sub) -> None:
        if cfg.norm_first:
            norm(f"{prefix}.{where}", sub.norm)
        for name in "qkvo":
            linear(prefix, name, getattr(a, f"w_{name}"))
        if not cfg.norm_first:
            norm(f"{prefix}.{where}", sub.norm)

    def ffn(prefix: str, f, sub) -> None:
        if cfg.norm_first:
            norm(f"{prefix}.{where}", sub.norm)
        for name in ("1", "3", "2") if f.w_3 is not None else ("1", "2"):
            linear(prefix, name, getattr(f, f"w_{name}"))
        if not cfg.norm_first:
            norm(f"{prefix}.{where}", sub.norm)

    for i, layer in enumerate(model.encoder_layers):
        attn(f"enc.{i}.self", layer.self_attn, layer.sublayer[0])
        ffn(f"enc.{i}.ffn", layer.feed_forward, layer.sublayer[1])
    if model.encoder_norm is not None:
        norm("enc.norm", model.encoder_norm)
    for i, layer in enumerate(model.decoder_layers):
        attn(f"dec.{i}.self", layer.self_attn, layer.sublayer[0])
        attn(f"dec.{i}.cross", layer.src_attn, layer.sublayer[1])
        ffn(f"dec.{i}.ffn", layer.feed_forward, layer.sublayer[2])
    if model.decoder_norm is not None:
        norm("dec.norm", model.decoder_norm)
    if model.output is not None:
        out["out.W_U"] = _np(model.output.T)
    return out


def _linear(g: _Graph, node_id: str, x: str, p: str, name: str) -> Tensor:
    """x·W + b as Gemm, or x·W as MatMul when the map has no bias."""
    w, b = f"{p}.W_{name}", f"{p}.b_{name}"
    if b in g.values:
        return g.gemm(node_id, x, w, b)
    return g.add(node_id, "MatMul", [x, w], g.values[x] @ g.values[w])


def _norm(g: _Graph, node_id: str, x: str, cfg: Config) -> str:
    """LayerNormalization(x, γ, β) or RMSNormalization(x, γ) = γ·x/√(mean(x²) + ε), over the last axis."""
    gamma, xv = f"{node_id}.gamma", g.values[x]
    if cfg.norm == "rms":
        out = torch.nn.functional.rms_norm(xv, (xv.shape[-1],), g.values[gamma], NORM_EPSILON)
        g.add(node_id, "RMSNormalization", [x, gamma], out, axis=-1, epsilon=NORM_EPSILON)
    else:
        beta = f"{node_id}.beta"
        out = torch.nn.functional.layer_norm(xv, (xv.shape[-1],), g.values[gamma], g.values[beta], NORM_EPSILON)
        g.add(node_id, "LayerNormalization", [x, gamma, beta], out, axis=-1, epsilon=NORM_EPSILON)
    return node_id


def _recipe_embed(g: _Graph, side: str, ids: list[int], cfg: Config) -> str:
    """Rotary: x⁽⁰⁾ = E[ids]·√d_model, and the side's rotation tables (cos and sin of pos·θ_i, one row per
    position, d_k/2 angles) with the positions that index them; other positionals as the paper's."""
    if cfg.positional != "rotary":
        return _embed(g, side, ids, cfg)
    g.const(f"{side}.ids", torch.tensor(ids, dtype=torch.int64))
    g.add(f"{side}.emb", "Gather", ["E", f"{side}.ids"], g.values["E"][g.values[f"{side}.ids"]], axis=0)
    g.add(f"{side}.x0", "Mul", [f"{side}.emb", "const.sqrt_d"], g.values[f"{side}.emb"] * g.values["const.sqrt_d"])
    angles = sinusoid_angles(len(ids), cfg.d_k, torch.device("cpu"))  # the model's own angles
    g.const(f"{side}.positions", torch.arange(len(ids), dtype=torch.int64))
    g.const(f"{side}.rope.cos", angles.cos(), formula="cos(pos·10000^(−2i/d_k))")
    g.const(f"{side}.rope.sin", angles.sin(), formula="sin(pos·10000^(−2i/d_k))")
    return f"{side}.x0"


def _rotary(g: _Graph, node_id: str, x: str, side: str, cfg: Config) -> str:
    """RotaryEmbedding (opset 23, interleaved pairs (2i, 2i+1), num_heads = h) on Q or K, computed by the
    model's own `rotate` so that the trace is the model's arithmetic."""
    xv = g.values[x]
    t = xv.shape[0]
    heads = xv.view(t, cfg.n_heads, cfg.d_k).transpose(0, 1)[None]  # (1, h, T, d_k)
    out = rotate(heads)[0].transpose(0, 1).reshape(t, cfg.n_heads * cfg.d_k)
    g.add(node_id, "RotaryEmbedding", [x, f"{side}.rope.cos", f"{side}.rope.sin", f"{side}.positions"], out,
          interleaved=1, num_heads=cfg.n_heads)
    return node_id


def _recipe_attention(g: _Graph, p: str, x: str, kv: str, cfg: Config, masked: bool, side: str | None) -> str:
    """A residual attention sub-layer of any layout: pre-norm x + Attn(Norm(x)) or post-norm
    Norm(x + Attn(x)); rotary Q and K in self-attention (`side` names the rotation tables)."""
    inp = _norm(g, f"{p}.norm", x, cfg) if cfg.norm_first else x
    kv = inp if kv == x else kv
    _linear(g, f"{p}.q", inp, p, "q")
    _linear(g, f"{p}.k", kv, p, "k")
    _linear(g, f"{p}.v", kv, p, "v")
    cut = {"q": f"{p}.q", "k": f"{p}.k", "v": f"{p}.v"}
    if side is not None and cfg.positional == "rotary":
        cut["q"] = _rotary(g, f"{p}.q.rot", f"{p}.q", side, cfg)
        cut["k"] = _rotary(g, f"{p}.k.rot", f"{p}.k", side, cfg)
    _heads(g, p, cut, cfg, masked)
    _linear(g, f"{p}.proj", f"{p}.concat", p, "o")
    g.add(f"{p}.sum", "Add", [x, f"{p}.proj"], g.values[x] + g.values[f"{p}.proj"])
    return f"{p}.sum" if cfg.norm_first else _norm(g, f"{p}.ln", f"{p}.sum", cfg)


def _recipe_feed_forward(g: _Graph, p: str, x: str, cfg: Config) -> str:
    """ReLU FFN, or SwiGLU: (SiLU(x·W_1) ⊙ x·W_3)·W_2 with SiLU(z) = z·σ(z) as Sigmoid and Mul (opset 23
    has no SiLU operator); residual and norm as the layout puts them."""
    inp = _norm(g, f"{p}.norm", x, cfg) if cfg.norm_first else x
    _linear(g, f"{p}.hidden_pre", inp, p, "1")
    pre = g.values[f"{p}.hidden_pre"]
    if cfg.ffn == "swiglu":
        g.add(f"{p}.sigmoid", "Sigmoid", [f"{p}.hidden_pre"], torch.sigmoid(pre))
        g.add(f"{p}.silu", "Mul", [f"{p}.hidden_pre", f"{p}.sigmoid"], pre * g.values[f"{p}.sigmoid"])
        _linear(g, f"{p}.up", inp, p, "3")
        g.add(f"{p}.hidden", "Mul", [f"{p}.silu", f"{p}.up"], g.values[f"{p}.silu"] * g.values[f"{p}.up"])
    else:
        g.add(f"{p}.hidden", "Relu", [f"{p}.hidden_pre"], torch.relu(pre))
    _linear(g, f"{p}.out", f"{p}.hidden", p, "2")
    g.add(f"{p}.sum", "Add", [x, f"{p}.out"], g.values[x] + g.values[f"{p}.out"])
    return f"{p}.sum" if cfg.norm_first else _norm(g, f"{p}.ln", f"{p}.sum", cfg)


def _start(decoder: EncoderDecoder, number: int, params: dict[str, np.ndarray]
           ) -> tuple[list[str], list[str], list[str], _Graph]:
    """What both layouts' traces begin with: the source pieces, the greedy output of `decoder` (the model,
    or its ablated copy), the decoder's input rows (<s> and the output) and a graph holding the constants.
    The greedy output is found by checking the correct German as a draft: one decoder pass when the model
    gets it right, greedy's tokens whatever it does (`greedy_checking`)."""
    source = VOCAB.source_tokens(number)
    output = VOCAB.tokens_of(greedy_checking(decoder, VOCAB.ids(source), VOCAB.ids(to_german_pieces(number))))
    g = _Graph(params)
    g.const("const.sqrt_d", torch.tensor(math.sqrt(decoder.cfg.d_model)))
    g.const("const.neg_inf", torch.tensor(float("-inf")))
    return source, output, ["<s>"] + output, g


def trace_recipe(model: EncoderDecoder, number: int, params: dict[str, np.ndarray], version: str) -> Trace:
    """`trace()` for any layout other than the paper's (called by it; same header, same conventions)."""
    cfg = model.cfg
    source, output, rows, g = _start(model, number, params)
    m = len(rows)

    x = _recipe_embed(g, "src", VOCAB.ids(source), cfg)
    for i in range(cfg.n_layers):
        x = _recipe_attention(g, f"enc.{i}.self", x, x, cfg, masked=False, side="src")
        x = _recipe_feed_forward(g, f"enc.{i}.ffn", x, cfg)
    memory = _norm(g, "enc.norm", x, cfg) if cfg.norm_first else x

    y = _recipe_embed(g, "tgt", VOCAB.ids(rows), cfg)
    causal = torch.ones(m, m, dtype=torch.bool).tril()
    g.const("dec.mask", causal & (torch.tensor(VOCAB.ids(rows)) != cfg.pad_id))
    for i in range(cfg.n_layers):
        y = _recipe_attention(g, f"dec.{i}.self", y, y, cfg, masked=True, side="tgt")
        y = _recipe_attention(g, f"dec.{i}.cross", y, memory, cfg, masked=False, side=None)
        y = _recipe_feed_forward(g, f"dec.{i}.ffn", y, cfg)
    if cfg.norm_first:
        y = _norm(g, "dec.norm", y, cfg)

    if cfg.tie_output:
        g.add("out.ET", "Transpose", ["E"], g.values["E"].T, perm=[1, 0])
        logits = g.add("out.logits", "MatMul", [y, "out.ET"], g.values[y] @ g.values["out.ET"])
    else:
        logits = g.add("out.logits", "MatMul", [y, "out.W_U"], g.values[y] @ g.values["out.W_U"])
    probs = g.add("out.probs", "Softmax", ["out.logits"], logits.softmax(-1), axis=-1)
    chosen = g.add("out.tokens", "ArgMax", ["out.probs"], probs.argmax(-1), axis=-1, keepdims=0)
    out_tokens = VOCAB.tokens_of(chosen.tolist())
    t = Trace(number, source, rows, out_tokens, g.nodes, list(params), weights_version=version, memory=memory)
    t.derived = derived_figures(t, model)
    return t
