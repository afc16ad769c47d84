"""The per-input numbers that the article's teaching steps quote (issue 14, parts 2–4), computed from
a trace's own tensors; article/derived.py's `derived_figures` adds them to the trace's `derived` block.

The worked attention row (steps 6–9) is chosen from the trace by one rule (`choose_worked`) and used
twice: for these numbers, and for the cells the stage lights and the card it draws (scene/worked.py
reads `choose_worked` and `worked_blocks`), so the text and the picture cannot drift apart. Rows are
counted from 0, as everywhere on the page; heads are named from 1.
"""

from __future__ import annotations

import numpy as np

from article import live_nodes as at
from article.sentences import listed, say
from model.vocab import EOS

WORKED_STATION = at.WORKED_STATION  # the sub-layer steps 6–9 show on the stage: encoder layer 1's self-attention


def worked_blocks(station: str = WORKED_STATION, head: int = 0) -> dict[str, str]:
    """The trace nodes of the worked row: the head's columns of Q, K and V, its scores, weights and output."""
    p = f"{station}.h{head}"
    return {"q": f"{station}.q.h{head}", "k": f"{station}.k.h{head}", "v": f"{station}.v.h{head}",
            "scores": f"{p}.scores", "weights": f"{p}.weights", "out": f"{p}.out", "v_full": f"{station}.v"}


def head_weight_ids(t, station: str = WORKED_STATION) -> list[str]:
    """The weights nodes of every head of a self-attention sub-layer, head by head."""
    return sorted((n.id for n in t.nodes if n.id.startswith(f"{station}.h") and n.id.endswith(".weights")),
                  key=lambda i: int(i[len(station) + 2:].split(".")[0]))


def head_weights(t, station: str = WORKED_STATION) -> np.ndarray:
    """Every head's weights of a self-attention sub-layer, stacked: [head, row, key]."""
    return np.stack([t.node(i).value for i in head_weight_ids(t, station)]).astype(np.float64)


def choose_worked(t) -> dict:
    """Which row steps 6–9 work through: of every row of every head of encoder layer 1's self-attention,
    the row whose largest weight falls on another word of the input (not on the row's own position, not on
    </s>), and of those the one whose largest weight is largest. Ties go to the first head, then the first
    row. If no row rests on another word, the row with the largest weight of all (`rule`: "word" or "any")."""
    w, toks = head_weights(t), list(t.source_tokens)
    top = w.argmax(axis=-1)  # [head, row]: each row's largest weight (the first, if tied)
    peak = w.max(axis=-1)
    rows = np.arange(w.shape[1])[None, :]
    word = (top != rows) & (np.array([tok != EOS for tok in toks])[top])
    rule = "word" if word.any() else "any"
    score = np.where(word, peak, -1.0) if rule == "word" else peak
    h, r = np.unravel_index(int(score.argmax()), score.shape)  # row-major: the first head, then the first row
    return {"station": WORKED_STATION, "head": int(h), "row": int(r), "key": int(top[h, r]), "rule": rule,
            "rows": int(w.shape[0] * w.shape[1]), "heads": int(w.shape[0])}


def num(x: float, digits: int = 3) -> str:
    """A number as the live sentences print it: fixed digits, a true minus sign."""
    return f"{x:.{digits}f}".replace("-", "\u2212")


def quoted(token: str) -> str:
    return f"“{token}”"


def pairs(tokens: list[str], values, digits: int = 3) -> str:
    assert digits in (2, 3), digits  # the table's two lists of pairs
    return listed("pairs" if digits == 3 else "pairs_2",
                  [{"token": tok, "value": float(v)} for tok, v in zip(tokens, values, strict=True)])


def _vec(values: np.ndarray) -> str:
    return listed("vector", [{"x": float(x)} for x in values])


def softmax(row: np.ndarray) -> np.ndarray:
    e = np.exp(row - row.max())
    return e / e.sum()


def row_norms(a: np.ndarray) -> np.ndarray:
    return np.linalg.norm(a.astype(np.float64), axis=-1)


