"""Issue 24 item 1, "predict, then reveal": a question per teaching step about the reader's own input,
answered by the trace (or the model's own tensors, for a count), with the sentence that says why and the
cell the stage explains as evidence. article/derived.py ships them in the trace's `derived` block, so a
new input brings new questions and new answers; static/js/page/exercises.js only shows them and compares
an answer with `right` (or with `answer` ± `tolerance`), knowing nothing of the model.

Each exercise is a plain dict (the recorder's `Exercise` documents the fields):

    kind     cell (click a cell of `block`, or choose it from `choices`), choice (one of `choices`),
             number (type it; right within `tolerance` of `answer`)
    choices  [{value, label}]: a cell's value is "row:col" in the block's own coordinates, as the stage
             names an explained cell; a choice's is its key
    right    the values that count as right (a cell question may have several: ties, or every zero)
    evidence {id, row, col}: the cell the stage explains when the answer is given

Rows and columns are counted from 0, as on the stage; layers and heads from 1 (ids' reader names). The
questions come from the trace's own nodes, so they are asked only of the paper's layout (a trace with
`src.scaled`); the modern recipe's page shows the 2017 article and no exercises.
"""

from __future__ import annotations

import numpy as np

from article.format import format_number
from article.lessons import choose_worked, num, pairs, quoted, softmax
from article.loss import loss_figures
from model import ids
from model.transformer import EncoderDecoder
from model.vocab import EOS, VOCAB
from recorder import parameters

TIE = 0.005  # a weight within this of a row's largest counts as its largest too (the stage cannot tell them apart)


def _name(node_id: str) -> str:
    return ids.parse(node_id).reader_name()


def _cell(id_: str, row: int, col: int) -> dict:
    return {"id": id_, "row": int(row), "col": int(col)}


def _exercise(step: int, key: str, kind: str, question: str, why: str, answer_text: str, evidence: dict,
              **more) -> dict:
    base = {"id": f"step-{step}-{key}", "step": step, "kind": kind, "question": question, "block": None,
            "choices": [], "right": [], "answer": None, "tolerance": None, "answer_text": answer_text,
            "why": why, "evidence": evidence}
    return {**base, **more}


def _row_peak(step: int, key: str, block: str, row: int, cols: list[str], weights: np.ndarray,
              question: str, other: str) -> dict:
    """A cell question on one row of a weight block: the right cells are the row's largest weight (and any
    within TIE of it); the keyboard's choices are the row's columns, named by their tokens; the why names the
    weights (`other`: what the columns are, "key")."""
    top = int(weights.argmax())
    right = [f"{row}:{c}" for c in np.flatnonzero(weights >= weights[top] - TIE)]
    choices = [{"value": f"{row}:{c}", "label": f"{quoted(tok)} (column {c})"} for c, tok in enumerate(cols)]
    why = (f"Row {row} puts {num(weights[top])} on {quoted(cols[top])}, more than on any other {other}: "
           f"{pairs(cols, weights)}.")
    answer = f"{quoted(cols[top])} (column {top}), weight {num(weights[top])}"
    return _exercise(step, key, "cell", question, why, answer, _cell(block, row, top), block=block, choices=choices,
                     right=right)


def _options(step: int, key: str, question: str, why: str, choices: list[tuple[str, str]], right: list[str],
             evidence: dict) -> dict:
    label = dict(choices)
    return _exercise(step, key, "choice", question, why, " or ".join(label[r] for r in right), evidence,
                     choices=[{"value": v, "label": lab} for v, lab in choices], right=right)


def _number(step: int, key: str, question: str, why: str, answer: float, tolerance: float, evidence: dict,
            text: str | None = None) -> dict:
    return _exercise(step, key, "number", question, why, text or num(answer), evidence, answer=float(answer),
                     tolerance=float(tolerance))


def value(t, node_id: str) -> np.ndarray:
    return t.node(node_id).value.astype(np.float64)


# ---- the encoder: steps 4–12 ---------------------------------------------------------------------------

def scale(t, d_model: int) -> dict:
    """Step 4: one entry of E[x], multiplied by √d_model."""
    scaled = t.node("src.scaled")
    emb, factor = (value(t, i) for i in scaled.inputs)
    a, s, ans = float(emb[0, 0]), float(factor.reshape(-1)[0]), float(value(t, scaled.id)[0, 0])
    tok = t.source_tokens[0]
    q = (f"Row 0 of E[x], the row of {quoted(tok)}, holds {num(a)} in column 0. What will E[x]·√{d_model} hold in "
         f"that cell? Type it to two decimals.")
    why = f"E[x]·√{d_model} multiplies every entry by √{d_model} = {num(s)}: {num(a)} × {num(s)} = {num(ans)}."
    return _number(4, "scale", q, why, ans, 0.01, _cell(scaled.id, 0, 0))


