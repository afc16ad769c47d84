"""Every attention head of the shipped model, measured over the 2 000 held-out numbers.

For each of the 2 × 3 × 4 heads (layer; encoder self-attention, decoder masked self-attention,
cross-attention; head): how often a row's largest weight falls on a given position or word, the
rows' mean entropy, the head's average pattern, and the greedy exact match with that head alone
switched off. The article's gallery (step 28) draws these numbers; nothing in it is a judgement
that a number does not back.

- Rows are teacher-forced on the gold German (the model reproduces every held-out number), padding
  left out. A decoder row is named by the token it reads: row 0 reads `<s>`. In masked
  self-attention row 0 can see only itself, so its rows are counted from row 1.
- "Aligned" (cross-attention): the row that writes a German piece peaks on the English word that
  piece translates (gold alignments from research/alignment.py, the row that *predicts* the piece).
- Switched off: the head's d_k input columns of W^O are zeroed in a copy (research/heads.py does the
  same for the last layer's cross-attention of the desk's 2 500-step models).
- The average pattern is taken over the held-out numbers whose English has nine words: all of the
  one form "a hundred b·ty c thousand d hundred e·ty f", so every position means the same word.

Reproduce: `python -m research.head_gallery` (about a minute) rewrites research/gallery/heads.json.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import torch

from model.data import heldout_numbers, make_batch
from model.numbers import DE_ONES, DE_TENS, EN_ONES, EN_TENS, english_word_count
from model.train import exact_match
from model.transformer import EncoderDecoder, MultiHeadedAttention
from model.vocab import VOCAB
from recorder import weights_version
from research.alignment import aligned_rows

OUT = Path(__file__).resolve().parent / "gallery" / "heads.json"
KINDS = ("encoder self-attention", "decoder masked self-attention", "cross-attention")
PATTERN_WORDS = 9  # the longest English; one fixed form, so positions line up across numbers

# What a row's peak may land on, per kind: (key, what the page calls it). "token:w" is any key
# position holding the word w; the rest are positions relative to the row.
CATEGORIES = {
    "encoder self-attention": [
        ("same", "its own position"),
        ("previous", "the previous word"),
        ("next", "the next word"),
        ("token:hundred", "“hundred”"),
        ("token:thousand", "“thousand”"),
        ("token:</s>", "the end token </s>"),
    ],
    "decoder masked self-attention": [
        ("same", "its own position"),
        ("previous", "the previous piece"),
        ("token:<s>", "the start token <s>"),
        ("token:und", "“und”"),
        ("token:hundert", "“hundert”"),
        ("token:tausend", "“tausend”"),
    ],
    "cross-attention": [
        ("aligned", "the English word it translates"),
        ("aligned_reordered", "the English word it translates, on reordered units and tens"),
        ("token:hundred", "“hundred”"),
        ("token:thousand", "“thousand”"),
        ("token:</s>", "the end token </s>"),
    ],
}


def attention_modules(model: EncoderDecoder) -> list[tuple[str, int, MultiHeadedAttention]]:
    out = [(KINDS[0], i, layer.self_attn) for i, layer in enumerate(model.encoder_layers)]
    for i, layer in enumerate(model.decoder_layers):
        out += [(KINDS[1], i, layer.self_attn), (KINDS[2], i, layer.src_attn)]
    return sorted(out, key=lambda m: (m[1], KINDS.index(m[0])))


def switched_off(model: EncoderDecoder, kind: str, layer: int, head: int) -> EncoderDecoder:
    """A copy of the model with one head's output removed: its d_k input columns of W^O zeroed."""
    ablated = copy.deepcopy(model)
    attn = next(m for k, i, m in attention_modules(ablated) if (k, i) == (kind, layer))
    with torch.no_grad():
        attn.w_o.weight[:, head * attn.d_k : (head + 1) * attn.d_k] = 0.0
    return ablated.eval()


def _token_mask(tokens: list[list[str]], width: int, word: str) -> torch.Tensor:
    """(B, width): where each sequence holds the word."""
    return torch.tensor([[i < len(t) and t[i] == word for i in range(width)] for t in tokens])