def _reason(c: dict, toks: list[str], top_weight: float) -> str:
    """Why this row: the rule, said for this input."""
    return say("reason_any" if c["rule"] == "any" else "reason_word", rows=c["rows"], heads=c["heads"],
               tokens=len(toks), row_token=toks[c["row"]], row=c["row"], weight=top_weight, key_token=toks[c["key"]])


def _claim(toks: list[str], weights: np.ndarray, v: np.ndarray, out: np.ndarray) -> str:
    """Step 9's sentence about the output row, true for this input: which token took most weight, and which
    value row the output lies nearest (their distances computed)."""
    top = int(weights.argmax())
    dist = np.linalg.norm(v - out[None, :], axis=-1)
    near = int(dist.argmin())
    head = say("claim_head", token=toks[top], weight=float(weights[top]))
    if near == top:
        others = [j for j in range(len(toks)) if j != top]
        nxt = min(others, key=lambda j: dist[j]) if others else None
        tail = say("claim_next", token=toks[nxt], distance=float(dist[nxt])) if nxt is not None else ""
        return say("claim_nearest", head=head, token=toks[top], distance=float(dist[top]), tail=tail)
    return say("claim_elsewhere", head=head, distance=float(dist[top]), token=toks[top], near_token=toks[near],
               near_distance=float(dist[near]), rest=1 - float(weights[top]))


def worked_row(t) -> dict:
    """Step 6–9's row: the two vectors of one query–key pair and their product, its scores and softmax
    weights, the same scores without the 1/√d_k scale, and the weighted sum of the value rows (the
    head's output row), with what that sum means for this input."""
    c = choose_worked(t)
    ids, r, j = worked_blocks(c["station"], c["head"]), c["row"], c["key"]
    scores_node = t.node(ids["scores"])
    scores = scores_node.value[r].astype(np.float64)
    weights = t.node(ids["weights"]).value[r].astype(np.float64)
    q = t.node(ids["q"]).value[r].astype(np.float64)
    k = t.node(ids["k"]).value[j].astype(np.float64)
    v = t.node(ids["v"]).value.astype(np.float64)
    out = t.node(ids["out"]).value[r].astype(np.float64)
    alpha = float(scores_node.attrs.get("alpha", 1.0))  # the 1/√d_k the scores were multiplied by
    unscaled = softmax(scores / alpha)
    toks = list(t.source_tokens)
    top = int(weights.argmax())
    return {
        "worked_head": c["head"] + 1,  # heads are named from 1 on the stage ("head 1")
        "worked_row": r,
        "worked_token": toks[r],
        "worked_q_col": int(t.node(ids["q"]).attrs["starts"][0]),  # the head's first column of Q (step 6's cell)
        "worked_reason": _reason(c, toks, float(weights[top])),
        "worked_key_token": toks[j],
        "worked_q": _vec(q),
        "worked_k": _vec(k),
        "worked_qk_products": _vec(q * k),
        "worked_qk_dot": float(q @ k),
        "worked_qk_score": float(scores[j]),
        "worked_scores": pairs(toks, scores),
        "worked_weights": pairs(toks, weights),
        "worked_unscaled_weights": pairs(toks, unscaled),
        "worked_top_token": toks[top],
        "worked_top_weight": float(weights[top]),
        "worked_unscaled_top_weight": float(unscaled.max()),
        "worked_blend": listed("blend", [{"weight": float(w), "token": tok}
                                         for tok, w in zip(toks, weights, strict=True)]),
        "worked_output": _vec(out),
        "worked_v_top": _vec(v[top]),
        "worked_distances": pairs(toks, np.linalg.norm(v - out[None, :], axis=-1), 2),
        "worked_claim": _claim(toks, weights, v, out),
    }


