"""Pydantic models of every API response; FastAPI publishes them at /docs and /openapi.json.

The handlers send pre-serialised orjson bytes for speed, so these models document the shapes and the
tests validate real responses against them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

Number = float | int | bool | None


class ErrorDetail(BaseModel):
    message: str = Field(description="what was wrong, and what is accepted")
    accepted: str = Field(description="the inputs the endpoint accepts")


class ErrorResponse(BaseModel):
    detail: ErrorDetail


class Health(BaseModel):
    status: str
    weights_version: str


class ModelShape(BaseModel):
    """The sizes that fix every tensor's shape (the model card's config and the article's figures)."""

    vocab_size: int
    d_model: int
    n_heads: int
    d_k: int
    d_ff: int
    n_layers: int


class ModelConfig(ModelShape):
    dropout: float
    positional: str
    max_len: int
    scale_scores: bool
    norm_first: bool
    pad_id: int


class ParameterInfo(BaseModel):
    id: str = Field(description="the parameter's id, as in the trace (e.g. enc.0.self.W_q)")
    shape: list[int]


class ModelFigures(ModelShape):
    """Model-level numbers the article quotes (`data-live` keys)."""

    param_count: int
    params_embedding: int
    params_encoder_layer: int
    params_decoder_layer: int
    heldout_max_weight_self: float
    heldout_max_weight_cross: float
    heldout_exact_match: float
    sqrt_d_model: float


class TrainingSummary(BaseModel):
    train_config: dict[str, Any]
    steps: int
    seconds: float
    heldout_exact_match: float
    heldout_loss: float
    checkpoints_averaged: int


class Specials(BaseModel):
    pad: str
    bos: str
    eos: str


class ModelCard(BaseModel):
    weights_version: str = Field(description="a hash of the weights; changes whenever the model does")
    config: ModelConfig
    vocabulary: list[str] = Field(description="the shared vocabulary, index = token id")
    specials: Specials
    parameter_count: int
    parameters: list[ParameterInfo]
    figures: ModelFigures
    training: TrainingSummary


class Tensor(BaseModel):
    id: str
    shape: list[int]
    dtype: str
    data: list[Number] = Field(description="the values, flattened row-major")


class Weights(BaseModel):
    weights_version: str
    parameters: list[Tensor] = Field(description="every parameter; weight matrices as (d_in, d_out)")


class TraceInput(BaseModel):
    number: int
    english: list[str]
    german_pieces: list[str] = Field(description="the model's greedy output, without </s>")
    german: str = Field(description="the pieces joined")
    reference_pieces: list[str] = Field(description="the correct German pieces")
    correct: bool


class TraceNode(BaseModel):
    id: str
    op: str = Field(description="the ONNX operator that computed it (Gemm, Softmax, Where, …)")
    inputs: list[str] = Field(description="ids of earlier nodes or parameters")
    attrs: dict[str, Any]
    shape: list[int]
    dtype: str
    data: list[Number] = Field(
        description="the values, flattened row-major; null stands for −∞ (masked scores), "
                    "the only non-finite value a trace holds")


class Derived(BaseModel):
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
    cross_alignment: list[str]


class TraceHeader(BaseModel):
    format: str = Field(description="anatomy-trace/1")
    weights_version: str
    input: TraceInput
    source_tokens: list[str] = Field(description="the encoder's rows: the English words, then </s>")
    target_tokens: list[str] = Field(description="the decoder's rows: <s>, then the model's output")
    output_tokens: list[str] = Field(description="what each decoder row predicts")
    memory: str | None = Field(description="the node that is the encoder's memory z")
    parameters: list[str] = Field(description="parameter ids the nodes refer to (see /api/weights)")
    derived: Derived


class Trace(TraceHeader):
    nodes: list[TraceNode] = Field(description="every intermediate tensor, in the order computed")


class TraceStreamHeader(TraceHeader):
    """The first line of the NDJSON stream; `node_count` TraceNode lines follow, one per line."""

    node_count: int


class Hypothesis(BaseModel):
    tokens: list[str]
    log_prob: float
    length_penalty: float | None = Field(description="lp(Y) for finished hypotheses; null while alive")
    score: float | None = Field(description="log_prob / length_penalty; null while alive")


class BeamStep(BaseModel):
    step: int
    alive: list[Hypothesis]
    finished: list[Hypothesis]


class Beam(BaseModel):
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


class Fact(BaseModel):
    id: str
    value: str
    what: str
    source: str = Field(description="the reference and the sentence or table row quoted")


class Facts(BaseModel):
    count: int
    facts: list[Fact]
