"""The trace: every tensor of one translation, as a self-describing graph of ONNX-style operations.

The encoder runs once over the source, the decoder once over <s> + the model's own greedy output
(what it reads at inference). Each node names its ONNX operator, its inputs (ids of earlier nodes or
parameters), its attributes, its shape and its data, so any client can recompute every node from
its inputs (tests/onnx_numpy.py does, without torch). Parameters are graph tensors too, listed
apart so that they can be sent once (recorder/parameters.py).

Conventions: weight matrices are stored as the paper writes them, (d_in, d_out), so that
`Gemm(X, W, b) = X·W + b`; torch's nn.Linear keeps Wᵀ. Masked scores are −∞ (null in JSON). Every id
is written by the id grammar (model/ids.py).

One recording follows every option of `Config` or refuses it (recorder/options.py): any width, head
count, d_k (the inner width h·d_k need not be d_model), depth and vocabulary; scores with or without
the 1/√d_k scale (Gemm's alpha is 1 without it); sinusoidal positions (a Constant), learned ones (the
table `P`, gathered at `{side}.positions`) or rotary ones; post-norm (the paper's) or pre-norm with a
final norm after each stack; LayerNorm or RMSNorm; a ReLU or SwiGLU feed-forward network; maps with or
without biases; a tied or untied output. Today's recipe (`MODERN`) uses ONNX opset 23's own operators:
RMSNormalization, RotaryEmbedding, Sigmoid and Mul for SwiGLU's SiLU, MatMul for a map without bias.
One convention of every node holds for RotaryEmbedding too: the trace has no batch axis (one
sentence), so its input is (sequence, h·d_k), the opset's 3-D (batch, sequence, hidden) form with
batch = 1 left out. ALiBi is refused with a ValueError naming the option.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from model import ids
from model.ablation import ablated, parse_ablation
from model.decode import EXTRA_LENGTH, greedy_checking
from model.numbers import to_german_pieces
from model.transformer import NORM_EPSILON, Config, EncoderDecoder, rotate, sinusoid_angles, sinusoid_table
from model.vocab import VOCAB
from recorder.documents import LensLayer, LensPiece, Trace
from recorder.graph import Graph
from recorder.options import check_traceable
from recorder.parameters import parameters

join = ids.join
LENS_TOP = 3  # pieces per position in the header's lens summary


def _embed(g: Graph, side: str, tokens: list[int], cfg: Config) -> str:
    """x⁽⁰⁾ = E[ids]·√d_model + PE (paper §3.4, §3.5); PE is the sinusoid table, or rows of the learned P.
    Rotary positions add nothing here: x⁽⁰⁾ = E[ids]·√d_model, and the side's rotation tables (cos and
    sin of pos·θ_i, one row per position, d_k/2 angles) with the positions that index them."""
    at, emb, x0 = join(side, "ids"), join(side, "emb"), join(side, "x0")
    g.const(at, torch.tensor(tokens, dtype=torch.int64))
    g.add(emb, "Gather", ["E", at], g.values["E"][g.values[at]], axis=0)
    if cfg.positional == "rotary":
        g.add(x0, "Mul", [emb, "const.sqrt_d"], g.values[emb] * g.values["const.sqrt_d"])
        angles = sinusoid_angles(len(tokens), cfg.d_k, torch.device("cpu"))  # the model's own angles
        g.const(join(side, "positions"), torch.arange(len(tokens), dtype=torch.int64))
        g.const(join(side, "rope", "cos"), angles.cos(), formula="cos(pos·10000^(−2i/d_k))")
        g.const(join(side, "rope", "sin"), angles.sin(), formula="sin(pos·10000^(−2i/d_k))")
        return x0
    scaled, pe = join(side, "scaled"), join(side, "pe")
    g.add(scaled, "Mul", [emb, "const.sqrt_d"], g.values[emb] * g.values["const.sqrt_d"])
    if cfg.positional == "learned":
        if len(tokens) > cfg.max_len:
            raise ValueError(f"{side} has {len(tokens)} positions; the learned table P covers max_len = {cfg.max_len}")
        positions = g.const(join(side, "positions"), torch.arange(len(tokens), dtype=torch.int64))
        g.add(pe, "Gather", ["P", join(side, "positions")], g.values["P"][positions], axis=0)
    else:
        g.const(
            pe,
            sinusoid_table(len(tokens), cfg.d_model),
            formula="PE(pos,2i)=sin(pos/10000^(2i/d)), PE(pos,2i+1)=cos(…)",
        )
    g.add(x0, "Add", [scaled, pe], g.values[scaled] + g.values[pe])
    return x0


def _norm(g: Graph, node_id: str, x: str, cfg: Config, params: str | None = None) -> str:
    """LayerNormalization(x, γ, β) or RMSNormalization(x, γ) = γ·x/√(mean(x²) + ε), over the last axis;
    γ and β are `{params}.gamma` and `.beta` (params: the node's own id unless given)."""
    params = params or node_id
    gamma, xv = join(params, "gamma"), g.values[x]
    if cfg.norm == "rms":
        out = torch.nn.functional.rms_norm(xv, (xv.shape[-1],), g.values[gamma], NORM_EPSILON)
        g.add(node_id, "RMSNormalization", [x, gamma], out, axis=-1, epsilon=NORM_EPSILON)
    else:
        beta = join(params, "beta")
        out = torch.nn.functional.layer_norm(xv, (xv.shape[-1],), g.values[gamma], g.values[beta], NORM_EPSILON)
        g.add(node_id, "LayerNormalization", [x, gamma, beta], out, axis=-1, epsilon=NORM_EPSILON)
    return node_id


def _linear(g: Graph, node_id: str, x: str, p: str, name: str) -> str:
    """x·W + b (or x·W without biases) with the sub-layer `p`'s map `name`."""
    g.linear(node_id, x, join(p, f"W_{name}"), join(p, f"b_{name}"))
    return node_id


def _rotary(g: Graph, node_id: str, x: str, side: str, cfg: Config) -> str:
    """RotaryEmbedding (opset 23, interleaved pairs (2i, 2i+1), num_heads = h) on Q or K, computed by the
    model's own `rotate` so that the trace is the model's arithmetic."""
    xv = g.values[x]
    t = xv.shape[0]
    heads = xv.view(t, cfg.n_heads, cfg.d_k).transpose(0, 1)[None]  # (1, h, T, d_k)
    out = rotate(heads)[0].transpose(0, 1).reshape(t, cfg.n_heads * cfg.d_k)
    inputs = [x, join(side, "rope", "cos"), join(side, "rope", "sin"), join(side, "positions")]
    g.add(node_id, "RotaryEmbedding", inputs, out, interleaved=1, num_heads=cfg.n_heads)
    return node_id


def _switched_off(g: Graph, part: str, value: str, off: frozenset[str]) -> str:
    """`value`, or when `part` is switched off, `part.off` = value × `part.gate` (a zero constant)."""
    if part not in off:
        return value
    gate, gated = join(part, "gate"), join(part, "off")
    g.const(gate, torch.tensor(0.0), ablation=part)
    g.add(gated, "Mul", [value, gate], g.values[value] * g.values[gate])
    return gated


def _head(g: Graph, p: str, i: int, cut: dict[str, str], cfg: Config, masked: bool) -> str:
    """Head i's slices of the Q, K and V nodes named in `cut` (columns i·d_k … (i+1)·d_k), its scores
    Gemm(Q_i, K_i, alpha, transB=1) with alpha = 1/√d_k (1 when the config does not scale), masked in the
    decoder's self-attention, its softmax weights and its output weights·V_i."""
    d_k = cfg.d_k
    for m in "qkv":
        g.add(
            ids.head_slice_id(join(p, m), i),
            "Slice",
            [cut[m]],
            g.values[cut[m]][:, i * d_k : (i + 1) * d_k],
            axes=[1],
            starts=[i * d_k],
            ends=[(i + 1) * d_k],
        )
    q_id, k_id, v_id = (ids.head_slice_id(join(p, m), i) for m in "qkv")
    q, k, v = g.values[q_id], g.values[k_id], g.values[v_id]
    alpha = 1 / math.sqrt(d_k) if cfg.scale_scores else 1.0
    logits_id = ids.head_id(p, i, "scores")
    scores = g.add(logits_id, "Gemm", [q_id, k_id], (q @ k.T) * alpha, alpha=alpha, transB=1)
    if masked:
        masked_id = ids.head_id(p, i, "masked")
        scores = g.add(
            masked_id,
            "Where",
            ["dec.mask", logits_id, "const.neg_inf"],
            torch.where(g.values["dec.mask"], scores, g.values["const.neg_inf"]),
        )
        logits_id = masked_id
    weights_id, out_id = ids.head_id(p, i, "weights"), ids.head_id(p, i, "out")
    w = g.add(weights_id, "Softmax", [logits_id], scores.softmax(-1), axis=-1)
    g.add(out_id, "MatMul", [weights_id, v_id], w @ v)
    return out_id


def _heads(g: Graph, p: str, cut: dict[str, str], cfg: Config, masked: bool, off: frozenset[str]) -> str:
    """Every head (a head switched off enters the Concat multiplied by zero), then their Concat."""
    outs = [
        _switched_off(g, ids.join(p, ids.head_word(i)), _head(g, p, i, cut, cfg, masked), off)
        for i in range(cfg.n_heads)
    ]
    concat = join(p, "concat")
    g.add(concat, "Concat", outs, torch.cat([g.values[o] for o in outs], dim=1), axis=1)
    return concat


def _residual(g: Graph, p: str, x: str, branch: str, cfg: Config, off: frozenset[str]) -> str:
    """x + branch (the branch multiplied by zero when the sub-layer is switched off), then post-norm
    Norm(x + branch); pre-norm leaves the sum as it is."""
    branch = _switched_off(g, p, branch, off)
    total = join(p, "sum")
    g.add(total, "Add", [x, branch], g.values[x] + g.values[branch])
    return total if cfg.norm_first else _norm(g, join(p, "ln"), total, cfg)


def _attention(
    g: Graph, p: str, x: str, kv: str, cfg: Config, masked: bool, off: frozenset[str], side: str | None = None
) -> str:
    """Multi-head attention as slices per head (paper §3.2.2) in a residual sub-layer: post-norm
    Norm(x + Attn(x)) or pre-norm x + Attn(Norm(x)). Q, K, V are h·d_k wide (not necessarily d_model);
    with rotary positions, self-attention's Q and K are rotated (`side` names the rotation tables)."""
    inp = _norm(g, join(p, "norm"), x, cfg) if cfg.norm_first else x
    kv = inp if kv == x else kv
    cut = {
        "q": _linear(g, join(p, "q"), inp, p, "q"),
        "k": _linear(g, join(p, "k"), kv, p, "k"),
        "v": _linear(g, join(p, "v"), kv, p, "v"),
    }
    if side is not None and cfg.positional == "rotary":
        for m in "qk":
            cut[m] = _rotary(g, join(p, m, "rot"), cut[m], side, cfg)
    concat = _heads(g, p, cut, cfg, masked, off)
    return _residual(g, p, x, _linear(g, join(p, "proj"), concat, p, "o"), cfg, off)


def _feed_forward(g: Graph, p: str, x: str, cfg: Config, off: frozenset[str]) -> str:
    """FFN(x) = max(0, x·W_1 + b_1)·W_2 + b_2 (paper §3.3), or SwiGLU: (SiLU(x·W_1) ⊙ x·W_3)·W_2 with
    SiLU(z) = z·σ(z) as Sigmoid and Mul (opset 23 has no SiLU operator); residual and norm as the
    layout puts them."""
    inp = _norm(g, join(p, "norm"), x, cfg) if cfg.norm_first else x
    pre_id, hidden = _linear(g, join(p, "hidden_pre"), inp, p, "1"), join(p, "hidden")
    pre = g.values[pre_id]
    if cfg.ffn == "swiglu":
        sigmoid, silu = join(p, "sigmoid"), join(p, "silu")
        g.add(sigmoid, "Sigmoid", [pre_id], torch.sigmoid(pre))
        g.add(silu, "Mul", [pre_id, sigmoid], pre * g.values[sigmoid])
        up = _linear(g, join(p, "up"), inp, p, "3")
        g.add(hidden, "Mul", [silu, up], g.values[silu] * g.values[up])
    else:
        g.add(hidden, "Relu", [pre_id], torch.relu(pre))
    return _residual(g, p, x, _linear(g, join(p, "out"), hidden, p, "2"), cfg, off)


def _encoder(g: Graph, source: list[str], cfg: Config, off: frozenset[str]) -> str:
    """The encoder's layers over the source; returns the memory z (pre-norm: after the final norm)."""
    x = _embed(g, "src", VOCAB.ids(source), cfg)
    for i in range(cfg.n_layers):
        x = _attention(g, ids.sublayer_id("enc", i, "self"), x, x, cfg, False, off, side="src")
        x = _feed_forward(g, ids.sublayer_id("enc", i, "ffn"), x, cfg, off)
    return _norm(g, join("enc", "norm"), x, cfg) if cfg.norm_first else x


def _decoder(g: Graph, rows: list[str], memory: str, cfg: Config, off: frozenset[str]) -> list[str]:
    """The decoder's layers over its rows; returns each layer's output."""
    y = _embed(g, "tgt", VOCAB.ids(rows), cfg)
    # row i may read columns 0..i; like the model's tgt_mask, never a padding column (only an untrained
    # model emits <pad>, but the trace follows pad_id all the same)
    causal = torch.ones(len(rows), len(rows), dtype=torch.bool).tril()
    g.const(join("dec", "mask"), causal & (torch.tensor(VOCAB.ids(rows)) != cfg.pad_id))
    outputs = []
    for i in range(cfg.n_layers):
        y = _attention(g, ids.sublayer_id("dec", i, "self"), y, y, cfg, True, off, side="tgt")
        y = _attention(g, ids.sublayer_id("dec", i, "cross"), y, memory, cfg, False, off)
        y = _feed_forward(g, ids.sublayer_id("dec", i, "ffn"), y, cfg, off)
        outputs.append(y)
    return outputs


def _unembed(g: Graph, node_id: str, h: str, cfg: Config) -> torch.Tensor:
    """h·Eᵀ with the tied output (`out.ET`, the Transpose of E, made once), or h·W_U untied."""
    matrix = join("out", "ET") if cfg.tie_output else join("out", "W_U")
    if cfg.tie_output and matrix not in g.values:
        g.add(matrix, "Transpose", ["E"], g.values["E"].T, perm=[1, 0])
    return g.add(node_id, "MatMul", [h, matrix], g.values[h] @ g.values[matrix])


def _output(g: Graph, h: str, cfg: Config) -> list[str]:
    """The output layer on the last decoder layer's output (pre-norm: after the final norm `dec.norm`):
    logits, softmax and the most probable piece per row; returns those pieces."""
    if cfg.norm_first:
        h = _norm(g, join("dec", "norm"), h, cfg)
    logits = _unembed(g, join("out", "logits"), h, cfg)
    probs = g.add(join("out", "probs"), "Softmax", [join("out", "logits")], logits.softmax(-1), axis=-1)
    chosen = g.add(join("out", "tokens"), "ArgMax", [join("out", "probs")], probs.argmax(-1), axis=-1, keepdims=0)
    return VOCAB.tokens_of(chosen.tolist())


def _lens(g: Graph, layer: int, h: str, cfg: Config) -> LensLayer:
    """The logit lens after decoder layer `layer` (nostalgebraist 2020): its output h through the output
    layer as if decoding stopped there. The honest reading of "the output layer" is the model's own:
    pre-norm, the final norm's γ (`dec.norm`, node `lens.dec.L.norm`) first, since the output matrix was
    trained on normed rows only; then Eᵀ (tied) or W_U (untied), and the softmax. The last layer's lens
    is the output itself. Side nodes: nothing on the forward path reads them. The header keeps each
    position's LENS_TOP most probable pieces."""
    reads = h
    if cfg.norm_first:
        h = _norm(g, ids.lens_id(layer, "norm"), h, cfg, params=join("dec", "norm"))
    logits_id, probs_id, tokens_id = (ids.lens_id(layer, role) for role in ("logits", "probs", "tokens"))
    logits = _unembed(g, logits_id, h, cfg)
    probs = g.add(probs_id, "Softmax", [logits_id], logits.softmax(-1), axis=-1)
    g.add(tokens_id, "ArgMax", [probs_id], probs.argmax(-1), axis=-1, keepdims=0)
    top = probs.topk(min(LENS_TOP, probs.shape[-1]), dim=-1)
    return LensLayer(
        layer=layer,
        reads=reads,
        logits=logits_id,
        probs=probs_id,
        tokens=tokens_id,
        top=[
            [LensPiece(piece=VOCAB.tokens[int(i)], p=float(v)) for v, i in zip(vs, at, strict=True)]
            for vs, at in zip(top.values.tolist(), top.indices.tolist(), strict=True)
        ],
    )


def _start(decoder: EncoderDecoder, number: int) -> tuple[list[str], list[str]]:
    """What a trace begins with: the source pieces and the decoder's rows (<s> and the greedy output of
    `decoder`, the model or its ablated copy). The greedy output is found by checking the correct German
    as a draft: one decoder pass when the model gets it right, greedy's tokens whatever it does
    (`greedy_checking`)."""
    source = VOCAB.source_tokens(number)
    output = VOCAB.tokens_of(greedy_checking(decoder, VOCAB.ids(source), VOCAB.ids(to_german_pieces(number))))
    # Each row predicts the next piece, so the rows are <s> and the output but its last piece: greedy's
    # last prediction is </s>, or, where it stopped at the length limit, the last piece it wrote. A row
    # more would predict a piece greedy never wrote.
    cut = len(output) == len(source) + EXTRA_LENGTH
    return source, ["<s>"] + (output[:-1] if cut else output)


def _recorded_on_the_answer(cfg: Config, params: dict[str, np.ndarray], number: int, lens: bool):
    """The recording over <s> + the correct German, when its own choices are that German and then </s>: those
    rows are then the ones greedy decoding reads (each row's choice is the next row), and the recording
    itself is the check, so the model runs once instead of twice (`_start`'s pass, then the recording's).
    None when the model writes anything else (or would stop at the length limit): then greedy goes first."""
    source, answer = VOCAB.source_tokens(number), to_german_pieces(number)
    if len(answer) >= len(source) + EXTRA_LENGTH:
        return None
    recorded = record(cfg, params, source, ["<s>"] + answer, lens=lens)
    return (source, ["<s>"] + answer, recorded) if recorded[2] == answer + ["</s>"] else None


@torch.no_grad()
def record(
    cfg: Config,
    params: dict[str, np.ndarray],
    source: list[str],
    rows: list[str],
    off: frozenset[str] = frozenset(),
    lens: bool = True,
) -> tuple[Graph, str, list[str], list[LensLayer]]:
    """The graph over given source pieces and decoder rows (any pieces: recorder/program.py records it at
    two lengths to find its length-free form): the constants, the encoder, the decoder, the output layer
    and the logit lens. Returns the graph, the memory's node, the output pieces and the lens layers."""
    g = Graph(params)
    g.const(join("const", "sqrt_d"), torch.tensor(math.sqrt(cfg.d_model)))
    g.const(join("const", "neg_inf"), torch.tensor(float("-inf")))
    memory = _encoder(g, source, cfg, off)
    layer_outputs = _decoder(g, rows, memory, cfg, off)
    out_tokens = _output(g, layer_outputs[-1], cfg)
    lenses = [_lens(g, i, h, cfg) for i, h in enumerate(layer_outputs)] if lens else []
    return g, memory, out_tokens, lenses


@torch.no_grad()
def trace(
    model: EncoderDecoder,
    number: int,
    params: dict[str, np.ndarray] | None = None,
    version: str = "",
    ablation: tuple[str, ...] | list[str] = (),
    lens: bool = True,
) -> Trace:
    """The whole computation for one input; `params` and `version` may be passed in cached.

    `ablation` names parts switched off (model/ablation.py): greedy decoding runs without them, and
    the graph multiplies each one's output by a zero constant (`part.gate`, `part.off`), so that
    re-executing the nodes gives the ablated output. With no ablation the graph is the intact model's.
    After the forward path come the logit lens nodes (`lens.dec.L.*`, listed in the header's `lens`),
    for every layout, unless `lens` is False.
    The article's live figures (`derived`) are not computed here: article/derived.py reads them off.

    Follows every option of the model's Config or raises ValueError (see `check_traceable`).
    """
    cfg = model.cfg
    check_traceable(cfg)
    switched_off = parse_ablation(list(ablation), cfg)  # checked, once each, in the model's order
    off = frozenset(switched_off)
    params = params if params is not None else parameters(model)
    # with every part on, the model nearly always writes the correct German; a part switched off often
    # changes what it writes, and greedy decoding goes first
    checked = None if off else _recorded_on_the_answer(cfg, params, number, lens)
    if checked is not None:
        source, rows, (g, memory, out_tokens, lenses) = checked
    else:
        source, rows = _start(ablated(model, off) if off else model, number)
        g, memory, out_tokens, lenses = record(cfg, params, source, rows, off, lens)
    return Trace(
        number,
        source,
        rows,
        out_tokens,
        g.nodes,
        list(params),
        weights_version=version,
        memory=memory,
        ablation=list(switched_off),
        lens=lenses,
    )
