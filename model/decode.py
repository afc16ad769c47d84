"""Greedy decoding (batched) and beam search with the GNMT length penalty (§6.1 of the paper).

Both run the encoder once and then the decoder one token at a time with a key/value cache
(`DecoderCache`): each step reads only the newest token, and its attention uses the keys and
values kept from the earlier steps (self-attention) and the memory's, projected once
(cross-attention). `cached=False` recomputes the decoder over the whole prefix at every step, as
`model.decode` does in training; both give the same tokens (tests/model/test_decode_cache.py).
`greedy_checking` gives greedy's output of one source faster when a guess at it is at hand (the trace
checks the correct German): one pass checks the guess, and decoding goes on only where it is wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from model.data import pad_batch
from model.transformer import DecoderCache, EncoderDecoder
from model.vocab import VOCAB, Vocab

EXTRA_LENGTH = 50  # maximum output length = input length + 50 (paper §6.1)


class Stepper:
    """The next-token logits of a batch of growing outputs; the encoder runs once.

    `cached` (the default for an `EncoderDecoder`): the decoder reads only the newest token and
    attends to cached keys and values. Otherwise (and for any other model with `encode` and
    `decode`) it recomputes the decoder over the whole prefix at every step.
    """

    def __init__(self, model: EncoderDecoder, src: torch.Tensor, cached: bool | None = None):
        self.model, self.src, self.memory = model, src, model.encode(src)
        cached = isinstance(model, EncoderDecoder) if cached is None else cached
        self.cache = DecoderCache() if cached else None

    def logits(self, ys: torch.Tensor) -> torch.Tensor:
        """(B, V) logits for the token after `ys` (B, t), which extends the previous call's by one."""
        return self.new_logits(ys)[:, -1]

    def new_logits(self, ys: torch.Tensor) -> torch.Tensor:
        """(B, t', V) logits after each position of `ys` that the cache has not read yet (every position
        without a cache): one decoder pass however many tokens `ys` adds."""
        if self.cache is None:
            return self.model.decode(self.memory, self.src, ys)
        return self.model.decode(self.memory, self.src, ys[:, self.cache.length :], self.cache)

    def select(self, rows: torch.Tensor) -> None:
        """Keep (and reorder) batch rows: beam search's surviving hypotheses."""
        self.src, self.memory = self.src[rows], self.memory[rows]
        if self.cache is not None:
            self.cache.select(rows)


@torch.no_grad()
def greedy(
    model: EncoderDecoder, sources: list[list[int]], vocab: Vocab = VOCAB, cached: bool | None = None
) -> list[list[int]]:
    """Free-running greedy decoding of a batch; each output ends before its </s> (not included)."""
    model.eval()
    src = pad_batch(sources, vocab.pad_id)
    step = Stepper(model, src, cached)
    ys = torch.full((len(sources), 1), vocab.bos_id, dtype=torch.long)
    done = torch.zeros(len(sources), dtype=torch.bool)
    for _ in range(src.shape[1] + EXTRA_LENGTH):
        nxt = step.logits(ys).argmax(-1)
        nxt = torch.where(done, vocab.pad_id, nxt)
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        done |= nxt == vocab.eos_id
        if done.all():
            break
    outs = []
    for row in ys[:, 1:].tolist():
        outs.append(row[: row.index(vocab.eos_id)] if vocab.eos_id in row else [t for t in row if t != vocab.pad_id])
    return outs


@torch.no_grad()
def greedy_checking(model: EncoderDecoder, source: list[int], draft: list[int], vocab: Vocab = VOCAB) -> list[int]:
    """`greedy` of one source, sped up by a guess at its output (`draft`, without </s>).

    One decoder pass over <s> + draft gives the model's own choice after every prefix of the draft, as
    speculative decoding checks a draft (Leviathan et al. 2023). Greedy decoding would have written the
    draft's tokens for as long as they agree with those choices; at the first disagreement it writes the
    model's choice instead, and cached greedy decoding goes on from there. So the output is greedy's
    whatever the draft: a right guess costs one pass instead of one per token, a wrong one costs one
    extra pass. (Its logits come from one pass over many rows rather than one row at a time: the two
    agree to float rounding, tests/model/test_decode_cache.py.)
    """
    model.eval()
    max_len = len(source) + EXTRA_LENGTH  # greedy writes at most this many tokens, </s> included
    draft = draft[:max_len]
    step = Stepper(model, torch.tensor([source]))
    choices = step.new_logits(torch.tensor([[vocab.bos_id] + draft])).argmax(-1)[0].tolist()
    agreed = next((i for i, (c, d) in enumerate(zip(choices, draft)) if c != d), len(draft))
    if agreed == max_len:
        return draft
    out = draft[:agreed]
    nxt = choices[agreed]  # the model's choice after the agreed prefix
    step.cache.keep(agreed + 1)  # <s> and the agreed tokens
    while nxt != vocab.eos_id:
        out.append(nxt)
        if len(out) == max_len:
            break
        nxt = int(step.logits(torch.tensor([[vocab.bos_id] + out])).argmax(-1))
    return out


