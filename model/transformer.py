"""The encoder-decoder Transformer of Vaswani et al. (2017), at 1/16 of the base model's width.

Post-LN sub-layers with no LayerNorm after either stack (§3.1), sinusoidal positions added to
embeddings scaled by √d_model (§3.4, §3.5), one embedding matrix used as source embedding, target
embedding and output projection (§3.4), ReLU feed-forward (§3.3). The research desk switches a few
of these off through `Config`; the defaults are the paper's. `MODERN` is today's recipe on the same
task: pre-normalisation with RMSNorm, rotary positions, SwiGLU feed-forward, no biases and an
untied output projection, its d_ff chosen so that the parameter count stays within 1 % of the
paper-recipe miniature's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import Tensor, nn

# The configuration and the positions live in their own modules; their names are re-exported here, so that
# `from model.transformer import Config, MODERN, rotate, …` keeps working.
from model.config import (  # noqa: F401
    FFN_KINDS,
    MODERN,
    NORM_EPSILON,
    NORM_KINDS,
    POSITIONAL_KINDS,
    Config,
    count_parameters,
    parameter_breakdown,
)
from model.positions import alibi_bias, rotate, sinusoid_angles, sinusoid_table  # noqa: F401

# PyTorch's CPU softmax is vectorised for rows of at least one AVX-512 vector (16 floats); shorter rows
# take a scalar path about 40× slower per element (bench/bench_train.py), and this model's rows are
# 2–14 long. `softmax_rows` pads them to 16 with −∞, which adds exp(−∞) = 0 to each sum, when there
# are enough of them to pay for the padding (training batches; not one decoding step of one input).
SOFTMAX_MIN_WIDTH, SOFTMAX_PAD_FROM = 16, 4096


def softmax_rows(scores: Tensor) -> Tensor:
    """softmax over the last axis, rows shorter than SOFTMAX_MIN_WIDTH padded with −∞ first (the same
    function: the padding gets weight exactly 0; the result differs from `scores.softmax(-1)` only in
    the last bits of the float sums)."""
    n = scores.shape[-1]
    if n >= SOFTMAX_MIN_WIDTH or scores.numel() < SOFTMAX_PAD_FROM or scores.device.type != "cpu":
        return scores.softmax(dim=-1)
    return F.pad(scores, (0, SOFTMAX_MIN_WIDTH - n), value=float("-inf")).softmax(dim=-1)[..., :n]


def attention(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, scale: bool, bias: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    """Attention(Q, K, V) = softmax(QKᵀ / √d_k) V  (§3.2.1). Returns the output and the weights."""
    scores = q @ k.transpose(-2, -1)  # (B, h, T_q, T_k)
    if scale:
        scores = scores / math.sqrt(q.shape[-1])
    if bias is not None:
        scores = scores + bias
    if mask is not None:
        scores = scores.where(mask, float("-inf"))  # §3.2.3: illegal connections to −∞
    weights = softmax_rows(scores)
    return weights @ v, weights


@dataclass
class KeyValues:
    """One attention's keys and values kept between decoding steps, (B, h, T, d_k) each."""

    k: Tensor | None = None
    v: Tensor | None = None


@dataclass
class DecoderCache:
    """What incremental decoding keeps between steps (`EncoderDecoder.decode(..., cache=)`).

    Self-attention: every earlier position's keys and values, one row more per step. Cross-attention:
    the memory's keys and values, projected once. `ids` are the tokens read so far (for the padding
    mask and the next position). `select` keeps or reorders batch rows, as beam search needs.
    """

    ids: Tensor | None = None  # (B, T) decoder tokens read so far
    self_kv: list[KeyValues] = field(default_factory=list)
    cross_kv: list[KeyValues] = field(default_factory=list)

    @property
    def length(self) -> int:
        return 0 if self.ids is None else self.ids.shape[1]

    def extend(self, tgt: Tensor, model: EncoderDecoder) -> Tensor:
        """Take in the next tokens; return their rows of the model's causal, padding-aware mask."""
        start = self.length
        self.ids = tgt if self.ids is None else torch.cat([self.ids, tgt], dim=1)
        if not self.self_kv:
            self.self_kv = [KeyValues() for _ in model.decoder_layers]
            self.cross_kv = [KeyValues() for _ in model.decoder_layers]
        return model.tgt_mask(self.ids)[:, :, start:]

    def layer(self, i: int) -> tuple[KeyValues, KeyValues]:
        return self.self_kv[i], self.cross_kv[i]

    def keep(self, length: int) -> None:
        """Forget every decoder position from `length` on (a draft's rejected rows); the memory's stay."""
        self.ids = self.ids[:, :length]
        for kv in self.self_kv:
            kv.k, kv.v = kv.k[:, :, :length], kv.v[:, :, :length]

    def select(self, rows: Tensor) -> None:
        self.ids = self.ids[rows] if self.ids is not None else None
        for kv in self.self_kv + self.cross_kv:
            if kv.k is not None:
                kv.k, kv.v = kv.k[rows], kv.v[rows]


