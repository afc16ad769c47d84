"""Every document the API sends, defined once; FastAPI publishes them at /docs and /openapi.json.

What is sent is built from these definitions, never from a dict written beside them:
- the trace's header is recorder/record.py's `TraceHeader` (a dataclass), sent with the model's name and
  the weights it ran as `ServedTraceHeader` (the article's figures and the scene are the page's to
  compute); orjson serialises the dataclasses as they are, and pydantic documents them;
- the beam, the model card, the fact ledger and the health answer are `Document`s that the service
  builds and dumps (an unknown field is refused when it is built, not sent undocumented);
- the weights are `Weights` (a dataclass), built by `Weights.of` for the shipped model and a training
  snapshot alike; a trace's header names where they are sent (`weights_url`).
The trace's nodes and the weights keep their data in numpy arrays for orjson's speed; `TraceNode` and
`Tensor` document those, and tests/service/test_api.py checks every real response against its schema, both ways.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any
from urllib.parse import urlencode

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from app.documents.content import Fact
from model import models
from model.transformer import Config
from recorder import TraceHeader, described

Number = float | int | bool | None


class Document(BaseModel):
    """A document the service builds and sends as it dumps; a field it does not define is refused."""

    model_config = ConfigDict(extra="forbid")


class ErrorDetail(Document):
    message: str = Field(description="what was wrong, and what is accepted")
    accepted: str = Field(description="the inputs the endpoint accepts")


class ErrorResponse(Document):
    detail: ErrorDetail


class Message(Document):
    message: str = Field(description="what was not found, and what there is")


class NotFound(Document):
    """A 404 (a name that names no figure or scene file): app/main.py answers an HTTPException so."""

    detail: Message


class Availability(Document):
    status: str = Field(description="`ok`, or `not available`")
    reason: str = Field("", description="why it is not available (which shipped file is missing or altered)")
    weights_version: str | None = Field(None, description="a model's weights version, once it is loaded")


class Health(Document):
    status: str = Field(description="`ok` when every model and data set is usable, else `not ok` (sent with 503)")
    weights_version: str = Field(description="the default model's weights version")
    models: dict[str, Availability] = Field(default_factory=dict, description="each shipped model, by name")
    data: dict[str, Availability] = Field(
        default_factory=dict, description="each data set the app serves from (app/service/shipped.py)"
    )
    research_views: str = Field(
        "shipped",
        description="`shipped`: the research desk's views are the files app/service/shipped.sha256 checks; "
        "`outside the manifest`: read from the folder ANATOMY_RESEARCH_VIEWS names, which no checksum covers",
    )


# ---- the model card ---------------------------------------------------------------------------------


class ParameterInfo(Document):
    id: str = Field(description="the parameter's id, as in the trace (e.g. enc.0.self.W_q)")
    shape: list[int]


class ModelFigures(Document):
    """Model-level numbers the article quotes (`data-live` keys); article.stats.model_figures computes them."""

    vocab_size: int
    d_model: int
    n_heads: int
    d_k: int
    d_ff: int
    n_layers: int
    param_count: int
    params_embedding: int
    params_encoder_layer: int
    params_decoder_layer: int
    heldout_max_weight_self: float
    heldout_max_weight_cross: float
    heldout_exact_match: float
    sqrt_d_model: float
    sqrt_d_k: float = Field(description="√d_k: how much wider the scores are without the 1/√d_k scale")
    label_smoothing_eps: float = Field(description="ε_ls of the shipped recipe (training_log.json)")
    smoothing_ceiling: float = Field(description="1 − ε + ε/V: what the smoothed target puts on the right piece")
    ceiling_loss: float = Field(description="−ln of the ceiling: the loss of a piece given exactly that probability")
    uniform_loss: float = Field(description="ln V: the loss of a uniform guess over the vocabulary")
    first_logged_loss: float = Field(description="the training log's first loss (mean over its first log_every steps)")
    first_logged_step: int
    log_every: int


class TrainingSummary(Document):
    """The shipped training log's recipe and last record; article.stats.training_summary reads it."""

    train_config: dict[str, Any]
    steps: int
    seconds: float
    heldout_exact_match: float
    heldout_loss: float
    checkpoints_averaged: int


class Specials(Document):
    pad: str
    bos: str
    eos: str


class ModelCard(Document):
    weights_version: str = Field(description="a hash of the weights; changes whenever the model does")
    config: Config = Field(description="the model's configuration (model.transformer.Config)")
    vocabulary: list[str] = Field(description="the shared vocabulary, index = token id")
    specials: Specials
    parameter_count: int
    parameters: list[ParameterInfo]
    figures: ModelFigures
    training: TrainingSummary


# ---- tensors: documented here, sent from numpy arrays ----------------------------------------------


@dataclass
class Tensor:  # one parameter; its data is sent from the numpy array itself (orjson writes it as a list)
    id: str
    shape: list[int]
    dtype: str
    data: list[Number] = described("the values, flattened row-major")


@dataclass
class Weights:  # the shipped model's parameters, or a training snapshot's
    weights_version: str
    parameters: list[Tensor] = described("every parameter; weight matrices as (d_in, d_out)")

    @classmethod
    def of(cls, params: dict[str, np.ndarray], version: str) -> Weights:
        """The document /api/weights sends for `params` (recorder.parameters: trace ids, in order)."""
        return cls(
            version,
            [Tensor(k, list(v.shape), str(v.dtype), np.ascontiguousarray(v).ravel()) for k, v in params.items()],
        )


