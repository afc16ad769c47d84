"""Step 20's picture, computed for the reader's input: the smoothed target q_t of each output position
beside the model's p_t for that row, and the position's loss (§5.4 and model/train.py's
`smoothed_loss`, PyTorch's `label_smoothing`: q_t(v) = (1 − ε)·[v = y_t] + ε/V over all V entries).

The trace is a greedy inference, while training feeds the decoder the reference. Row t of the trace reads
<s> and the model's own first t pieces; while those equal the reference's, the row is exactly the row
training computes (dropout aside), so its loss is the training loss. From the first row whose input
departs from the reference on, it is not: those rows are listed with no loss (`forced` false), and the
sums cover only the rows that read the reference. The stage draws these rows (static/stage/lossview.js)."""

from __future__ import annotations

import numpy as np

from article import live_nodes as at
from article.sentences import say
from model.train import TrainConfig
from model.vocab import VOCAB

EPSILON = TrainConfig().label_smoothing  # ε_ls of the shipped recipe (training_log.json says the same)


def smoothed_target(reference_id: int, vocab_size: int, eps: float = EPSILON) -> np.ndarray:
    """q over the vocabulary for one position: 1 − ε + ε/V on the reference piece, ε/V elsewhere."""
    q = np.full(vocab_size, eps / vocab_size)
    q[reference_id] += 1 - eps
    return q


def loss_figures(t, eps: float = EPSILON) -> dict:
    """Per output row of the trace: the reference piece, q on it and elsewhere, p of the reference and of
    the piece written, −Σ_v q_v ln p_v and −ln p(reference); and the sum and mean over the rows that read
    the reference."""
    probs = t.node(at.PROBS).value.astype(np.float64)
    n_rows, vocab = probs.shape
    reference = VOCAB.target_tokens(t.number)  # the German pieces, then </s>
    out = list(t.output_tokens)
    rows, forced = [], 0
    for r in range(n_rows):
        reads_reference = r < len(reference) and out[:r] == reference[:r]
        row = {"row": r, "reads": t.target_tokens[r], "writes": out[r], "forced": reads_reference,
               "reference": reference[r] if reads_reference else None, "p_written": float(probs[r].max())}
        if reads_reference:
            y = VOCAB.ids([reference[r]])[0]
            q = smoothed_target(y, vocab, eps)
            row.update(reference_id=y, p_reference=float(probs[r, y]), loss=float(-(q * np.log(probs[r])).sum()),
                       plain_loss=float(-np.log(probs[r, y])))
            forced += 1
        rows.append(row)
    done = [x for x in rows if x["forced"]]
    total, plain = sum(x["loss"] for x in done), sum(x["plain_loss"] for x in done)
    return {
        "loss_rows": rows,
        "loss_q_reference": 1 - eps + eps / vocab, "loss_q_other": eps / vocab,
        "loss_floor": _entropy(smoothed_target(0, vocab, eps)),
        "loss_reference_length": len(reference), "loss_forced_rows": forced,
        "loss_sum": total, "loss_mean": total / max(forced, 1),
        "plain_loss_sum": plain, "plain_loss_mean": plain / max(forced, 1),
        "loss_departs": _departure(rows, len(reference)),
    }


def _entropy(q: np.ndarray) -> float:
    """H(q) = −Σ q ln q: the least −Σ q ln p can be (reached at p = q), what a row's smoothed loss sits above."""
    return float(-(q * np.log(q)).sum())


def _departure(rows: list[dict], n_reference: int) -> str:
    """What step 20 says about the rows: all training rows, or where the greedy output left the reference."""
    first = next((x["row"] for x in rows if not x["forced"]), None)
    if first is None and len(rows) == n_reference:
        return say("departs_never", rows=len(rows))
    if first is None:
        return say("departs_stopped", rows=len(rows), reference=n_reference, last=len(rows) - 1)
    return say("departs_at", row=first)
