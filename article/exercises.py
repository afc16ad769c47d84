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

from article import live_nodes as at
from article.format import format_number
from article.lessons import choose_worked, pairs, softmax
from article.loss import loss_figures
from article.sentences import listed, say
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
    base = {"id": say("exercise_id", step=step, key=key), "step": step, "kind": kind, "question": question,
            "block": None, "choices": [], "right": [], "answer": None, "tolerance": None, "answer_text": answer_text,
            "why": why, "evidence": evidence}
    return {**base, **more}


def _row_peak(step: int, key: str, block: str, row: int, cols: list[str], weights: np.ndarray,
              question: str, other: str) -> dict:
    """A cell question on one row of a weight block: the right cells are the row's largest weight (and any
    within TIE of it); the keyboard's choices are the row's columns, named by their tokens; the why names the
    weights (`other`: what the columns are, "key")."""
    top = int(weights.argmax())
    right = [say("cell_value", row=row, col=c) for c in np.flatnonzero(weights >= weights[top] - TIE)]
    choices = [{"value": say("cell_value", row=row, col=c), "label": say("peak_choice", token=tok, col=c)}
               for c, tok in enumerate(cols)]
    why = say("peak_why", row=row, weight=weights[top], token=cols[top], other=other, pairs=pairs(cols, weights))
    answer = say("peak_answer", token=cols[top], col=top, weight=weights[top])
    return _exercise(step, key, "cell", question, why, answer, _cell(block, row, top), block=block, choices=choices,
                     right=right)


def _options(step: int, key: str, question: str, why: str, choices: list[tuple[str, str]], right: list[str],
             evidence: dict) -> dict:
    label = dict(choices)
    return _exercise(step, key, "choice", question, why, listed("or", [{"label": label[r]} for r in right]), evidence,
                     choices=[{"value": v, "label": lab} for v, lab in choices], right=right)


def _number(step: int, key: str, question: str, why: str, answer: float, tolerance: float, evidence: dict,
            text: str | None = None) -> dict:
    return _exercise(step, key, "number", question, why, text or say("answer_number", answer=answer), evidence,
                     answer=float(answer), tolerance=float(tolerance))


def value(t, node_id: str) -> np.ndarray:
    return t.node(node_id).value.astype(np.float64)


# ---- the encoder: steps 4–12 ---------------------------------------------------------------------------

def scale(t, d_model: int) -> dict:
    """Step 4: one entry of E[x], multiplied by √d_model."""
    scaled = t.node(at.SCALED)
    emb, factor = (value(t, i) for i in scaled.inputs)
    a, s, ans = float(emb[0, 0]), float(factor.reshape(-1)[0]), float(value(t, scaled.id)[0, 0])
    tok = t.source_tokens[0]
    q = say("scale_question", token=tok, a=a, d_model=d_model)
    why = say("scale_why", d_model=d_model, s=s, a=a, ans=ans)
    return _number(4, "scale", q, why, ans, 0.01, _cell(scaled.id, 0, 0))


def query_peak(t, c: dict, d_k: int) -> dict:
    """Step 6: in the worked row (`c`, choose_worked's), which of its head's columns of Q holds the largest value."""
    whole, part = ids.join(c["station"], "q"), ids.head_slice_id(ids.join(c["station"], "q"), c["head"])
    off, r = int(t.node(part).attrs["starts"][0]), c["row"]
    row = value(t, part)[r]
    top = int(row.argmax())
    right = [say("cell_value", row=r, col=off + j) for j in np.flatnonzero(row >= row[top] - TIE)]
    choices = [{"value": say("cell_value", row=r, col=off + j), "label": say("query_choice", col=off + j)}
               for j in range(len(row))]
    tok = t.source_tokens[r]
    q = say("query_question", station=_name(c["station"]), head=c["head"] + 1, d_k=d_k, first=off,
            last=off + d_k - 1, token=tok, row=r)
    columns = listed("query_columns", [{"col": off + j, "value": v} for j, v in enumerate(row)])
    why = say("query_why", row=r, head=c["head"] + 1, columns=columns, top=row[top], col=off + top)
    answer = say("query_answer", col=off + top, top=row[top])
    return _exercise(6, "query", "cell", q, why, answer, _cell(whole, r, off + top), block=whole, choices=choices,
                     right=right)


def _other_head(c: dict, shift: int) -> int:
    """A head other than the worked row's (`c`: steps 7–9's text works that one through): `shift` heads on."""
    return (c["head"] + shift) % c["heads"]


def weights_peak(t, c: dict) -> dict:
    """Step 7: which key the first token's row weighs most, in the head after the worked one."""
    h = _other_head(c, 1)
    block = ids.head_id(c["station"], h, "weights")
    w, toks = value(t, block)[0], list(t.source_tokens)
    q = say("weights_question", block=_name(block), token=toks[0])
    return _row_peak(7, "weights", block, 0, toks, w, q, say("weights_other"))


