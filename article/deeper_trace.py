"""Go-deeper figures read off the trace of the reader's input (article/deeper.py): its tokens, their rows of E,
their positional encodings, one attention row and its heads, the decoder's mask, the output's logits at
several temperatures, a LayerNorm's rows, the loss per position and the paths a recurrent network would take.

Rows are counted from 0 and heads and layers from 1, as everywhere on the page."""

from __future__ import annotations

import math

import numpy as np

from article.deeper import Column, Reader, Table
from article.lessons import choose_worked, quoted, softmax
from article.loss import loss_figures
from model import ids
from model.transformer import NORM_EPSILON
from model.vocab import VOCAB

TEMPERATURES = (0.5, 1.0, 2.0)
TOP_LOGITS = 5
PE_COLUMNS = 4  # the first few columns (fast waves) and the last two (the slowest pair)


def tokens(r: Reader) -> list[Table]:
    t, rows = r.trace, []
    for side, label, toks in (("src", "encoder", t.source_tokens), ("tgt", "decoder", t.target_tokens)):
        at = t.node(ids.join(side, "ids")).value.tolist()
        rows += [[f"{label} row {i}", tok, int(n)] for i, (tok, n) in enumerate(zip(toks, at, strict=True))]
    return [Table("tokens", "Your input's tokens and their ids",
                  "The encoder reads the English words and </s>; the decoder reads <s> and the German pieces "
                  "written before each prediction. The model never sees letters, only the ids: a piece has the "
                  "same id wherever it stands, and each id picks one row of E.",
                  [Column("row"), Column("token"), Column("id", "int")], rows)]


def embeddings(r: Reader) -> list[Table]:
    t, e = r.trace, r.params["E"].astype(np.float64)
    sqrt_d = math.sqrt(r.model.cfg.d_model)
    seen: dict[str, list] = {}
    for side, toks in (("src", t.source_tokens), ("tgt", t.target_tokens)):
        at, scaled = t.node(ids.join(side, "ids")).value.tolist(), r.value(ids.join(side, "scaled"))
        for i, tok in enumerate(toks):
            if tok not in seen:
                seen[tok] = [tok, int(at[i]), float(np.linalg.norm(e[at[i]])), float(np.linalg.norm(scaled[i]))]
    lookup = Table("embedding-rows", f"Your tokens' rows of E, and the same rows times √d_model = {sqrt_d:.3f}",
                   "A token's embedding is its row of E, multiplied by √d_model before the position is added: "
                   "every length grows by that same factor. Each token is listed once: wherever it appears, it "
                   "reads the same row.",
                   [Column("token"), Column("id", "int"), Column("length of E[id]", "fixed3"),
                    Column("length of √d·E[id]", "fixed3")], list(seen.values()))
    logits = t.node(ids.join("out", "logits"))
    h, z = r.value(logits.inputs[0]), logits.value.astype(np.float64)
    out_ids = [int(i) for i in t.node(ids.join("out", "tokens")).value.tolist()]
    rows = [[f"row {i}", t.output_tokens[i], float(z[i, k]), float(h[i] @ e[k]), float(abs(z[i, k] - h[i] @ e[k]))]
            for i, k in enumerate(out_ids)]
    tied = Table("tied-output", "The same matrix at the output: each written piece's logit",
                 "The output layer multiplies each decoder row h by Eᵀ, so a piece's logit is h times that piece's "
                 "row of E, the very row the embedding looks up: the two columns agree, up to the rounding of "
                 "32-bit floats (the last column).",
                 [Column("decoder row"), Column("writes"), Column("logit in the trace", "fixed3"),
                  Column("h · E[writes]", "fixed3"), Column("difference", "sig2")], rows)
    return [lookup, tied]


def positions(r: Reader) -> list[Table]:
    t = r.trace
    pe = max((r.value(ids.join(s, "pe")) for s in ("src", "tgt")), key=len)  # the same table; the longer
    d = pe.shape[1]
    shown = [*range(PE_COLUMNS), d - 2, d - 1]
    src, tgt = list(t.source_tokens), list(t.target_tokens)
    rows = [[f"position {p}", src[p] if p < len(src) else "", tgt[p] if p < len(tgt) else "",
             *(float(pe[p, c]) for c in shown), float(np.linalg.norm(pe[p]))] for p in range(len(pe))]
    return [Table("pe-rows", f"The positional-encoding rows of your positions (columns {', '.join(map(str, shown))} "
                  f"of {d})",
                  "Columns 2i and 2i + 1 are the sine and the cosine of the position at one speed: the first pair "
                  "turns fast from row to row, the last pair hardly moves across a sentence. The row depends on the "
                  "position only, not on the token, and every row has the same length √(d/2).",
                  [Column("position"), Column("encoder token"), Column("decoder token"),
                   *(Column(f"PE col {c}", "fixed3") for c in shown), Column("row length", "fixed3")], rows)]