class Packing:
    """Where a padded batch's real tokens are: `rows` (B, T) is True at each of them. Everything but
    attention works one position at a time, so a batch can carry only its real tokens, (N, d), and skip
    the padding (about half of a training batch): the same function, on fewer rows."""

    def __init__(self, rows: Tensor):
        self.rows = rows
        self.index = rows.flatten().nonzero().squeeze(1)  # found once, used by every pack and unpack

    @classmethod
    def of(cls, ids: Tensor, pad_id: int) -> Packing:
        return cls(ids != pad_id)

    def pack(self, x: Tensor) -> Tensor:  # (B, T, …) → (N, …), in the order of x[rows]
        return x.flatten(0, 1).index_select(0, self.index)

    def unpack(self, x: Tensor) -> Tensor:  # (N, …) → (B, T, …), zeros where the padding was
        b, t = self.rows.shape
        return x.new_zeros(b * t, *x.shape[1:]).index_copy(0, self.index, x).view(b, t, *x.shape[1:])


def side_by_side(x: Tensor, *maps: nn.Linear) -> tuple[Tensor, ...]:
    """x·W + b for each map, as one product with the matrices side by side: the same dot products,
    in one larger multiplication instead of several small ones (the projections are a training
    step's largest cost; bench/bench_train.py)."""
    bias = torch.cat([m.bias for m in maps]) if maps[0].bias is not None else None
    return F.linear(x, torch.cat([m.weight for m in maps]), bias).chunk(len(maps), dim=-1)


class MultiHeadedAttention(nn.Module):
    """MultiHead(Q, K, V) = Concat(head_1, …, head_h) W^O, head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)."""

    def __init__(self, cfg: Config, cross: bool = False):
        super().__init__()
        self.h, self.d_k, self.cfg, self.cross = cfg.n_heads, cfg.d_k, cfg, cross
        inner = cfg.n_heads * cfg.d_k
        self.w_q, self.w_k, self.w_v = (nn.Linear(cfg.d_model, inner, bias=cfg.bias) for _ in range(3))
        self.w_o = nn.Linear(inner, cfg.d_model, bias=cfg.bias)
        self.weights: Tensor | None = None  # last attention weights, kept for inspection

    def split_heads(self, x: Tensor) -> Tensor:
        b, t, _ = x.shape
        return x.view(b, t, self.h, self.d_k).transpose(1, 2)  # (B, h, T, d_k)

    def forward(
        self,
        x_q: Tensor,
        x_kv: Tensor,
        mask: Tensor | None,
        cache: KeyValues | None = None,
        start: int = 0,
        packing: tuple[Packing, Packing] | None = None,
    ) -> Tensor:
        """With a `cache`, x_q and x_kv are the positions from `start` on: self-attention appends their
        keys and values to the cached ones; cross-attention projects the memory once and reuses it.
        With `packing` (queries', keys'), x_q and x_kv hold only real tokens, (N, d_model): they are
        projected as they are and laid out as (B, T) only for the scores, and the output is packed again."""
        if self.cross and cache is not None and cache.k is not None:  # the memory's K, V: projected once
            q, k, v = self.split_heads(self.w_q(x_q)), cache.k, cache.v
        elif x_q is x_kv:
            qkv = side_by_side(x_q, self.w_q, self.w_k, self.w_v)
            q, k, v = (self.split_heads(packing[0].unpack(t) if packing else t) for t in qkv)
        elif packing is not None:
            pq, pkv = packing
            q = self.split_heads(pq.unpack(self.w_q(x_q)))
            k, v = (self.split_heads(pkv.unpack(t)) for t in side_by_side(x_kv, self.w_k, self.w_v))
        else:
            q = self.split_heads(self.w_q(x_q))
            k, v = map(self.split_heads, side_by_side(x_kv, self.w_k, self.w_v))
        bias = None
        if not self.cross and self.cfg.positional == "rotary":
            q, k = rotate(q, start), rotate(k, start)
        elif not self.cross and self.cfg.positional == "alibi":
            bias = alibi_bias(self.h, q.shape[-2], start + k.shape[-2], q.device, start)
        if cache is not None:
            if not self.cross and cache.k is not None:
                k, v = torch.cat([cache.k, k], dim=2), torch.cat([cache.v, v], dim=2)
            cache.k, cache.v = k, v
        out, self.weights = attention(q, k, v, mask, self.cfg.scale_scores, bias)
        b, _, t, _ = out.shape
        out = out.transpose(1, 2).reshape(b, t, self.h * self.d_k)
        return self.w_o(packing[0].pack(out) if packing else out)  # (B, T, d_model), or (N, d_model)


