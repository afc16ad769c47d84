"""Every sentence the article's live figures say, as data: /api/live sends the table (article/recipe.py), and
the page fills it in (static/compute/sentences.js), the one place it is filled.

A template's placeholders (checked here, so that a template the page cannot fill fails at import):

    {name}       the value as text (a string, or an int)
    {name:.Nm}   a number with N decimals and a true minus sign
    {name:.Nf}   a number with N decimals (a hyphen-minus)
    {name:g}     six significant digits (a rate such as 0.1)

A list entry is {"item": template, "sep": text}: each item formatted with its own values, joined by sep.
"""

from __future__ import annotations

import re

PLACEHOLDER = re.compile(r"\{(\w+)(?::(\.\d[mf]|g))?\}")  # what a template may hold, and nothing else in braces

SENTENCES: dict[str, str | dict[str, str]] = {
    # ---- lists of the trace's own tokens and numbers (derived.py, lessons.py) ----
    "words": {"item": "{word}", "sep": " "},
    "vector": {"item": "{x:.3m}", "sep": " "},
    "pairs": {"item": "{token} {value:.3m}", "sep": ", "},
    "pairs_2": {"item": "{token} {value:.2m}", "sep": ", "},
    "reads_writes": "{reads} → {writes}",
    "decoder_pairs": {"item": "{context} → {writes}", "sep": "; "},
    "cross_alignment": {"item": "{reads} → {writes}: {source}", "sep": "; "},
    "position_losses": {"item": "{token} {loss:.3f}", "sep": ", "},
    "lens_layers": {"item": "after decoder {layer}: {pieces}", "sep": "; "},
    "lens_pieces": {"item": "{piece} ({p:.2f})", "sep": " "},
    # ---- steps 6–9: the worked attention row (lessons.py) ----
    "reason_tens": (
        "{row_token} (row {row}) is a tens word, and in head {head} it puts {weight:.3m} on {key_token}, the unit "
        "right after it: the very question German's order raises"
    ),
    "reason_word": (
        "no tens word here rests mostly on the unit after it, so of its {rows} rows ({heads} heads × {tokens} "
        "tokens) this is the word that puts the largest weight on another word: {row_token} (row {row}) puts "
        "{weight:.3m} on {key_token}"
    ),
    "reason_end": (
        "no word here rests most on another word, so this is the end token's row, the one of its {rows} that "
        "puts the largest weight on a word: {row_token} (row {row}) puts {weight:.3m} on {key_token}"
    ),
    "reason_chosen": (
        "this is the row chosen on the stage, not the rule's: {row_token} (row {row}) of head {head}, which puts "
        "{weight:.3m} on {key_token}"
    ),
    "reason_missing": (
        "this input has no row {asked_row} in head {asked_head}, the row chosen on the stage, and the rule's row "
        "stands in for it — {reason}"
    ),
    "reason_any": (
        "no row of its {rows} rests most on another word, so this is the row with the largest weight "
        "of all: {row_token} (row {row}) puts {weight:.3m} on {key_token}"
    ),
    "blend": {"item": "{weight:.3m}·V[{token}]", "sep": " + "},
    "claim_head": "{token} took the most weight, {weight:.3m}",
    "claim_next": "; the next nearest, V[{token}], is {distance:.2m} away",
    "claim_nearest": (
        "{head}, and the output lies nearer to V[{token}] than to any other value row: {distance:.2m} away{tail}"
    ),
    "claim_elsewhere": (
        "{head}, yet not enough to pull the output to its value row: the output lies {distance:.2m} "
        "from V[{token}] and nearer to V[{near_token}], {near_distance:.2m} away, since the other "
        "weights, {rest:.3m} together, blend in the other rows"
    ),
    # ---- step 16: reordering (lessons.py) ----
    "und_rows": {"item": "row {row} (reads {reads}): {a} {wa:.3m}, {b} {wb:.3m}", "sep": "; "},
    "und_none": "none (this input has no und)",
    "units_found": "{found} of {units}",
    "units_none": "none (no unit comes before und here)",
    # ---- step 20: the training loss (loss.py) ----
    "departs_never": (
        "For the current input the output is the reference piece for piece, so all {rows} rows are training rows."
    ),
    "departs_stopped": (
        "The model stopped after {rows} of the reference's {reference} pieces, so the positions "
        "after row {last} are not drawn."
    ),
    "departs_at": (
        "From row {row} on the decoder read the model's own pieces, not the reference's, so those rows "
        "are not what training computes: they get no loss here."
    ),
    # ---- the exercises (exercises.py) ----
    "exercise_id": "step-{step}-{key}",
    "answer_number": "{answer:.3m}",
    "cell_value": "{row}:{col}",  # a cell as the stage names an explained one (static/js/page/exercises.js)
    "or": {"item": "{label}", "sep": " or "},
    "peak_choice": "“{token}” (column {col})",
    "peak_why": "Row {row} puts {weight:.3m} on “{token}”, more than on any other {other}: {pairs}.",
    "peak_answer": "“{token}” (column {col}), weight {weight:.3m}",
    "scale_question": (
        "Row 1 of E[x], the row of “{token}”, holds {a:.3m} in column 1. What will E[x]·√{d_model} "
        "hold in that cell? Type it to two decimals."
    ),
    "scale_why": "E[x]·√{d_model} multiplies every entry by √{d_model} = {s:.3m}: {a:.3m} × {s:.3m} = {ans:.3m}.",
    "query_choice": "column {col}",
    "query_question": (
        "In {station}, head {head} asks with its {d_k} columns of Q (columns {first}–{last}). In the "
        "row of “{token}” (row {row}), which of them holds the largest value? Click that cell of Q, "
        "or choose its column."
    ),
    "query_columns": {"item": "column {col} {value:.3m}", "sep": ", "},
    "query_why": (
        "Row {row} of Q holds, in head {head}'s columns: {columns}; the largest is {top:.3m}, in column {col}."
    ),
    "query_answer": "column {col} ({top:.3m})",
    "weights_question": (
        "In {block}, which token will the row of “{token}” (row 1) weigh most? Click the cell in "
        "its softmax weights, or choose it."
    ),
    "weights_other": "key",
    # ---- the concept questions: why, not how much (static/compute/exercises.js concepts) ----
    "concept_scale_question": "Why are the scores divided by √d_k before the softmax, rather than left as they are?",
    "concept_scale_wide": "Scores of d_k terms spread √d_k wide, and a too sharp softmax barely learns",
    "concept_scale_sum": "So that each row of weights adds up to 1, as a probability must",
    "concept_scale_positive": "So that every score is positive before the exponential is taken",
    "concept_scale_why": (
        "The softmax alone makes every weight positive and each row add up to 1, whatever the scores. The division "
        "keeps the scores' spread near 1 whatever d_k is: for this input, head {head}'s row of “{token}” puts "
        "{scaled:.3m} on its top key with it and {unscaled:.3m} without (step 8's card)."
    ),
    "concept_heads_question": (
        "Why does each attention layer run {heads} heads of width {d_k} rather than one head of width {d_model}?"
    ),
    "concept_heads_params": "{heads} heads hold {heads} times the parameters of one, so the layer stores more",
    "concept_heads_several": "Each head makes its own weights, so different heads can rest on different words",
    "concept_heads_order": "The heads run one after another, each refining the previous head's output",
    "concept_heads_why": (
        "The {heads} heads together have exactly the parameters of one head of width {d_model} (W^Q, W^K and W^V "
        "are only split by columns), but each has its own row of weights. For this input the row of “{token}” "
        "rests most on: {tops}."
    ),
    "concept_heads_top": {"item": "head {head}, “{token}” ({weight:.3m})", "sep": "; "},
    "concept_residual_question": (
        "Why is each sub-layer's output added to its input, x + Sublayer(x), rather than used in its place?"
    ),
    "concept_residual_norm": "So that the LayerNorm after it has a larger number to divide by",
    "concept_residual_path": "So a sub-layer only adds a correction, and the signal passes straight on",
    "concept_residual_sum": "So that the attention weights of each row still add up to 1",
    "concept_residual_why": (
        "Without the sum a layer must rebuild everything it passes on; with it, it adds what it found. For this "
        "input the first sub-layer adds {proj:.3m} to the first cell of its input, {x:.3m}: the sum is {sum:.3m}."
    ),
    "concept_mask_question": (
        "Why are the scores above the diagonal of the decoder's self-attention masked (set to −∞) before the softmax?"
    ),
    "concept_mask_speed": "To save computation, since the masked scores need no exponential at all",
    "concept_mask_english": "So that the decoder reads the English only through cross-attention",
    "concept_mask_future": "So that in training a row cannot read the piece it has to predict",
    "concept_mask_why": (
        "Each row predicts the next piece. Training feeds the whole correct German at once (teacher forcing), and "
        "the mask lets row i see pieces 0 to i only, as at inference, where the later pieces do not exist yet. For "
        "this input row 1 (“{token}”) may read only itself: its weight on itself is {weight:.3m}."
    ),
    "unscaled_question": (
        "Step 7's row (row 1 of {block}) has a largest weight of {top:.3m}. Without the division "
        "by √d_k, would its largest weight be larger, smaller or the same?"
    ),
    "unscaled_wider": "Without the division the scores lie {times:.2m} times wider apart",
    "unscaled_why": (
        "{wider}, and the softmax of wider scores is sharper: the largest weight goes from {top:.3m} to {unscaled:.3m}."
    ),
    "unscaled_why_one": (
        "{wider}, but the row already puts {top:.3m} on one key, and a weight cannot pass 1: it goes to {unscaled:.3m}."
    ),
    "unscaled_why_flat": (
        "{wider}, but the row's scores are so close that the weights stay nearly even: the "
        "largest goes from {top:.3m} to {unscaled:.3m}."
    ),
    "unscaled_larger": "larger",
    "unscaled_smaller": "smaller",
    "unscaled_same": "the same, to 3 decimals",
    "nearest_question": (
        "In {block}, the output row of “{token}” (row {row}) blends the value rows in the "
        "proportions of its weights. Which value row will it lie nearest?"
    ),
    "nearest_why": (
        "Its weights are {weights}; the output lies {distance:.2m} from V[{near_token}] (row {near}), "
        "nearer than to any other value row: {distances}."
    ),
    "nearest_choice": "V[{token}] (row {row})",
    "relu_question": (
        "In {block}, click a hidden unit that the ReLU {asked} in the row of “{token}” (row 1), or choose its unit."
    ),
    "relu_zeroes": "sets to zero",
    "relu_passes": "lets through",
    "relu_why": (
        "ReLU(x) = max(0, x) zeroes every unit that was negative before it: {zeros} of the row's {units} "
        "units, for example unit {unit} ({pre:.3m} before the ReLU)."
    ),
    "relu_why_none": (
        "ReLU(x) = max(0, x) zeroes every unit that was negative before it, and none of this row's "
        "{units} was: unit {unit} held {pre:.3m}."
    ),
    "relu_choice": "unit {unit}",
    "relu_answer": "any of the {count} such units, for example unit {unit}",
    "mask_question": (
        "Row 1 of {block} reads “{token}”. What weight will it put on position 1, itself? Type a number."
    ),
    "mask_hidden_many": "every score after position 1 ({count} of them)",
    "mask_hidden_one": "the score after position 1",
    "mask_why": (
        "The mask sets {hidden} to −∞ before the softmax, and e^−∞ = 0, so row 1 keeps one term: its "
        "weight on itself is e^s / e^s = 1 (the trace holds {weight:.3m})."
    ),
    "cross_question": (
        "Row 1 of {block} reads “{reads}” and writes “{writes}”. Which English word will it look "
        "at most? Click the cell, or choose it."
    ),
    "cross_other": "English token",
    "softmax_question": (
        "Row 1 (reads “{reads}”) gives “{piece}” the logit {logit:.3m}, and the log of its "
        "softmax's denominator, ln Σ_u e^(logit_u) over all {count} pieces, is {lse:.3m}. What "
        "probability will the softmax give “{piece}”? Type it to two decimals."
    ),
    "softmax_why": (
        "p = e^(logit − ln Σ) = e^({logit:.3m} − {lse:.3m}) = e^{difference:.3m} = {p:.3m}, the cell "
        "outlined in row 1 of the probability block."
    ),
    "turns_question": (
        "How many turns of the loop will greedy decoding take for this input? Each turn writes one "
        "piece; count the end marker </s> too, if it comes."
    ),
    "turns_why_end": "The model writes {pieces} and then </s>: {turns} turns, one decoder row each.",
    "turns_why_limit": (
        "The model writes {pieces} and stops at the length limit, without </s>: {turns} turns, one decoder row each."
    ),
    "loss_question": (
        "Row 1 ({reads} → {reference}) gives its reference piece p = {p:.3m}. Which is larger for "
        "this row: the smoothed loss −Σ_v q(v) ln p(v), or the plain loss −ln p(reference)?"
    ),
    "loss_why": (
        "−ln p(reference) = {plain:.3m}, and −Σ q ln p = {smooth:.3m}: the smoothed target also puts ε/V "
        "on every other piece, whose p are small, so their −ln p are large."
    ),
    "loss_why_short": "−ln p(reference) = {plain:.3m}, and −Σ q ln p = {smooth:.3m}.",
    "loss_smoothed": "the smoothed loss",
    "loss_plain": "the plain loss",
    "loss_equal": "they are equal",
    "dropout_question": (
        "In a training step, dropout (p = {p:g}) keeps the entry of “{token}”, column 1, of "
        "{block}'s output, now {v:.3m}. What will it become? Type it to two decimals."
    ),
    "dropout_why": (
        "A kept entry is divided by 1 − p = {keep:g}: {v:.3m} / {keep:g} = {ans:.3m}, so that on "
        "average over the masks it stays {v:.3m}."
    ),
    "parameters_question": (
        "How many parameters does {station} hold: its four projection matrices, their biases "
        "and its LayerNorm's γ and β? Type the count."
    ),
    "parameters_sizes": {"item": "{symbol} {size}", "sep": ", "},
    "parameters_why": "Its tensors hold {sizes}: {total} in all.",
}


def _check(template: str) -> str:
    if "{" in PLACEHOLDER.sub("", template) or "}" in PLACEHOLDER.sub("", template):
        raise ValueError(f"a placeholder the browser cannot format: {template}")
    return template


for _entry in SENTENCES.values():
    _check(_entry if isinstance(_entry, str) else _entry["item"])