def length_penalty(length: int, alpha: float) -> float:
    """lp(Y) = ((5 + |Y|) / 6)^α  (Wu et al. 2016); |Y| counts the output tokens, </s> included."""
    return ((5 + length) / 6) ** alpha


@dataclass
class Hypothesis:
    tokens: list[int]  # output so far, without <s>
    log_prob: float  # Σ log p of the tokens
    length_penalty: float = 1.0
    score: float = 0.0  # log_prob / length_penalty, set when finished


@dataclass
class BeamResult:
    best: Hypothesis
    finished: list[Hypothesis]
    steps: list[dict] = field(default_factory=list)  # per step: alive and finished hypotheses


def _extend(
    alive: list[Hypothesis], total: torch.Tensor, beam: int, penalty: float, eos_id: int
) -> tuple[list[Hypothesis], list[int], list[Hypothesis]]:
    """One step of beam search: the best 2·beam extensions by total log p, split into those that end in </s>
    (scored log p / lp(Y)) and up to `beam` that stay alive, with each alive one's row in this step's batch."""
    top = total.flatten().topk(min(2 * beam, total.numel()))
    next_alive: list[Hypothesis] = []
    parents: list[int] = []
    ended: list[Hypothesis] = []
    for value, index in zip(top.values.tolist(), top.indices.tolist()):
        parent, token = divmod(index, total.shape[1])
        hyp = Hypothesis(alive[parent].tokens + [token], value)
        if token == eos_id:
            hyp.length_penalty = penalty
            hyp.score = value / penalty
            ended.append(hyp)
        elif len(next_alive) < beam:
            next_alive.append(hyp)
            parents.append(parent)
    return next_alive, parents, ended


@torch.no_grad()
def beam_search(
    model: EncoderDecoder,
    source: list[int],
    beam: int = 4,
    alpha: float = 0.6,
    vocab: Vocab = VOCAB,
    cached: bool | None = None,
) -> BeamResult:
    """Beam search keeping alive and finished hypotheses apart (as tensor2tensor does).

    Each step extends every alive hypothesis by every token and keeps the best 2·beam; those that
    end in </s> join the finished list with score log p / lp(Y), the rest (up to `beam`) stay alive.
    Stops when no alive hypothesis can beat the best finished one: an alive one's log p only falls,
    so its best possible score is log p / lp(max length).
    """
    model.eval()
    step = Stepper(model, torch.tensor([source]), cached)
    max_len = len(source) + EXTRA_LENGTH
    alive = [Hypothesis([], 0.0)]
    finished: list[Hypothesis] = []
    steps: list[dict] = []
    for t in range(1, max_len + 1):
        ys = torch.tensor([[vocab.bos_id] + h.tokens for h in alive])
        logp = step.logits(ys).log_softmax(-1)
        total = torch.tensor([h.log_prob for h in alive])[:, None] + logp  # (alive, V)
        next_alive, parents, ended = _extend(alive, total, beam, length_penalty(t, alpha), vocab.eos_id)
        finished += ended
        finished.sort(key=lambda h: h.score, reverse=True)
        finished = finished[:beam]
        alive = next_alive
        steps.append(
            {
                "step": t,
                "alive": [_as_dict(h, vocab) for h in alive],
                "finished": [_as_dict(h, vocab) for h in finished],
            }
        )
        bound = alive[0].log_prob / length_penalty(max_len, alpha) if alive else float("-inf")
        if not alive or (finished and finished[0].score >= bound):
            break
        step.select(torch.tensor(parents))
    if not finished:  # ran out of length: score the alive ones as they stand
        finished = [
            Hypothesis(
                h.tokens,
                h.log_prob,
                length_penalty(len(h.tokens), alpha),
                h.log_prob / length_penalty(len(h.tokens), alpha),
            )
            for h in alive
        ]
    return BeamResult(finished[0], finished, steps)


def _as_dict(h: Hypothesis, vocab: Vocab) -> dict:
    return {
        "tokens": vocab.tokens_of(h.tokens),
        "log_prob": h.log_prob,
        "length_penalty": h.length_penalty,
        "score": h.score,
    }


def strip_eos(tokens: list[int], vocab: Vocab = VOCAB) -> list[int]:
    return tokens[:-1] if tokens and tokens[-1] == vocab.eos_id else tokens