def query_peak(t, c: dict, d_k: int) -> dict:
    """Step 6: in the worked row (`c`, choose_worked's), which of its head's columns of Q holds the largest value."""
    whole, part = ids.join(c["station"], "q"), ids.head_slice_id(ids.join(c["station"], "q"), c["head"])
    off, r = int(t.node(part).attrs["starts"][0]), c["row"]
    row = value(t, part)[r]
    top = int(row.argmax())
    right = [f"{r}:{off + j}" for j in np.flatnonzero(row >= row[top] - TIE)]
    choices = [{"value": f"{r}:{off + j}", "label": f"column {off + j}"} for j in range(len(row))]
    tok = t.source_tokens[r]
    q = (f"In {_name(c['station'])}, head {c['head'] + 1} asks with its {d_k} columns of Q (columns {off}–"
         f"{off + d_k - 1}). In the row of {quoted(tok)} (row {r}), which of them holds the largest value? Click that "
         f"cell of Q, or choose its column.")
    why = (f"Row {r} of Q holds, in head {c['head'] + 1}'s columns: "
           + ", ".join(f"column {off + j} {num(v)}" for j, v in enumerate(row))
           + f"; the largest is {num(row[top])}, in column {off + top}.")
    return _exercise(6, "query", "cell", q, why, f"column {off + top} ({num(row[top])})", _cell(whole, r, off + top),
                     block=whole, choices=choices, right=right)


def _other_head(c: dict, shift: int) -> int:
    """A head other than the worked row's (`c`: steps 7–9's text works that one through): `shift` heads on."""
    return (c["head"] + shift) % c["heads"]


def weights_peak(t, c: dict) -> dict:
    """Step 7: which key the first token's row weighs most, in the head after the worked one."""
    h = _other_head(c, 1)
    block = ids.head_id("enc.0.self", h, "weights")
    w, toks = value(t, block)[0], list(t.source_tokens)
    q = (f"In {_name(block)}, which token will the row of {quoted(toks[0])} (row 0) weigh most? Click the cell in "
         f"its softmax weights, or choose it.")
    return _row_peak(7, "weights", block, 0, toks, w, q, "key")


def unscaled(t, c: dict) -> dict:
    """Step 8: would step 7's row be sharper without the 1/√d_k? (The largest weight of softmax(c·s) grows with
    c > 1 for any row whose scores differ, so it is never smaller; the same, to 3 decimals, when the row is
    already all on one key or nearly flat.)"""
    h = _other_head(c, 1)
    node = t.node(ids.head_id("enc.0.self", h, "scores"))
    alpha = float(node.attrs.get("alpha", 1.0))
    w = value(t, ids.head_id("enc.0.self", h, "weights"))[0]
    u = softmax(value(t, node.id)[0] / alpha)
    key = "larger" if u.max() >= w.max() + 5e-4 else "smaller" if u.max() <= w.max() - 5e-4 else "same"
    q = (f"Step 7's row (row 0 of {_name(node.id)}) has a largest weight of {num(w.max())}. Without the division "
         f"by √d_k, would its largest weight be larger, smaller or the same?")
    wider = f"Without the division the scores lie {num(1 / alpha, 2)} times wider apart"
    why = (f"{wider}, and the softmax of wider scores is sharper: the largest weight goes from {num(w.max())} to "
           f"{num(u.max())}.")
    if key == "same" and w.max() > 0.99:
        why = (f"{wider}, but the row already puts {num(w.max())} on one key, and a weight cannot pass 1: it "
               f"goes to {num(u.max())}.")
    elif key == "same":
        why = (f"{wider}, but the row's scores are so close that the weights stay nearly even: the largest goes "
               f"from {num(w.max())} to {num(u.max())}.")
    choices = [("larger", "larger"), ("smaller", "smaller"), ("same", "the same, to 3 decimals")]
    return _options(8, "unscaled", q, why, choices, [key], _cell(node.id, 0, int(w.argmax())))


def nearest_value(t, c: dict) -> dict:
    """Step 9: which value row a head's output row lies nearest to, for the last English word's row."""
    h, toks = _other_head(c, 2), list(t.source_tokens)
    r = max(0, len(toks) - 2)
    w = value(t, ids.head_id("enc.0.self", h, "weights"))[r]
    v = value(t, ids.head_slice_id("enc.0.self.v", h))
    out_id = ids.head_id("enc.0.self", h, "out")
    dist = np.linalg.norm(v - value(t, out_id)[r][None, :], axis=-1)
    near = int(dist.argmin())
    right = [str(j) for j in np.flatnonzero(dist <= dist[near] + TIE)]
    q = (f"In {_name(out_id)}, the output row of {quoted(toks[r])} (row {r}) blends the value rows in the proportions "
         f"of its weights. Which value row will it lie nearest?")
    why = (f"Its weights are {pairs(toks, w)}; the output lies {num(dist[near], 2)} from V[{toks[near]}] (row "
           f"{near}), nearer than to any other value row: {pairs(toks, dist, 2)}.")
    choices = [(str(j), f"V[{tok}] (row {j})") for j, tok in enumerate(toks)]
    return _options(9, "nearest", q, why, choices, right, _cell(out_id, r, 0))