def unscaled(t, c: dict) -> dict:
    """Step 8: would step 7's row be sharper without the 1/√d_k? (The largest weight of softmax(c·s) grows with
    c > 1 for any row whose scores differ, so it is never smaller; the same, to 3 decimals, when the row is
    already all on one key or nearly flat.)"""
    h = _other_head(c, 1)
    node = t.node(ids.head_id(c["station"], h, "scores"))
    alpha = float(node.attrs.get("alpha", 1.0))
    w = value(t, ids.head_id(c["station"], h, "weights"))[0]
    u = softmax(value(t, node.id)[0] / alpha)
    key = "larger" if u.max() >= w.max() + 5e-4 else "smaller" if u.max() <= w.max() - 5e-4 else "same"
    q = say("unscaled_question", block=_name(node.id), top=w.max())
    wider = say("unscaled_wider", times=1 / alpha)
    why = say("unscaled_why" if key != "same" else "unscaled_why_one" if w.max() > 0.99 else "unscaled_why_flat",
              wider=wider, top=w.max(), unscaled=u.max())
    choices = [(k, say(f"unscaled_{k}")) for k in ("larger", "smaller", "same")]
    return _options(8, "unscaled", q, why, choices, [key], _cell(node.id, 0, int(w.argmax())))


def nearest_value(t, c: dict) -> dict:
    """Step 9: which value row a head's output row lies nearest to, for the last English word's row."""
    h, toks = _other_head(c, 2), list(t.source_tokens)
    r = max(0, len(toks) - 2)
    w = value(t, ids.head_id(c["station"], h, "weights"))[r]
    v = value(t, ids.head_slice_id(ids.join(c["station"], "v"), h))
    out_id = ids.head_id(c["station"], h, "out")
    dist = np.linalg.norm(v - value(t, out_id)[r][None, :], axis=-1)
    near = int(dist.argmin())
    right = [str(j) for j in np.flatnonzero(dist <= dist[near] + TIE)]
    q = say("nearest_question", block=_name(out_id), token=toks[r], row=r)
    why = say("nearest_why", weights=pairs(toks, w), distance=dist[near], near_token=toks[near], near=near,
              distances=pairs(toks, dist, 2))
    choices = [(str(j), say("nearest_choice", token=tok, row=j)) for j, tok in enumerate(toks)]
    return _options(9, "nearest", q, why, choices, right, _cell(out_id, r, 0))


def relu_zero(t) -> dict:
    """Step 12: a hidden unit that the ReLU sets to zero in the first token's row."""
    hidden = t.node(at.FFN_HIDDEN)
    pre, after = value(t, hidden.inputs[0])[0], value(t, hidden.id)[0]
    zero = np.flatnonzero(after == 0)
    which = zero if len(zero) else np.flatnonzero(after > 0)  # a row with no zero: ask for one let through
    c, tok = int(which[0]), t.source_tokens[0]
    q = say("relu_question", block=_name(hidden.id), asked=say("relu_zeroes" if len(zero) else "relu_passes"),
            token=tok)
    why = say("relu_why" if len(zero) else "relu_why_none", zeros=len(zero), units=len(after), unit=c, pre=pre[c])
    choices = [{"value": say("cell_value", row=0, col=j), "label": say("relu_choice", unit=j)}
               for j in range(len(after))]
    right = [say("cell_value", row=0, col=j) for j in which]
    return _exercise(12, "relu", "cell", q, why, say("relu_answer", count=len(which), unit=c),
                     _cell(hidden.id, 0, c), block=hidden.id, choices=choices, right=right)


# ---- the decoder, the output and training: steps 15–25 -------------------------------------------------

def mask_first(t) -> dict:
    """Step 15: the weight the first decoder row, which sees only itself, puts on itself."""
    block = ids.head_id(at.FIRST_DECODER_SELF, 0, "weights")
    w, m = value(t, block), len(t.target_tokens)
    q = say("mask_question", block=_name(block), token=t.target_tokens[0])
    hidden = say("mask_hidden_many", count=m - 1) if m > 2 else say("mask_hidden_one")
    why = say("mask_why", hidden=hidden, weight=w[0, 0])
    return _number(15, "mask", q, why, float(w[0, 0]), 0.01, _cell(block, 0, 0))


def cross_first(t, n_layers: int, n_heads: int) -> dict:
    """Step 16: the English word the row that writes the first piece looks at most, last layer, last head."""
    block = at.last_cross_weights(n_layers, n_heads)[-1]
    w, src = value(t, block)[0], list(t.source_tokens)
    q = say("cross_question", block=_name(block), reads=t.target_tokens[0], writes=t.output_tokens[0])
    return _row_peak(16, "cross", block, 0, src, w, q, say("cross_other"))