def decoder_pairs(t) -> str:
    """Step 14: what each decoder row has read so far (<s> and the pieces before it) → what it writes."""
    rows, out = list(t.target_tokens), list(t.output_tokens)
    return listed("decoder_pairs", [{"context": listed("words", [{"word": w} for w in rows[:i + 1]]), "writes": out[i]}
                                    for i in range(len(out))])


UND = "und"  # the German piece that joins a unit to its tens: ein und zwanzig
UNITS_BEFORE_UND = {"eins": "one", "ein": "one", "zwei": "two", "drei": "three", "vier": "four", "fünf": "five",
                    "sechs": "six", "sieben": "seven", "acht": "eight", "neun": "nine"}


def last_cross_mean(t) -> np.ndarray:
    """The last decoder layer's cross-attention weights, averaged over its heads (rows: decoder rows)."""
    ids = sorted(n.id for n in t.nodes if n.id.endswith(".weights") and ".cross.h" in n.id)
    last = max(int(i.split(".")[1]) for i in ids)
    heads = [t.node(i).value for i in ids if i.startswith(f"dec.{last}.")]
    return np.mean(heads, axis=0).astype(np.float64)


def reordering(t) -> dict:
    """Step 16, computed for the input: where each row that writes *und* rests (its two largest head-averaged
    weights in the last layer), and how many units written before an *und* rest on their English word."""
    cross, src, out, rows = last_cross_mean(t), list(t.source_tokens), list(t.output_tokens), list(t.target_tokens)
    splits, found, units = [], 0, 0
    for r, piece in enumerate(out):
        if piece == UND:
            a, b = np.argsort(cross[r])[::-1][:2]
            splits.append({"row": r, "reads": rows[r], "a": src[a], "wa": float(cross[r][a]), "b": src[b],
                           "wb": float(cross[r][b])})
        if r + 1 < len(out) and out[r + 1] == UND and piece in UNITS_BEFORE_UND:
            units += 1
            found += src[int(cross[r].argmax())] == UNITS_BEFORE_UND[piece]
    return {"und_rows": listed("und_rows", splits) if splits else say("und_none"),
            "units_on_their_word": say("units_found", found=found, units=units) if units else say("units_none")}


def teaching_figures(t) -> dict:
    """Every teaching number for trace `t`. The embedding and LayerNorm figures are of the paper's layout;
    a trace without those tensors (the modern recipe: rotary positions, RMSNorm before each sub-layer)
    gets None for them, since the article's sentences do not describe it."""
    ids = {n.id for n in t.nodes}
    hidden = t.node(at.FFN_HIDDEN).value
    active = (hidden > 0).sum(axis=-1)  # units a ReLU lets through, per token
    sum_node = t.node(at.FIRST_SUM)
    x, sub = (t.node(i).value for i in sum_node.inputs)  # the sub-layer's input and its output
    figures = {
        **worked_row(t),
        **reordering(t),
        "decoder_pairs": decoder_pairs(t),
        "row_reads_writes": [say("reads_writes", reads=a, writes=b)
                             for a, b in zip(t.target_tokens, t.output_tokens, strict=True)],
        "ffn_active_units": float(active.mean()),
        "ffn_active_min": int(active.min()),
        "ffn_active_max": int(active.max()),
        "attn_input_norm": float(row_norms(x).mean()),
        "attn_output_norm": float(row_norms(sub).mean()),
    }
    if at.SCALED in ids:  # the paper's embedding: √d·E[token] + PE
        scaled, pe = t.node(at.SCALED).value, t.node(t.node(at.X0).inputs[1]).value
        figures["scaled_row_norms"] = pairs(list(t.source_tokens), row_norms(scaled), 2)
        figures["pe_row_norm"] = round(float(row_norms(pe).mean()), 4)  # float32 noise would differ per input
    if at.FIRST_LN in ids:  # post-LN: the first sub-layer's LayerNorm output
        ln_row = t.node(at.FIRST_LN).value[0].astype(np.float64)
        figures["ln_row_mean"] = float(ln_row.mean())
        figures["ln_row_std"] = float(ln_row.std())
    return figures
