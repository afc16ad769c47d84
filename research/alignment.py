"""Does last-layer cross-attention align German pieces with their English counterparts?

Gold alignments follow from the grammar (model/numbers.py): each German piece comes from one
English word, except "und", which has none. 42 "forty two" -> "zwei und vierzig": zwei->two,
vierzig->forty (both *reordered*: German puts the ones first); "ein hundert" -> "one hundred";
teens map to teens; "tausend" -> "thousand". Every other aligned piece is *monotone*.

Which decoder row belongs to which piece: the decoder reads `<s> y_1 … y_m` and row i predicts
y_{i+1} (row 0 reads `<s>` and predicts the first piece). We align row i with the piece it
*predicts*, target[i]: that row's cross-attention gathers what the model needs to write the piece.
The other convention (row i+1, the row that reads the piece) is scored too, as a check.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from model.data import make_batch
from model.numbers import DE_ONES, DE_TEENS, DE_TENS, EN_ONES, EN_TEENS, EN_TENS
from model.transformer import EncoderDecoder

KINDS = ("monotone", "reordered")
MAX_OFFSET = 12  # relative-position baseline: offsets −12..12 are tried


@dataclass(frozen=True)
class Alignment:
    english: list[str]
    german: list[str]
    source: list[int | None]  # per German piece: index of its English word, None for "und"
    kind: list[str]  # per German piece: "monotone", "reordered" or "none"


def gold_alignment(n: int) -> Alignment:
    """The English words, the German pieces, and which word each piece translates."""
    en: list[str] = []
    de: list[tuple[str, int | None, str]] = []
    if n == 0:
        return Alignment(["zero"], ["null"], [0], ["monotone"])
    thousands, rest = divmod(n, 1000)
    if thousands:
        _below_1000(thousands, en, de, final=False)
        en.append("thousand")
        de.append(("tausend", len(en) - 1, "monotone"))
    if rest:
        _below_1000(rest, en, de, final=True)
    return Alignment(en, [p for p, _, _ in de], [s for _, s, _ in de], [k for _, _, k in de])


def _below_1000(n: int, en: list[str], de: list, final: bool) -> None:
    hundreds, rest = divmod(n, 100)
    if hundreds:
        en += [EN_ONES[hundreds], "hundred"]
        de += [
            ("ein" if hundreds == 1 else DE_ONES[hundreds], len(en) - 2, "monotone"),
            ("hundert", len(en) - 1, "monotone"),
        ]
    tens, ones = divmod(rest, 10)
    if 10 <= rest < 20:
        en.append(EN_TEENS[rest - 10])
        de.append((DE_TEENS[rest - 10], len(en) - 1, "monotone"))
    elif tens and ones:  # "forty two" -> "zwei und vierzig"
        en += [EN_TENS[tens], EN_ONES[ones]]
        de += [
            ("ein" if ones == 1 else DE_ONES[ones], len(en) - 1, "reordered"),
            ("und", None, "none"),
            (DE_TENS[tens], len(en) - 2, "reordered"),
        ]
    elif ones:
        en.append(EN_ONES[ones])
        de.append(("eins" if ones == 1 and final else ("ein" if ones == 1 else DE_ONES[ones]), len(en) - 1, "monotone"))
    elif tens:
        en.append(EN_TENS[tens])
        de.append((DE_TENS[tens], len(en) - 1, "monotone"))


def aligned_rows(n: int, convention: str = "predicts") -> list[tuple[int, int, str]]:
    """(decoder row, gold source position, kind) for every German piece with a counterpart.

    "predicts": row i is the row whose output is piece i (it reads piece i−1, or <s> for i = 0).
    "reads": row i + 1, the row whose input is piece i.
    """
    gold = gold_alignment(n)
    shift = {"predicts": 0, "reads": 1}[convention]
    return [(i + shift, s, k) for i, (s, k) in enumerate(zip(gold.source, gold.kind)) if s is not None]


@torch.no_grad()
def cross_attention(model: EncoderDecoder, numbers: list[int]) -> list[torch.Tensor]:
    """Teacher-forced cross-attention weights of every decoder layer, each (B, h, T_tgt, T_src)."""
    model.eval()
    src, dec_in, _ = make_batch(numbers)
    model(src, dec_in)
    return [layer.src_attn.weights.clone() for layer in model.decoder_layers]


@torch.no_grad()
def alignment_scores(model: EncoderDecoder, numbers: list[int]) -> dict:
    """Per layer and head: how often the row's largest weight falls on the gold English word."""
    weights = cross_attention(model, numbers)
    out: dict = {"layers": [], "baselines": relative_position_baselines(numbers)}
    for layer, w in enumerate(weights):
        peaks = w.argmax(-1)  # (B, h, T_tgt): the source position each row attends to most
        for convention in ("predicts", "reads"):
            hits = {k: torch.zeros(w.shape[1]) for k in KINDS}
            any_hits = {k: 0 for k in KINDS}
            counts = {k: 0 for k in KINDS}
            for b, n in enumerate(numbers):
                for row, s, kind in aligned_rows(n, convention):
                    got = peaks[b, :, row] == s  # (h,)
                    hits[kind] += got.float()
                    any_hits[kind] += int(got.any())
                    counts[kind] += 1
            out["layers"].append(
                {
                    "layer": layer,
                    "convention": convention,
                    "counts": counts,
                    "heads": [
                        {
                            "head": h,
                            **{k: (hits[k][h].item() / counts[k] if counts[k] else None) for k in KINDS},
                            "all": (sum(hits[k][h].item() for k in KINDS) / max(sum(counts.values()), 1)),
                        }
                        for h in range(w.shape[1])
                    ],
                    "any_head": {k: (any_hits[k] / counts[k] if counts[k] else None) for k in KINDS}
                    | {"all": sum(any_hits.values()) / max(sum(counts.values()), 1)},
                }
            )
    return out


def relative_position_baselines(numbers: list[int]) -> dict:
    """Attending by relative position alone: row i peaks on source position i + c (clipped).

    For each offset c the hit rates are counted; we report the best single offset (fitted to these
    very numbers, so an upper bound on what a fixed-offset head can do) and the best per kind, and
    the length-proportional diagonal round(i·(n−1)/(m−1)).
    """
    per_offset = {c: {k: 0 for k in KINDS} for c in range(-MAX_OFFSET, MAX_OFFSET + 1)}
    diagonal = {k: 0 for k in KINDS}
    counts = {k: 0 for k in KINDS}
    for n in numbers:
        gold = gold_alignment(n)
        n_src, n_tgt = len(gold.english) + 1, len(gold.german) + 1  # </s> on both sides
        for row, s, kind in aligned_rows(n):
            counts[kind] += 1
            for c, hits in per_offset.items():
                hits[kind] += int(min(max(row + c, 0), n_src - 1) == s)
            diagonal[kind] += int(round(row * (n_src - 1) / max(n_tgt - 1, 1)) == s)
    total = sum(counts.values())

    def rates(hits: dict) -> dict:
        return {k: hits[k] / counts[k] if counts[k] else None for k in KINDS} | {
            "all": sum(hits.values()) / max(total, 1)
        }

    best = max(per_offset, key=lambda c: sum(per_offset[c].values()))
    return {
        "counts": counts,
        "best_offset": best,
        "best_offset_rates": rates(per_offset[best]),
        "best_offset_per_kind": {
            k: max((per_offset[c][k] / counts[k] if counts[k] else 0.0) for c in per_offset) for k in KINDS
        },
        "diagonal_rates": rates(diagonal),
    }
