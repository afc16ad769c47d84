"""The one shared vocabulary: three specials, the English words, the German pieces.

Like the paper's shared BPE table (§5.1), one table serves the source, the target and, through
weight tying (§3.4), the output layer.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from model.numbers import ENGLISH_WORDS, GERMAN_PIECES, to_english, to_german_pieces

PAD, BOS, EOS = "<pad>", "<s>", "</s>"
SPECIALS = [PAD, BOS, EOS]


@dataclass(frozen=True)
class Vocab:
    tokens: list[str] = field(default_factory=lambda: SPECIALS + ENGLISH_WORDS + GERMAN_PIECES)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", {t: i for i, t in enumerate(self.tokens)})

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def pad_id(self) -> int:
        return self._index[PAD]

    @property
    def bos_id(self) -> int:
        return self._index[BOS]

    @property
    def eos_id(self) -> int:
        return self._index[EOS]

    def ids(self, tokens: list[str]) -> list[int]:
        return [self._index[t] for t in tokens]

    def tokens_of(self, ids: list[int]) -> list[str]:
        return [self.tokens[i] for i in ids]

    def source_tokens(self, n: int) -> list[str]:
        """The encoder's input: the English words, then </s>."""
        return to_english(n) + [EOS]

    def target_tokens(self, n: int) -> list[str]:
        """The gold output: the German pieces, then </s>."""
        return to_german_pieces(n) + [EOS]


VOCAB = Vocab()