def relu_zero(t) -> dict:
    """Step 12: a hidden unit that the ReLU sets to zero in the first token's row."""
    hidden = t.node("enc.0.ffn.hidden")
    pre, after = value(t, hidden.inputs[0])[0], value(t, hidden.id)[0]
    zero = np.flatnonzero(after == 0)
    which = zero if len(zero) else np.flatnonzero(after > 0)  # a row with no zero: ask for one let through
    c, tok = int(which[0]), t.source_tokens[0]
    asked = "sets to zero" if len(zero) else "lets through"
    q = (f"In {_name(hidden.id)}, click a hidden unit that the ReLU {asked} in the row of {quoted(tok)} (row 0), "
         f"or choose its unit.")
    why = (f"ReLU(x) = max(0, x) zeroes every unit that was negative before it: {len(zero)} of the row's "
           f"{len(after)} units, for example unit {c} ({num(pre[c])} before the ReLU).")
    if not len(zero):
        why = (f"ReLU(x) = max(0, x) zeroes every unit that was negative before it, and none of this row's "
               f"{len(after)} was: unit {c} held {num(pre[c])}.")
    choices = [{"value": f"0:{j}", "label": f"unit {j}"} for j in range(len(after))]
    return _exercise(12, "relu", "cell", q, why, f"any of the {len(which)} such units, for example unit {c}",
                     _cell(hidden.id, 0, c), block=hidden.id, choices=choices, right=[f"0:{j}" for j in which])


# ---- the decoder, the output and training: steps 15–25 -------------------------------------------------

def mask_first(t) -> dict:
    """Step 15: the weight the first decoder row, which sees only itself, puts on itself."""
    block = ids.head_id("dec.0.self", 0, "weights")
    w, m = value(t, block), len(t.target_tokens)
    q = (f"Row 0 of {_name(block)} reads {quoted(t.target_tokens[0])}. What weight will it put on position 0, itself? "
         f"Type a number.")
    hidden = f"every score after position 0 ({m - 1} of them)" if m > 2 else "the score after position 0"
    why = (f"The mask sets {hidden} to −∞ before the softmax, and e^−∞ = 0, so row 0 keeps one term: its weight on "
           f"itself is e^s / e^s = 1 (the trace holds {num(w[0, 0])}).")
    return _number(15, "mask", q, why, float(w[0, 0]), 0.01, _cell(block, 0, 0))


def cross_first(t, n_layers: int, n_heads: int) -> dict:
    """Step 16: the English word the row that writes the first piece looks at most, last layer, last head."""
    block = ids.head_id(ids.sublayer_id("dec", n_layers - 1, "cross"), n_heads - 1, "weights")
    w, src = value(t, block)[0], list(t.source_tokens)
    q = (f"Row 0 of {_name(block)} reads {quoted(t.target_tokens[0])} and writes {quoted(t.output_tokens[0])}. "
         f"Which English word will it look at most? Click the cell, or choose it.")
    return _row_peak(16, "cross", block, 0, src, w, q, "English token")


def first_probability(t) -> dict:
    """Step 18: the softmax of the first row's logits, for the piece it writes, from its logit and the log of
    the softmax's denominator."""
    logits, probs = value(t, "out.logits")[0], value(t, "out.probs")[0]
    top = int(probs.argmax())
    lse = float(logits.max() + np.log(np.exp(logits - logits.max()).sum()))  # ln Σ_u e^{logit_u}, computed stably
    piece = VOCAB.tokens[top]
    q = (f"Row 0 (reads {quoted(t.target_tokens[0])}) gives {quoted(piece)} the logit {num(logits[top])}, and the "
         f"log of its softmax's denominator, ln Σ_u e^(logit_u) over all {len(logits)} pieces, is {num(lse)}. What "
         f"probability will the softmax give {quoted(piece)}? Type it to two decimals.")
    why = (f"p = e^(logit − ln Σ) = e^({num(logits[top])} − {num(lse)}) = e^{num(logits[top] - lse)} = "
           f"{num(probs[top])}, the cell outlined in row 0 of the probability block.")
    return _number(18, "softmax", q, why, float(probs[top]), 0.01, _cell("out.probs", 0, top))