def _worked(r: Reader) -> tuple[str, int, int]:
    """The sub-layer, head and row the article works through (steps 6–9), chosen by article/lessons.py."""
    c = choose_worked(r.trace)
    return c["station"], c["head"], c["row"]


def attention_row(r: Reader) -> list[Table]:
    station, head, row = _worked(r)
    q, k = (r.value(ids.head_slice_id(ids.join(station, m), head)) for m in "qk")
    scores, weights = (r.value(ids.head_id(station, head, role))[row] for role in ("scores", "weights"))
    toks = list(r.trace.source_tokens)
    dots = q[row] @ k.T
    plain = softmax(dots)  # the same row without the 1/√d_k scale
    rows = [[tok, float(dots[j]), float(scores[j]), float(weights[j]), float(plain[j])] for j, tok in enumerate(toks)]
    rows.append(["sum", None, None, float(weights.sum()), float(plain.sum())])
    where = ids.parse(ids.head_id(station, head, "weights")).reader_name()
    return [Table("attention-row", f"{where[:1].upper()}{where[1:]}: the row of {quoted(toks[row])} "
                  f"(row {row}), the one the article works through",
                  "A row's scores are its query's dot products with every key, divided by √d_k; the softmax turns "
                  "them into weights that are positive, sum to 1 and keep the scores' order. Without the division "
                  "(the last column) the differences between scores are √d_k times larger and the largest weight "
                  "grows: the softmax heads for a hard choice, where its gradient vanishes.",
                  [Column("key"), Column("q · k", "fixed3"), Column("score q · k / √d_k", "fixed3"),
                   Column("weight", "fixed3", bar=True), Column("weight without ÷ √d_k", "fixed3", bar=True)],
                  rows)]


def heads_of_row(r: Reader) -> list[Table]:
    station, _, row = _worked(r)
    toks, n_heads = list(r.trace.source_tokens), r.model.cfg.n_heads
    rows = []
    for h in range(n_heads):
        w = r.value(ids.head_id(station, h, "weights"))[row]
        rows.append([f"head {h + 1}", *(float(x) for x in w), toks[int(w.argmax())]])
    where = ids.parse(station).reader_name()
    return [Table("heads-of-row", f"The row of {quoted(toks[row])} (row {row}) in each head of {where}",
                  "One position asks one question per head: each head's row is a softmax of its own and sums to 1, "
                  "so different heads can rest on different words at once.",
                  [Column("head"), *(Column(f"key {j}: {tok}", "fixed3", bar=True) for j, tok in enumerate(toks)),
                   Column("rests most on")], rows)]


def causal_mask(r: Reader) -> list[Table]:
    t = r.trace
    mask = t.node(ids.join("dec", "mask")).value.astype(bool)
    station = ids.sublayer_id("dec", 0, "self")
    w = r.value(ids.head_id(station, 0, "weights"))
    toks = list(t.target_tokens)
    rows = [[f"row {i}: {tok}", *(float(w[i, j]) if mask[i, j] else "masked" for j in range(len(toks))),
             float(w[i][mask[i]].sum())] for i, tok in enumerate(toks)]
    return [Table("decoder-mask", "Your decoder rows under the mask: decoder 1 · masked self-attention · head 1",
                  "Row i may read positions 0 to i only. Every cell above the diagonal is masked (its score set to "
                  "−∞ before the softmax) and gets weight exactly 0, so the weights on the earlier positions and "
                  "the row's own sum to 1.",
                  [Column("row reads"), *(Column(f"{j}: {tok}", "fixed3", bar=True) for j, tok in enumerate(toks)),
                   Column("sum", "fixed3")], rows)]


def temperatures(r: Reader) -> list[Table]:
    t = r.trace
    probs, logits = r.value(ids.join("out", "probs")), r.value(ids.join("out", "logits"))
    row = int(probs.max(-1).argmin())  # the least certain choice: the most interesting row
    z = logits[row]
    top = np.argsort(-z, kind="stable")[:TOP_LOGITS]
    by_t = [softmax(z / temp) for temp in TEMPERATURES]
    rows = [[VOCAB.tokens[int(k)], float(z[k]), *(float(p[k]) for p in by_t)] for k in top]
    return [Table("temperatures", f"Decoder row {row} (reads {quoted(t.target_tokens[row])}, the least certain choice "
                  f"of your input): its {TOP_LOGITS} largest logits and their probabilities",
                  "Dividing the logits by a temperature T before the softmax keeps their order but changes the "
                  "spread: below 1 the top piece takes more, above 1 the rest take more. At T = 1 these are the "
                  "model's own probabilities.",
                  [Column("piece"), Column("logit", "fixed3"),
                   *(Column(f"p at T = {temp:g}", "fixed3", bar=True) for temp in TEMPERATURES)], rows)]


