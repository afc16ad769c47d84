"""Python entry point: load the shipped model, translate a number, trace it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from model.decode import beam_search, greedy, strip_eos
from model.numbers import join_german, to_english
from model.train import ARTIFACTS, load
from model.transformer import EncoderDecoder
from model.vocab import VOCAB


@dataclass
class Translation:
    number: int
    english: list[str]
    pieces: list[str]  # the model's German output, pieces
    german: str  # the pieces joined


@dataclass
class Translator:
    model: EncoderDecoder

    @classmethod
    def load(cls, path: Path = ARTIFACTS / "model.safetensors") -> Translator:
        return cls(load(path))

    def translate(self, n: int) -> Translation:
        return self.translate_many([n])[0]

    def translate_many(self, numbers: list[int]) -> list[Translation]:
        outs = greedy(self.model, [VOCAB.ids(VOCAB.source_tokens(n)) for n in numbers])
        return [
            Translation(n, to_english(n), VOCAB.tokens_of(o), join_german(VOCAB.tokens_of(o)))
            for n, o in zip(numbers, outs)
        ]

    def beam(self, n: int, beam: int = 4, alpha: float = 0.6):
        result = beam_search(self.model, VOCAB.ids(VOCAB.source_tokens(n)), beam, alpha)
        return result, VOCAB.tokens_of(strip_eos(result.best.tokens))