def turns(t) -> dict:
    """Step 19: how many turns of the loop greedy decoding takes for this input."""
    out, n = list(t.output_tokens), len(t.output_tokens)
    probs = value(t, "out.probs")
    pieces = " ".join(tok for tok in out if tok != EOS)
    q = ("How many turns of the loop will greedy decoding take for this input? Each turn writes one piece; "
         "count the end marker </s> too, if it comes.")
    why = (f"The model writes {pieces} and then </s>: {n} turns, one decoder row each." if out[-1] == EOS else
           f"The model writes {pieces} and stops at the length limit, without </s>: {n} turns, one decoder row each.")
    return _number(19, "turns", q, why, n, 0, _cell("out.probs", n - 1, int(probs[n - 1].argmax())), str(n))


def smoothed_or_plain(t) -> dict:
    """Step 20: for row 0 (always a training row), is the smoothed loss larger than −ln p(reference)?"""
    row = loss_figures(t)["loss_rows"][0]
    smooth, plain = row["loss"], row["plain_loss"]
    key = "smoothed" if smooth > plain + 5e-4 else "plain" if plain > smooth + 5e-4 else "equal"
    q = (f"Row 0 ({row['reads']} → {row['reference']}) gives its reference piece p = {num(row['p_reference'])}. "
         f"Which is larger for this row: the smoothed loss −Σ_v q(v) ln p(v), or the plain loss −ln p(reference)?")
    why = (f"−ln p(reference) = {num(plain)}, and −Σ q ln p = {num(smooth)}: the smoothed target also puts ε/V "
           f"on every other piece, whose p are small, so their −ln p are large.")
    if key != "smoothed":
        why = f"−ln p(reference) = {num(plain)}, and −Σ q ln p = {num(smooth)}."
    choices = [("smoothed", "the smoothed loss"), ("plain", "the plain loss"), ("equal", "they are equal")]
    return _options(20, "loss", q, why, choices, [key], _cell("out.probs", 0, row["reference_id"]))


def dropout_scale(t, p: float) -> dict:
    """Step 22: what inverted dropout does to an entry it keeps."""
    v, tok = float(value(t, "enc.0.self.proj")[0, 0]), t.source_tokens[0]
    ans = v / (1 - p)
    q = (f"In a training step, dropout (p = {p:g}) keeps the entry of {quoted(tok)}, column 0, of "
         f"{_name('enc.0.self.proj')}'s output, now {num(v)}. What will it become? Type it to two decimals.")
    why = (f"A kept entry is divided by 1 − p = {1 - p:g}: {num(v)} / {1 - p:g} = {num(ans)}, so that on "
           f"average over the masks it stays {num(v)}.")
    return _number(22, "dropout", q, why, ans, max(0.01, 0.01 * abs(ans)), _cell("enc.0.self.proj", 0, 0))


SYMBOLS = {"gamma": "γ", "beta": "β"}


def _symbol(role: str) -> str:
    """W_q → W^Q, b_o → b^O, gamma → γ: a parameter as the article writes it."""
    head, _, tail = role.partition("_")
    return SYMBOLS.get(role, f"{head}^{tail.upper()}" if tail else role)


def station_parameters(params: dict[str, np.ndarray], n_layers: int) -> dict:
    """Step 25: how many parameters the last decoder layer's cross-attention holds."""
    station = ids.sublayer_id("dec", n_layers - 1, "cross")
    mine = {k: v for k, v in params.items() if ids.parse(k).station == station}
    total = sum(int(v.size) for v in mine.values())
    q = (f"How many parameters does {_name(station)} hold: its four projection matrices, their biases and its "
         f"LayerNorm's γ and β? Type the count.")
    why = ("Its tensors hold " + ", ".join(f"{_symbol(ids.parse(k).role)} {format_number(v.size, 'int')}"
                                          for k, v in mine.items()) + f": {format_number(total, 'int')} in all.")
    first = next(iter(mine))
    return _number(25, "parameters", q, why, total, 0, _cell(first, 0, 0), format_number(total, "int"))


def exercises(t, model: EncoderDecoder) -> list[dict]:
    """Every exercise for trace `t`, in the order of the steps; none for a trace of another layout."""
    if "src.scaled" not in {n.id for n in t.nodes}:
        return []
    c, worked = model.cfg, choose_worked(t)  # once: each call scans every head's weights
    return [scale(t, c.d_model), query_peak(t, worked, c.d_k), weights_peak(t, worked), unscaled(t, worked),
            nearest_value(t, worked), relu_zero(t), mask_first(t), cross_first(t, c.n_layers, c.n_heads),
            first_probability(t), turns(t), smoothed_or_plain(t), dropout_scale(t, c.dropout),
            station_parameters(parameters(model), c.n_layers)]