class PositionwiseFeedForward(nn.Module):
    """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2  (§3.3); SwiGLU: (SiLU(x W_1) ⊙ x W_3) W_2."""

    def __init__(self, cfg: Config):
        super().__init__()
        self.w_1, self.w_2 = nn.Linear(cfg.d_model, cfg.d_ff, cfg.bias), nn.Linear(cfg.d_ff, cfg.d_model, cfg.bias)
        self.w_3 = nn.Linear(cfg.d_model, cfg.d_ff, cfg.bias) if cfg.ffn == "swiglu" else None

    def forward(self, x: Tensor) -> Tensor:
        if self.w_3 is not None:
            return self.w_2(F.silu(self.w_1(x)) * self.w_3(x))
        return self.w_2(F.relu(self.w_1(x)))


def make_norm(cfg: Config) -> nn.Module:
    """LayerNorm(x) = γ·(x − mean)/√(var + ε) + β, or RMSNorm(x) = γ·x/√(mean(x²) + ε); ε = 1e-5."""
    if cfg.norm == "rms":
        return nn.RMSNorm(cfg.d_model, eps=NORM_EPSILON)
    return nn.LayerNorm(cfg.d_model)


class SublayerConnection(nn.Module):
    """Post-LN: LayerNorm(x + Dropout(Sublayer(x)))  (§3.1, §5.4). Pre-LN: x + Dropout(Sublayer(LayerNorm(x)))."""

    def __init__(self, cfg: Config):
        super().__init__()
        self.norm, self.dropout, self.norm_first = make_norm(cfg), nn.Dropout(cfg.dropout), cfg.norm_first

    def forward(self, x: Tensor, sublayer) -> Tensor:
        if self.norm_first:
            return x + self.dropout(sublayer(self.norm(x)))
        return self.norm(x + self.dropout(sublayer(x)))