class TraceNode(BaseModel):
    id: str
    op: str = Field(description="the ONNX operator that computed it (Gemm, Softmax, Where, …)")
    inputs: list[str] = Field(description="ids of earlier nodes or parameters")
    attrs: dict[str, Any]
    shape: list[int]
    dtype: str
    data: list[Number] = Field(
        description="the values, flattened row-major; null stands for −∞ (masked scores), "
        "the only non-finite value a trace holds"
    )


# ---- the trace: recorder/record.py's header, the scene, and the nodes ------------------------------------


def weights_url(model: str = models.DEFAULT, checkpoint: int | None = None) -> str:
    """Where /api/weights sends the parameters of `model` (at a training snapshot's `checkpoint`): the
    query names what differs from the default model's shipped weights, which are the bare path."""
    query: dict[str, str | int] = {} if model == models.DEFAULT else {"model": model}
    if checkpoint is not None:
        query["checkpoint"] = checkpoint
    return "/api/weights" + (f"?{urlencode(query)}" if query else "")


@dataclass(kw_only=True)
class ServedTraceHeader(TraceHeader):
    """The trace's header as the service sends it: the recorder's TraceHeader and which weights ran."""

    model: str = field(default="2017", metadata={"description": "the name of the model that ran (?model=)"})
    checkpoint: int | None = field(
        default=None,
        metadata={
            "description": "the training step of the snapshot whose weights ran (0: the initialisation); "
            "null for the trained, averaged model"
        },
    )
    weights_url: str = field(
        default="/api/weights", metadata={"description": "where the parameters this trace reads are sent"}
    )

    @classmethod
    def of(cls, header: TraceHeader, **more: Any) -> Any:
        """This header type (or a subclass's) from a TraceHeader and the fields this type adds."""
        return cls(**{f.name: getattr(header, f.name) for f in fields(header)}, **more)


@dataclass(kw_only=True)
class Trace(ServedTraceHeader):
    """One input's trace: the header and every intermediate tensor."""

    nodes: list[TraceNode] = described("every intermediate tensor, in the order computed")


@dataclass(kw_only=True)
class TraceStreamHeader(ServedTraceHeader):
    """The first line of the NDJSON stream; `node_count` TraceNode lines follow, one per line."""

    node_count: int


# ---- beam search -----------------------------------------------------------------------------------


class Hypothesis(Document):
    tokens: list[str]
    log_prob: float
    length_penalty: float | None = Field(description="lp(Y) for finished hypotheses; null while alive")
    score: float | None = Field(description="log_prob / length_penalty; null while alive")


class BeamStep(Document):
    step: int
    alive: list[Hypothesis]
    finished: list[Hypothesis]


class Beam(Document):
    weights_version: str
    number: int
    source_tokens: list[str]
    beam_size: int
    alpha: float
    max_length: int
    length_penalty: str = Field(description="the formula")
    length_penalties: dict[str, float] = Field(description="lp(Y) for output lengths 1 to 16")
    steps: list[BeamStep]
    finished: list[Hypothesis] = Field(description="best first")
    best: Hypothesis
    german_pieces: list[str]
    german: str


# ---- the fact ledger -------------------------------------------------------------------------------


class Facts(Document):
    count: int
    facts: list[Fact] = Field(description="content/facts.tsv, one entry per row")


# ---- the number words (model/numbers.py, model/parse.py, model/vocab.py) ---------------------------


class EnglishWords(Document):
    ones: list[str] = Field(description='0–9 ("zero" only alone)')
    teens: list[str] = Field(description="10–19")
    tens: list[str] = Field(description="by tens' digit, 20–90 (the first two empty)")
    hundred: str
    thousand: str
    fillers: list[str] = Field(description='words a reader may add that name nothing ("and")')
    split: str = Field(description="the pattern between words (spaces, hyphens)")
    messages: dict[str, str] = Field(description="from_english's refusals: templates with {word} or {words}")


class GermanPieces(Document):
    ones: list[str] = Field(description='0–9, 1 as it stands alone ("eins")')
    teens: list[str]
    tens: list[str] = Field(description="by tens' digit, 20–90 (the first two empty)")
    one_joined: str = Field(description='1 as a multiplier or before the ones-and-tens joiner ("ein")')
    and_piece: str = Field(description="between the ones and the tens: 42 is zwei und vierzig")
    hundred: str
    thousand: str


class InputRules(Document):
    max_input_chars: int = Field(description="longer texts are refused (counted in code points)")
    accepted: str = Field(description="what every refusal ends with")
    group_separators: str = Field(description="the characters allowed between groups of three digits")
    patterns: dict[str, str] = Field(
        description="`digits` and `words`, in Python's syntax; \\d and \\s are `chars.decimal` and `chars.space`"
    )
    chars: dict[str, list[list[int]]] = Field(
        description="[first, last] code point runs: `control` (refused), "
        "`space` (str.split), `digit` (str.isdigit), `decimal`"
    )
    messages: dict[str, str] = Field(description="the reasons for refusing, templates filled with str.format")
    refused: str = Field(description="the whole message: {reason}; accepted: {accepted}")
    quoted_words_chars: int = Field(description="how much of a text neither digits nor words is repeated")


class NumberWords(Document):
    """What the browser needs to read a reader's number and spell it as the model's tokens, with the
    rules of static/js/numbers.js: the words (model/numbers.py), the vocabulary (model/vocab.py), the
    input's rules (model/parse.py) and the API's refusal of a missing input (app/service/deps.py)."""

    max_number: int = Field(description="numbers run from 0 to this")
    english: EnglishWords
    german: GermanPieces
    vocab: list[str] = Field(description="every token; its index is its id")
    source_end: str = Field(description="the token after the English words in the encoder's input")
    parse: InputRules
    input_missing: str = Field(description="the API's reason when ?input= is absent or blank")
