"""The trace's documents: the header a trace sends besides its nodes (the input, the rows, the parameters
it reads, the parts switched off, the logit lens, the article's live figures), and `Trace` itself.

The service sends these dataclasses as they are (orjson serialises dataclasses), and app/documents/schemas.py
documents them. `Derived` is the schema of the live figures; article/derived.py computes them, since the
recorder reads no article code.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from model.numbers import join_german, to_english, to_german_pieces
from model.vocab import EOS
from recorder.graph import Node


def described(description: str) -> Any:
    """A required dataclass field with a description (pydantic copies it into the OpenAPI schema)."""
    return field(metadata={"description": description})


def optional(description: str) -> Any:
    """A described field that may be null: a tensor the model's layout has not (the modern recipe), or
    figures not computed."""
    return field(default=None, metadata={"description": description})


TRACE_FORMAT = "anatomy-trace/2"


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
    """Per-input numbers the article quotes (`data-live` keys), computed from the trace (article/derived.py)."""

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
    least_certain_position: int = described("the least certain choice's decoder row, counted from 1 as a reader counts")
    cross_alignment: str = described(
        "per decoder row (reads → writes): the source token its last-layer "
        "cross-attention, averaged over heads, rests on most"
    )
    position_losses: str = described("each output piece and its loss −ln p (no smoothing), to 3 decimals")
    mean_position_loss: float = described("the mean of those losses")
    # the teaching steps' numbers (article/lessons.py)
    least_certain_reads: str = described("what the least certain choice's decoder row reads")
    worked_head: int = described(
        "the worked attention row's head, named from 1 (encoder layer 1), chosen "
        "from the trace (article/lessons.py choose_worked)"
    )
    worked_row: int = described("its row, counted from 1 as a reader counts (its index + 1)")
    worked_token: str
    worked_q_col: int = described(
        "the head's first column of Q, counted from 1: step 6's one cell is (worked_row, worked_q_col)"
    )
    worked_reason: str = described("why this row: the rule that chose it, said for this input")
    worked_key_token: str = described("the token the row rests on most: the key of the pair worked out")
    worked_q: str = described("the row's query, the head's columns of Q, to 3 decimals")
    worked_k: str = described("that key's row of the head's columns of K")
    worked_qk_products: str = described("their elementwise products q_i k_i")
    worked_qk_dot: float = described("their sum, the dot product q·k")
    worked_qk_score: float = described("q·k times the scale 1/√d_k: the pair's score")
    worked_scores: str = described("the row's scaled scores, per source token, to 3 decimals")
    worked_weights: str = described("its softmax weights, per source token")
    worked_unscaled_weights: str = described("the softmax of the same scores without the 1/√d_k scale")
    worked_top_token: str
    worked_top_weight: float
    worked_unscaled_top_weight: float
    worked_blend: str = described("the weighted sum of the value rows, written out")
    worked_output: str = described("the head's output row: that weighted sum, to 3 decimals")
    worked_v_top: str = described("the value row of the token with the largest weight")
    worked_distances: str = described("the output row's distance to each token's value row, to 2 decimals")
    worked_claim: str = described(
        "step 9's sentence: which token took most weight and which value row the output lies nearest, computed"
    )
    und_rows: str = described(
        "each row that writes und: the two source tokens its last-layer cross-attention, "
        "averaged over heads, weighs most, with the weights"
    )
    units_on_their_word: str = described(
        "of the units written just before und, how many rows rest most on "
        "their English word (last layer, head-averaged)"
    )
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
    logit_lens: str = described(
        "per decoder layer, the most probable piece at each position if decoding "
        "stopped after it, with its probability (the lens nodes' argmax)"
    )
    # step 20: label-smoothed cross-entropy per output row (article/loss.py)
    loss_rows: list[LossRow] = described("per decoder row: its smoothed target's reference piece and the losses")
    loss_q_reference: float = described("1 − ε + ε/V: the smoothed target on the reference piece")
    loss_q_other: float = described("ε/V: the smoothed target on each other piece")
    loss_floor: float = described("H(q) = −Σ q ln q: the least a row's smoothed loss can be (at p = q)")
    loss_reference_length: int = described("positions of the reference, </s> included")
    loss_forced_rows: int = described("rows that read the reference's pieces (the greedy output agrees so far)")
    loss_sum: float = described("Σ over those rows of −Σ_v q_v ln p_v")
    loss_mean: float = described("… its mean over those rows")
    plain_loss_sum: float = described("Σ over those rows of −ln p(reference)")
    plain_loss_mean: float = described("… its mean")
    loss_departs: str = described("where the greedy output leaves the reference (empty when it never does)")
    exercises: list[Exercise] = described(
        "predict, then reveal: the questions about this input that the page asks, each "
        "with its answer from the trace (article/exercises.py)"
    )


@dataclass(kw_only=True)
class LossRow:
    """One decoder row under the training loss (step 20)."""

    row: int
    reads: str = described("the piece the row reads")
    writes: str = described("the piece greedy decoding writes (the row's argmax)")
    forced: bool = described("the row read the reference's pieces, so it is the row training computes")
    reference: str | None = optional("the reference piece y_t (null when the row is not a training row)")
    p_written: float = described("p of the piece written")
    reference_id: int | None = optional("its vocabulary id: its column in the probability block")
    p_reference: float | None = optional("p of the reference piece")
    loss: float | None = optional("−Σ_v q_v ln p_v, q smoothed with ε_ls")
    plain_loss: float | None = optional("−ln p(reference)")


@dataclass(kw_only=True)
class ExerciseCell:
    id: str = described("the block's id")
    row: int
    col: int


@dataclass(kw_only=True)
class ExerciseChoice:
    value: str = described("what the answer is compared by: a cell's \"row:col\", or a choice's key")
    label: str


@dataclass(kw_only=True)
class Exercise:
    """A "predict, then reveal" question about this input, answered from its trace (article/exercises.py)."""

    id: str = described("stable across inputs: step-N-key")
    step: int
    kind: str = described("cell (click a cell of `block` or choose it), choice (one of `choices`), number (type it)")
    question: str
    block: str | None = optional("cell: the block a clicked cell must lie in")
    choices: list[ExerciseChoice] = described("cell: the block's cells a keyboard may choose; choice: the options")
    right: list[str] = described("the values that count as right (cell, choice)")
    answer: float | None = optional("number: the right value")
    tolerance: float | None = optional("number: how far a typed value may lie from it")
    answer_text: str = described("the right answer, said")
    why: str = described("why, with the trace's numbers")
    evidence: ExerciseCell = described("the cell the stage explains once answered")


@dataclass(kw_only=True)
class LensPiece:
    piece: str
    p: float = described("its probability under the lens")


@dataclass(kw_only=True)
class LensLayer:
    """The logit lens after one decoder layer: side nodes, not on the forward path."""

    layer: int = described("the decoder layer (0 = the first)")
    reads: str = described("the node it reads: that layer's output")
    logits: str = described(
        "node: reads · Eᵀ (a pre-norm model: the final norm of reads, then the output matrix, Eᵀ or the untied W_U)"
    )
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
    ablation: list[str] = described(
        "the parts switched off (model/ablation.py), in the model's order; "
        "each is a `part.gate` zero constant and a `part.off` node in the graph"
    )
    lens: list[LensLayer] = described(
        "the logit lens per decoder layer: side nodes `lens.dec.L.*`, computed from the forward path, never read by it"
    )


@dataclass
class Trace:
    number: int
    source_tokens: list[str]
    target_tokens: list[str]  # the decoder's rows: <s> + the model's output
    output_tokens: list[str]  # what each decoder row predicts (ends with </s> when the model stops)
    nodes: list[Node]
    parameter_ids: list[str]
    weights_version: str = ""
    memory: str | None = None  # the encoder's output z: the last layer's, or pre-norm the final norm
    ablation: list[str] = field(default_factory=list)  # parts switched off
    lens: list[LensLayer] = field(default_factory=list)  # the logit lens per decoder layer

    def node(self, node_id: str) -> Node:
        return next(n for n in self.nodes if n.id == node_id)

    def header(self) -> TraceHeader:
        pieces = [t for t in self.output_tokens if t != EOS]
        reference = to_german_pieces(self.number)
        return TraceHeader(
            format=TRACE_FORMAT,
            weights_version=self.weights_version,
            input=TraceInput(
                number=self.number,
                english=to_english(self.number),
                german_pieces=pieces,
                german=join_german(pieces),
                reference_pieces=reference,
                correct=pieces == reference,
            ),
            source_tokens=self.source_tokens,
            target_tokens=self.target_tokens,
            output_tokens=self.output_tokens,
            memory=self.memory,
            parameters=self.parameter_ids,
            ablation=list(self.ablation),
            lens=list(self.lens),
        )

    def to_json(self) -> dict:
        """The header's fields and the nodes (their data as numpy arrays, for orjson)."""
        return {**asdict(self.header()), "nodes": [n.to_json() for n in self.nodes]}
