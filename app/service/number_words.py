"""The number words document (GET /api/numbers): the English and German words, the vocabulary, the
limits and the input's rules and refusal messages, as model/ defines them, for static/js/numbers.js.

One definition: the JavaScript holds the rules (how words are put together, how a text is read) and
none of the words, tables or messages; they come from here. The static build writes the same bytes, as it
writes every API document it asks of the app (app/site/build.py).
"""

from __future__ import annotations

from functools import cache

from app.documents.schemas import NumberWords
from app.service.deps import INPUT_MISSING
from app.serving.serialize import dumps
from model.numbers import tables
from model.parse import rules
from model.vocab import EOS, VOCAB


@cache
def number_words() -> NumberWords:
    """Built once (reading Python's character classes takes about 0.4 s)."""
    return NumberWords(**tables(), vocab=list(VOCAB.tokens), source_end=EOS, parse=rules(), input_missing=INPUT_MISSING)


@cache
def number_words_body() -> bytes:
    return dumps(number_words())