def _tidy(x: float) -> float:
    """A mean that is zero up to rounding, printed as 0 rather than −0.000."""
    return 0.0 if abs(x) < 5e-7 else x


def layer_norm(r: Reader) -> list[Table]:
    station = ids.sublayer_id("enc", 0, "self")
    s, out = r.value(ids.join(station, "sum")), r.value(ids.join(station, "ln"))
    mu, var = s.mean(-1, keepdims=True), s.var(-1, keepdims=True)
    normed = (s - mu) / np.sqrt(var + NORM_EPSILON)
    rows = [[tok, float(s[i].mean()), float(s[i].std()), _tidy(float(normed[i].mean())), float(normed[i].std()),
             float(out[i].mean()), float(out[i].std())] for i, tok in enumerate(r.trace.source_tokens)]
    return [Table("layernorm-rows", "Your rows through encoder 1's first LayerNorm: x + Attention(x), normalised, "
                  "then γ and β",
                  "Each row of the sum is shifted and scaled on its own: after the normalisation every row has mean "
                  "0 and standard deviation 1 (ε = 10⁻⁵ keeps it a hair below 1, too little to show here), whatever it "
                  "had before; the "
                  "learned γ and β then give the rows the output's mean and spread.",
                  [Column("row"), Column("sum: mean", "fixed3"), Column("sum: std", "fixed3"),
                   Column("normalised: mean", "fixed3"), Column("normalised: std", "fixed3"),
                   Column("output: mean", "fixed3"), Column("output: std", "fixed3")], rows)]


def losses(r: Reader) -> list[Table]:
    f = loss_figures(r.trace)
    rows = [[f"row {x['row']}", x["reads"], x["reference"] or "–", x.get("p_reference"),
             x.get("plain_loss"), x.get("loss")] for x in f["loss_rows"]]
    rows.append(["floor H(q)", "", "", None, None, f["loss_floor"]])
    return [Table("position-losses", "Your loss, position by position",
                  "A row's loss −ln p(reference) is how surprised the model is by the right piece: near 0 where p is "
                  "near 1. The label-smoothed target spreads ε over every piece, so the smoothed loss cannot fall "
                  "below the floor H(q), even for a perfect prediction. A row that reads a piece the reference does "
                  "not have is no training row, and has no loss (–).",
                  [Column("decoder row"), Column("reads"), Column("reference"),
                   Column("p(reference)", "fixed3", bar=True), Column("−ln p", "fixed3"),
                   Column("smoothed loss", "fixed3")], rows)]


def path_lengths(r: Reader) -> list[Table]:
    t, cfg = r.trace, r.model.cfg
    last = cfg.n_layers - 1
    station = ids.sublayer_id("dec", last, "cross")
    cross = np.mean([r.value(ids.head_id(station, h, "weights")) for h in range(cfg.n_heads)], axis=0)
    toks, n = list(t.source_tokens), len(t.source_tokens)
    rows = [[f"{i}: {tok}", n - i, 1, float(cross[0, i])] for i, tok in enumerate(toks)]
    paths = Table("path-lengths", "How far each of your words travels to the decoder's first row (its weights: "
                  f"decoder {last + 1} · cross-attention, the mean of the heads)",
                  "A recurrent encoder hands a word on from position to position until its last state reaches the "
                  "decoder, so the first word travels furthest; the Transformer's cross-attention reads every word's "
                  "memory row in one step, and the weights show the first decoder row doing so.",
                  [Column("source word"), Column("recurrent: hand-offs", "int"),
                   Column("Transformer: hand-offs", "int"),
                   Column("decoder row 0's weight on it", "fixed3", bar=True)], rows)
    steps = Table("sequential-steps", "Steps that must run one after another for your input",
                  "A recurrent encoder needs one step per token; the Transformer's encoder needs one per layer, "
                  "each over all positions at once. Both decoders still write one piece at a time.",
                  [Column("steps for"), Column("recurrent", "int"), Column("Transformer", "int")],
                  [["encoding", n, cfg.n_layers], ["decoding", len(t.target_tokens), len(t.target_tokens)]])
    return [paths, steps]