def first_probability(t) -> dict:
    """Step 18: the softmax of the first row's logits, for the piece it writes, from its logit and the log of
    the softmax's denominator."""
    logits, probs = value(t, at.LOGITS)[0], value(t, at.PROBS)[0]
    top = int(probs.argmax())
    lse = float(logits.max() + np.log(np.exp(logits - logits.max()).sum()))  # ln Σ_u e^{logit_u}, computed stably
    piece = VOCAB.tokens[top]
    q = say("softmax_question", reads=t.target_tokens[0], piece=piece, logit=logits[top], count=len(logits), lse=lse)
    why = say("softmax_why", logit=logits[top], lse=lse, difference=logits[top] - lse, p=probs[top])
    return _number(18, "softmax", q, why, float(probs[top]), 0.01, _cell(at.PROBS, 0, top))


def turns(t) -> dict:
    """Step 19: how many turns of the loop greedy decoding takes for this input."""
    out, n = list(t.output_tokens), len(t.output_tokens)
    probs = value(t, at.PROBS)
    pieces = listed("words", [{"word": tok} for tok in out if tok != EOS])
    q = say("turns_question")
    why = say("turns_why_end" if out[-1] == EOS else "turns_why_limit", pieces=pieces, turns=n)
    return _number(19, "turns", q, why, n, 0, _cell(at.PROBS, n - 1, int(probs[n - 1].argmax())), str(n))


def smoothed_or_plain(t) -> dict:
    """Step 20: for row 0 (always a training row), is the smoothed loss larger than −ln p(reference)?"""
    row = loss_figures(t)["loss_rows"][0]
    smooth, plain = row["loss"], row["plain_loss"]
    key = "smoothed" if smooth > plain + 5e-4 else "plain" if plain > smooth + 5e-4 else "equal"
    q = say("loss_question", reads=row["reads"], reference=row["reference"], p=row["p_reference"])
    why = say("loss_why" if key == "smoothed" else "loss_why_short", plain=plain, smooth=smooth)
    choices = [(k, say(f"loss_{k}")) for k in ("smoothed", "plain", "equal")]
    return _options(20, "loss", q, why, choices, [key], _cell(at.PROBS, 0, row["reference_id"]))


def dropout_scale(t, p: float) -> dict:
    """Step 22: what inverted dropout does to an entry it keeps."""
    v, tok = float(value(t, at.FIRST_PROJ)[0, 0]), t.source_tokens[0]
    ans = v / (1 - p)
    q = say("dropout_question", p=p, token=tok, block=_name(at.FIRST_PROJ), v=v)
    why = say("dropout_why", keep=1 - p, v=v, ans=ans)
    return _number(22, "dropout", q, why, ans, max(0.01, 0.01 * abs(ans)), _cell(at.FIRST_PROJ, 0, 0))


SYMBOLS = {"gamma": "γ", "beta": "β"}


def _symbol(role: str) -> str:
    """W_q → W^Q, b_o → b^O, gamma → γ: a parameter as the article writes it."""
    head, _, tail = role.partition("_")
    return SYMBOLS.get(role, f"{head}^{tail.upper()}" if tail else role)


def station_parameters(params: dict[str, np.ndarray], n_layers: int) -> dict:
    """Step 25: how many parameters the last decoder layer's cross-attention holds."""
    station = at.last_cross(n_layers)
    mine = {k: v for k, v in params.items() if ids.parse(k).station == station}
    total = sum(int(v.size) for v in mine.values())
    q = say("parameters_question", station=_name(station))
    sizes = listed("parameters_sizes", [{"symbol": _symbol(ids.parse(k).role), "size": format_number(v.size, "int")}
                                        for k, v in mine.items()])
    why = say("parameters_why", sizes=sizes, total=format_number(total, "int"))
    first = next(iter(mine))
    return _number(25, "parameters", q, why, total, 0, _cell(first, 0, 0), format_number(total, "int"))


def exercises(t, model: EncoderDecoder) -> list[dict]:
    """Every exercise for trace `t`, in the order of the steps; none for a trace of another layout."""
    if at.SCALED not in {n.id for n in t.nodes}:
        return []
    c, worked = model.cfg, choose_worked(t)  # once: each call scans every head's weights
    return [scale(t, c.d_model), query_peak(t, worked, c.d_k), weights_peak(t, worked), unscaled(t, worked),
            nearest_value(t, worked), relu_zero(t), mask_first(t), cross_first(t, c.n_layers, c.n_heads),
            first_probability(t), turns(t), smoothed_or_plain(t), dropout_scale(t, c.dropout),
            station_parameters(parameters(model), c.n_layers)]