def _peaks(
    kind: str,
    w: torch.Tensor,
    q_tokens: list[list[str]],
    k_tokens: list[list[str]],
    gold: list[dict[int, tuple[int, str]]],
) -> dict[str, tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """Per category, (hits, eligible, chance) over (B, h, T_q): whether the row's peak is there, whether
    the category applies to the row, and the chance that a peak drawn uniformly from the row's visible
    keys would be there. Rows are real query rows (from row 1 in masked self-attention, where row 0
    can see only itself)."""
    b, h, t_q, t_k = w.shape
    peak = w.argmax(-1)  # (B, h, T_q); masked and padded keys have weight 0
    row = torch.arange(t_q)[None, None, :].expand(b, h, t_q)
    n_q = torch.tensor([len(t) for t in q_tokens])[:, None, None]
    n_k = torch.tensor([len(t) for t in k_tokens])[:, None, None]
    real = (row < n_q) & ((row >= 1) if kind == KINDS[1] else True)
    visible = ((row + 1) if kind == KINDS[1] else n_k).double().expand(b, h, t_q)
    out = {}
    for c, _ in CATEGORIES[kind]:
        chance = 1 / visible  # one position of the row's visible keys
        if c == "same":
            hit, ok = peak == row, real
        elif c == "previous":
            hit, ok = peak == row - 1, real & (row >= 1)
        elif c == "next":
            hit, ok = peak == row + 1, real & (row + 1 < n_k)
        elif c.startswith("token:"):
            mask = _token_mask(k_tokens, t_k, c[6:])  # (B, T_k)
            if kind == KINDS[1]:  # a row sees keys 0..row
                count = torch.cumsum(mask.int(), 1)[:, None, :t_q].expand(b, h, t_q)
            else:
                count = mask.sum(1)[:, None, None].expand(b, h, t_q)
            seen, chance = count > 0, count / visible
            hit, ok = torch.gather(mask[:, None, :].expand(b, h, t_k), 2, peak), real & seen
        else:  # aligned, aligned_reordered
            target = torch.full((b, t_q), -1)
            for i, g in enumerate(gold):
                for r, (s, k) in g.items():
                    if c == "aligned" or k == "reordered":
                        target[i, r] = s
            target = target[:, None, :].expand(b, h, t_q)
            hit, ok = peak == target, real & (target >= 0)
        out[c] = (hit & ok, ok, torch.where(ok, chance, torch.zeros_like(chance)))
    return out


@torch.no_grad()
def measure(model: EncoderDecoder, numbers: list[int]) -> list[dict]:
    """Per head: hits and eligible rows per category, the entropy sums, the average pattern."""
    model.eval()
    src, dec_in, _ = make_batch(numbers)
    model(src, dec_in)
    source = [VOCAB.source_tokens(n) for n in numbers]
    reads = [["<s>"] + VOCAB.target_tokens(n)[:-1] for n in numbers]
    gold = [{row: (s, k) for row, s, k in aligned_rows(n)} for n in numbers]
    form = [b for b, n in enumerate(numbers) if english_word_count(n) == PATTERN_WORDS]
    heads = []
    for kind, layer, attn in attention_modules(model):
        w = attn.weights.double()  # (B, h, T_q, T_k)
        q_tokens = source if kind == KINDS[0] else reads
        k_tokens = reads if kind == KINDS[1] else source
        peaks = _peaks(kind, w, q_tokens, k_tokens, gold)
        shape = w.shape[:3]
        row = torch.arange(shape[2])[None, None, :]
        rows = (row < torch.tensor([len(t) for t in q_tokens])[:, None, None]).expand(shape)
        if kind == KINDS[1]:
            rows = rows & (row >= 1)  # row 0 of masked self-attention sees only itself
        entropy = -(w * torch.where(w > 0, w.log2(), torch.zeros_like(w))).sum(-1)  # bits, per row
        visible = (row + 1) if kind == KINDS[1] else torch.tensor([len(t) for t in k_tokens])[:, None, None]
        visible = visible.double().expand(shape)
        n_q, n_k = len(q_tokens[form[0]]), len(k_tokens[form[0]])
        pattern = w[form, :, :n_q, :n_k].mean(0)
        for h in range(w.shape[1]):
            heads.append(
                {
                    "kind": kind,
                    "layer": layer,
                    "head": h,
                    "peaks": {
                        c: {
                            "hits": int(hit[:, h].sum()),
                            "rows": int(ok[:, h].sum()),
                            "chance_sum": round(float(chance[:, h].sum()), 3),
                        }
                        for c, (hit, ok, chance) in peaks.items()
                    },
                    "rows": int(rows[:, h].sum()),
                    "entropy_bits_sum": round(float(entropy[:, h][rows[:, h]].sum()), 3),
                    "uniform_bits_sum": round(float(visible[:, h][rows[:, h]].log2().sum()), 3),
                    "pattern": [[round(float(x), 4) for x in r] for r in pattern[h]],
                }
            )
    return heads


def axis_labels(tokens: list[list[str]]) -> list[str]:
    """One label per position of numbers that share a form: the word itself where every number has
    the same one, else its class ("1–9" for units, "20–90" for tens)."""
    units = set(EN_ONES[1:] + DE_ONES[1:] + ["ein"])
    tens = set(EN_TENS[2:] + DE_TENS[2:])
    out = []
    for column in zip(*tokens, strict=True):
        words = set(column)
        out.append(column[0] if len(words) == 1 else "1–9" if words <= units else "20–90" if words <= tens else "·")
    return out


def gallery(model: EncoderDecoder, numbers: list[int]) -> dict:
    heads = measure(model, numbers)
    baseline = round(exact_match(model, numbers) * len(numbers))
    for h in heads:
        h["switched_off_correct"] = round(
            exact_match(switched_off(model, h["kind"], h["layer"], h["head"]), numbers) * len(numbers)
        )
    form = [n for n in numbers if english_word_count(n) == PATTERN_WORDS]
    return {
        "weights_version": weights_version(model),
        "numbers": len(numbers),
        "baseline_correct": baseline,
        "categories": {k: [{"key": c, "label": label} for c, label in v] for k, v in CATEGORIES.items()},
        "pattern": {
            "numbers": len(form),
            "example": form[0],
            "source": axis_labels([VOCAB.source_tokens(n) for n in form]),
            "reads": axis_labels([["<s>"] + VOCAB.target_tokens(n)[:-1] for n in form]),
        },
        "heads": heads,
    }


def main(argv: list[str]) -> int:
    from model.train import load

    torch.set_num_threads(1)
    data = gallery(load(), heldout_numbers())
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(data['heads'])} heads measured over {data['numbers']} numbers -> {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
