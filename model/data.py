"""Which numbers the model trains on, which it never sees, and how they become batches."""

from __future__ import annotations

import numpy as np
import torch

from model.numbers import MAX_NUMBER, english_word_count
from model.vocab import VOCAB, Vocab

HELDOUT_SIZE = 2000
HELDOUT_SEED = 20170612  # the paper's arXiv date; any fixed seed would do


def heldout_numbers(size: int = HELDOUT_SIZE, seed: int = HELDOUT_SEED) -> list[int]:
    """2 000 numbers from 1 000–999 999, drawn once, never trained on.

    Numbers below 1 000 stay in training: there are only 1 000 of them and each teaches a word.
    """
    rng = np.random.default_rng(seed)
    return sorted(int(n) for n in rng.choice(np.arange(1000, MAX_NUMBER + 1), size=size, replace=False))


class NumberSampler:
    """Training numbers: first a digit count 1–6 uniformly, then a number with that many digits;
    for half of them each digit after the first is then zeroed with probability one half.

    Sampling uniformly over 0–999 999 would show a one-digit number once in 100 000 draws, and a
    number such as 430 001 (…tausend eins) once in 1 000; this mixture shows every word and every
    pattern of zeros often. Excluded numbers (the held-out set) are redrawn.
    """

    def __init__(self, seed: int, exclude: set[int], max_words: int | None = None, keep=None):
        self.rng, self.exclude, self.max_words, self.keep = np.random.default_rng(seed), exclude, max_words, keep

    def _allowed(self, n: int) -> bool:
        if n in self.exclude or (self.keep is not None and not self.keep(n)):
            return False
        return self.max_words is None or english_word_count(n) <= self.max_words

    def sample(self, size: int) -> list[int]:
        out: list[int] = []
        while len(out) < size:
            digits = self.rng.integers(1, 7, size=size)
            lo = np.where(digits == 1, 0, 10 ** (digits - 1))
            nums = self.rng.integers(lo, 10**digits)
            sparse = self.rng.random(size) < 0.5
            for place in range(5):  # 10**place: units .. ten-thousands, never the leading digit
                hit = sparse & (self.rng.random(size) < 0.5) & (digits > place + 1)
                nums = np.where(hit, nums - (nums // 10**place % 10) * 10**place, nums)
            out += [int(n) for n in nums if self._allowed(int(n))]
        return out[:size]


def pad_batch(seqs: list[list[int]], pad_id: int) -> torch.Tensor:
    width = max(len(s) for s in seqs)
    return torch.tensor([s + [pad_id] * (width - len(s)) for s in seqs], dtype=torch.long)


def make_batch(numbers: list[int], vocab: Vocab = VOCAB) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(source, decoder input, decoder target): the target shifted right behind <s> (teacher forcing)."""
    src = [vocab.ids(vocab.source_tokens(n)) for n in numbers]
    tgt = [vocab.ids(vocab.target_tokens(n)) for n in numbers]
    dec_in = [[vocab.bos_id] + t[:-1] for t in tgt]
    return pad_batch(src, vocab.pad_id), pad_batch(dec_in, vocab.pad_id), pad_batch(tgt, vocab.pad_id)
