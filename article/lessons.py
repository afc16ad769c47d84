"""The per-input numbers that the article's teaching steps quote (issue 14, parts 2–4), computed from
a trace's own tensors; article/derived.py's `derived_figures` adds them to the trace's `derived` block.

The worked attention row (steps 7–9) is one definition used twice: these numbers, and the cells the
scene frames on the stage for step 9 (scene/layout.py reads `WORKED` and `worked_blocks`), so the text
and the picture cannot drift apart. Rows are counted from 0, as everywhere on the page.
"""

from __future__ import annotations

import numpy as np

# encoder layer 1's self-attention, head 1, the first source token's row (the tens word of "forty two")
WORKED = {"station": "enc.0.self", "head": 0, "row": 0}


def worked_blocks(station: str = WORKED["station"], head: int = WORKED["head"]) -> dict[str, str]:
    """The trace nodes of the worked row: the head's scores, weights, values (its slice of V) and output."""
    p = f"{station}.h{head}"
    return {"scores": f"{p}.scores", "weights": f"{p}.weights", "v": f"{station}.v.h{head}", "out": f"{p}.out",
            "v_full": f"{station}.v"}


def _num(x: float, digits: int = 3) -> str:
    return f"{x:.{digits}f}".replace("-", "\u2212")


def _pairs(tokens: list[str], values: np.ndarray, digits: int = 3) -> str:
    return ", ".join(f"{tok} {_num(float(v), digits)}" for tok, v in zip(tokens, values, strict=True))


def softmax(row: np.ndarray) -> np.ndarray:
    e = np.exp(row - row.max())
    return e / e.sum()


def row_norms(a: np.ndarray) -> np.ndarray:
    return np.linalg.norm(a.astype(np.float64), axis=-1)


def worked_row(t) -> dict:
    """Step 7–9's row: its scores, softmax weights, the same scores without the 1/√d_k scale, and the
    weighted sum of the value rows (the head's output row)."""
    ids, r = worked_blocks(), WORKED["row"]
    scores_node = t.node(ids["scores"])
    scores = scores_node.value[r].astype(np.float64)
    weights = t.node(ids["weights"]).value[r].astype(np.float64)
    v = t.node(ids["v"]).value.astype(np.float64)
    out = t.node(ids["out"]).value[r].astype(np.float64)
    alpha = float(scores_node.attrs.get("alpha", 1.0))  # the 1/√d_k the scores were multiplied by
    unscaled = softmax(scores / alpha)
    toks = list(t.source_tokens)
    top = int(weights.argmax())
    return {
        "worked_head": WORKED["head"] + 1,  # heads are named from 1 on the stage ("head 1")
        "worked_row": r,
        "worked_token": toks[r],
        "worked_scores": _pairs(toks, scores),
        "worked_weights": _pairs(toks, weights),
        "worked_unscaled_weights": _pairs(toks, unscaled),
        "worked_top_token": toks[top],
        "worked_top_weight": float(weights[top]),
        "worked_unscaled_top_weight": float(unscaled.max()),
        "worked_blend": " + ".join(f"{_num(float(w))}·V[{tok}]" for tok, w in zip(toks, weights, strict=True)),
        "worked_output": " ".join(_num(float(x)) for x in out),
        "worked_v_top": " ".join(_num(float(x)) for x in v[top]),
    }


def decoder_pairs(t) -> str:
    """Step 14: what each decoder row has read so far (<s> and the pieces before it) → what it writes."""
    rows, out = list(t.target_tokens), list(t.output_tokens)
    return "; ".join(f"{' '.join(rows[:i + 1])} → {out[i]}" for i in range(len(out)))


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
        if piece == "und":
            a, b = np.argsort(cross[r])[::-1][:2]
            splits.append(f"row {r} (reads {rows[r]}): {src[a]} {_num(cross[r][a])}, {src[b]} {_num(cross[r][b])}")
        if r + 1 < len(out) and out[r + 1] == "und" and piece in UNITS_BEFORE_UND:
            units += 1
            found += src[int(cross[r].argmax())] == UNITS_BEFORE_UND[piece]
    return {"und_rows": "; ".join(splits) or "none (this input has no und)",
            "units_on_their_word": f"{found} of {units}" if units else "none (no unit comes before und here)"}


def teaching_figures(t) -> dict:
    """Every teaching number for trace `t`. The embedding and LayerNorm figures are of the paper's layout;
    a trace without those tensors (the modern recipe: rotary positions, RMSNorm before each sub-layer)
    gets None for them, since the article's sentences do not describe it."""
    ids = {n.id for n in t.nodes}
    hidden = t.node("enc.0.ffn.hidden").value
    active = (hidden > 0).sum(axis=-1)  # units a ReLU lets through, per token
    sum_node = t.node("enc.0.self.sum")
    x, sub = (t.node(i).value for i in sum_node.inputs)  # the sub-layer's input and its output
    figures = {
        **worked_row(t),
        **reordering(t),
        "decoder_pairs": decoder_pairs(t),
        "row_reads_writes": [f"{a} → {b}" for a, b in zip(t.target_tokens, t.output_tokens, strict=True)],
        "ffn_active_units": float(active.mean()),
        "ffn_active_min": int(active.min()),
        "ffn_active_max": int(active.max()),
        "attn_input_norm": float(row_norms(x).mean()),
        "attn_output_norm": float(row_norms(sub).mean()),
    }
    if "src.scaled" in ids:  # the paper's embedding: √d·E[token] + PE
        scaled, pe = t.node("src.scaled").value, t.node(t.node("src.x0").inputs[1]).value
        figures["scaled_row_norms"] = _pairs(list(t.source_tokens), row_norms(scaled), 2)
        figures["pe_row_norm"] = round(float(row_norms(pe).mean()), 4)  # float32 noise would differ per input
    if "enc.0.self.ln" in ids:  # post-LN: the first sub-layer's LayerNorm output
        ln_row = t.node("enc.0.self.ln").value[0].astype(np.float64)
        figures["ln_row_mean"] = float(ln_row.mean())
        figures["ln_row_std"] = float(ln_row.std())
    return figures