class EncoderLayer(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.self_attn, self.feed_forward = MultiHeadedAttention(cfg), PositionwiseFeedForward(cfg)
        self.sublayer = nn.ModuleList([SublayerConnection(cfg) for _ in range(2)])

    def forward(self, x: Tensor, src_mask: Tensor, packing: Packing | None = None) -> Tensor:
        both = (packing, packing) if packing else None
        x = self.sublayer[0](x, lambda y: self.self_attn(y, y, src_mask, packing=both))
        return self.sublayer[1](x, self.feed_forward)


class DecoderLayer(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.self_attn, self.src_attn = MultiHeadedAttention(cfg), MultiHeadedAttention(cfg, cross=True)
        self.feed_forward = PositionwiseFeedForward(cfg)
        self.sublayer = nn.ModuleList([SublayerConnection(cfg) for _ in range(3)])

    def forward(
        self,
        y: Tensor,
        memory: Tensor,
        src_mask: Tensor,
        tgt_mask: Tensor,
        cache: tuple[KeyValues, KeyValues] | None = None,
        start: int = 0,
        packing: tuple[Packing, Packing] | None = None,
    ) -> Tensor:
        """`packing`: (target's, source's), when y and memory hold only real tokens."""
        self_kv, cross_kv = cache if cache is not None else (None, None)
        tgt_p, src_p = packing if packing else (None, None)
        y = self.sublayer[0](
            y, lambda t: self.self_attn(t, t, tgt_mask, self_kv, start, (tgt_p, tgt_p) if packing else None)
        )
        y = self.sublayer[1](
            y,
            lambda t: self.src_attn(
                t,
                memory,
                src_mask,
                cross_kv,  # K, V from the encoder
                packing=(tgt_p, src_p) if packing else None,
            ),
        )
        return self.sublayer[2](y, self.feed_forward)


class EncoderDecoder(nn.Module):
    """The whole model. `encode` and `decode` are separate so that decoding can reuse the memory."""

    def __init__(self, cfg: Config):
        super().__init__()
        self.cfg = cfg
        self.embedding = nn.Parameter(torch.empty(cfg.vocab_size, cfg.d_model))  # E, shared three ways
        nn.init.normal_(self.embedding, std=cfg.d_model**-0.5)
        self.encoder_layers = nn.ModuleList([EncoderLayer(cfg) for _ in range(cfg.n_layers)])
        self.decoder_layers = nn.ModuleList([DecoderLayer(cfg) for _ in range(cfg.n_layers)])
        # The paper's post-LN stacks end without a LayerNorm; pre-LN needs one to bound the output.
        self.encoder_norm = make_norm(cfg) if cfg.norm_first else None
        self.decoder_norm = make_norm(cfg) if cfg.norm_first else None
        learned = cfg.positional == "learned"
        self.positions = nn.Parameter(torch.randn(cfg.max_len, cfg.d_model) * 0.02) if learned else None
        self.register_buffer("pe", sinusoid_table(cfg.max_len, cfg.d_model), persistent=False)
        # today's recipe: a separate output matrix U (V × d_model), logits = h·Uᵀ
        self.output = None if cfg.tie_output else nn.Parameter(torch.empty(cfg.vocab_size, cfg.d_model))
        self.dropout = nn.Dropout(cfg.dropout)
        for name, p in self.named_parameters():
            if p.dim() > 1 and name not in ("embedding", "positions"):
                nn.init.xavier_uniform_(p)

    def embed(self, ids: Tensor, start: int = 0, packing: Packing | None = None) -> Tensor:
        """x⁽⁰⁾ = Dropout(E[ids] · √d_model + PE)  (§3.4, §3.5, §5.4), ids at positions start, start+1, …
        (only the real tokens' rows, with `packing`)"""
        x = F.embedding(ids, self.embedding) * math.sqrt(self.cfg.d_model)
        end = start + ids.shape[1]
        if self.cfg.positional == "sinusoidal":
            pe = self.pe if end <= self.pe.shape[0] else sinusoid_table(end, self.cfg.d_model).to(x.device)
            x = x + pe[start:end]
        elif self.cfg.positional == "learned":
            x = x + self.positions[start:end]
        return self.dropout(packing.pack(x) if packing else x)

    def src_mask(self, src: Tensor) -> Tensor:
        return (src != self.cfg.pad_id)[:, None, None, :]  # (B, 1, 1, n): padding keys are illegal

    def tgt_mask(self, tgt: Tensor) -> Tensor:
        t = tgt.shape[1]
        causal = torch.ones(t, t, dtype=torch.bool, device=tgt.device).tril()  # position i sees 0..i
        return causal[None, None] & (tgt != self.cfg.pad_id)[:, None, None, :]

    def encode(self, src: Tensor, packing: Packing | None = None) -> Tensor:
        x, mask = self.embed(src, packing=packing), self.src_mask(src)
        for layer in self.encoder_layers:
            x = layer(x, mask, packing)
        return self.encoder_norm(x) if self.encoder_norm is not None else x  # memory z, (B, n, d) or (N, d)

    def decode(
        self,
        memory: Tensor,
        src: Tensor,
        tgt: Tensor,
        cache: DecoderCache | None = None,
        packing: tuple[Packing, Packing] | None = None,
    ) -> Tensor:
        """Logits for every row of `tgt`; with a `cache`, `tgt` holds only the tokens after those
        already read (usually one), whose rows attend to the cached keys and values. With `packing`
        (target's, source's), the memory and the logits hold only real tokens' rows."""
        start = cache.length if cache is not None else 0
        y, src_mask = self.embed(tgt, start, packing[0] if packing else None), self.src_mask(src)
        tgt_mask = self.tgt_mask(tgt) if cache is None else cache.extend(tgt, self)
        for i, layer in enumerate(self.decoder_layers):
            y = layer(y, memory, src_mask, tgt_mask, cache.layer(i) if cache is not None else None, start, packing)
        y = self.decoder_norm(y) if self.decoder_norm is not None else y
        out = self.embedding if self.output is None else self.output
        return y @ out.T  # logits = h · Eᵀ, no output bias (§3.4), or h · Uᵀ untied; (B, m, V)

    def forward(self, src: Tensor, tgt: Tensor, packed: bool = False) -> Tensor:
        """Logits (B, m, V) under teacher forcing. `packed`: the rows of the real target tokens only,
        (N, V) in the order of `tgt[tgt != pad]`: the same values, computed without the padding."""
        if not packed:
            return self.decode(self.encode(src), src, tgt)
        src_p, tgt_p = Packing.of(src, self.cfg.pad_id), Packing.of(tgt, self.cfg.pad_id)
        return self.decode(self.encode(src, src_p), src, tgt, packing=(tgt_p, src_p))

    def get_num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())
