"""Every part of the shipped model switched off in turn: exact match over the held-out set.

    python -m research.part_ablation            # writes research/results/part_ablation.json
    python -m research.part_ablation --check 60 # recomputes 60 numbers and compares (no writing)

The shipped model (model/artifacts/model.safetensors), not the desk's short seeds. Each single head
(every attention of both stacks) and each whole sub-layer is switched off as the live page does it
(model/ablation.py: the trace's zero gate, here the equivalent zeroed weights on a copy), and the
held-out numbers are decoded greedily in batches. Scored separately on numbers whose German has an
"und" (a reordered tens–ones pair) and on the others. Per part the file keeps which numbers came out
right (one character per held-out number), so a test can recompute any subset and compare exactly.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

from article.stats import training_summary
from model.ablation import ablated, parts
from model.data import heldout_numbers
from model.decode import greedy
from model.numbers import to_german_pieces
from model.transformer import EncoderDecoder
from model.translate import Translator
from model.vocab import VOCAB
from recorder import weights_version

RESULT = Path(__file__).resolve().parent / "results" / "part_ablation.json"
BATCH = 500


def has_und(n: int) -> bool:
    return "und" in to_german_pieces(n)


def correct(model: EncoderDecoder, numbers: list[int], batch: int = BATCH) -> str:
    """'1' where greedy decoding gives the reference German exactly, '0' where not, in `numbers`' order."""
    out = []
    for i in range(0, len(numbers), batch):
        chunk = numbers[i : i + batch]
        got = greedy(model, [VOCAB.ids(VOCAB.source_tokens(n)) for n in chunk])
        out += ["1" if g == VOCAB.ids(to_german_pieces(n)) else "0" for g, n in zip(got, chunk, strict=True)]
    return "".join(out)


def score(bits: str, numbers: list[int]) -> dict:
    """Exact match overall, on numbers with "und" and on those without, from one correctness string."""
    groups = {"all": [True] * len(numbers), "with_und": [has_und(n) for n in numbers]}
    groups["without_und"] = [not w for w in groups["with_und"]]
    out = {}
    for name, member in groups.items():
        n = sum(member)
        right = sum(b == "1" for b, m in zip(bits, member, strict=True) if m)
        out[name] = {"n": n, "correct": right, "exact_match": right / n if n else None}
    return out


def run(model: EncoderDecoder, numbers: list[int], progress: bool = False) -> list[dict]:
    """One row per part (and first the intact model): its kind, its correctness string and its scores."""
    rows = []
    for p in [None, *parts(model.cfg)]:
        t0 = time.perf_counter()
        bits = correct(ablated(model, [p.id]) if p else model, numbers)
        rows.append(
            {
                "part": p.id if p else "none",
                "kind": p.kind if p else "none",
                "sublayer": p.sublayer if p else None,
                "head": p.head if p else None,
                **score(bits, numbers),
                "correct_bits": bits,
            }
        )
        if progress:
            print(
                f"{rows[-1]['part']:>16}: {rows[-1]['all']['exact_match']:.2%} ({time.perf_counter() - t0:.1f} s)",
                file=sys.stderr,
            )
    return rows


RECORD = Path(__file__).resolve().parent / "records" / "part_ablation.md"
BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"


def render_table(doc: dict) -> str:
    """The record's result table: per part, exact match overall, with "und" and without (counts too)."""
    lines = ["| switched off | all | with und | without und |", "| --- | --- | --- | --- |"]
    for r in doc["rows"]:
        cells = [
            f"{100 * r[g]['exact_match']:.2f} % ({r[g]['correct']}/{r[g]['n']})"
            for g in ("all", "with_und", "without_und")
        ]
        lines.append(f"| {r['part']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_record(doc: dict, path: Path = RECORD) -> None:
    """Replaces the record's generated table (between the markers) with the one from `doc`."""
    text = path.read_text()
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    path.write_text(text[:start] + "\n" + render_table(doc) + "\n" + text[end:])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m research.part_ablation",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--out", type=Path, default=RESULT)
    ap.add_argument("--check", type=int, metavar="N", help="recompute N held-out numbers and compare; write nothing")
    ap.add_argument("--report", action="store_true", help="compute nothing: rewrite the record's table from the file")
    args = ap.parse_args(argv)
    if args.report:
        write_record(json.loads(args.out.read_text()))
        return 0
    torch.set_num_threads(1)
    model = Translator.load().model.eval()
    numbers = heldout_numbers()
    if args.check:
        saved = json.loads(args.out.read_text())
        idx = list(range(0, len(numbers), max(1, len(numbers) // args.check)))[: args.check]
        bad = 0
        for row in saved["rows"]:
            names = [] if row["part"] == "none" else [row["part"]]
            bits = correct(ablated(model, names), [numbers[i] for i in idx])
            bad += bits != "".join(row["correct_bits"][i] for i in idx)
        print(f"{len(saved['rows'])} parts × {len(idx)} numbers: {bad} parts differ")
        return 1 if bad else 0
    t0 = time.perf_counter()
    rows = run(model, numbers, progress=True)
    doc = {
        "experiment": "part_ablation",
        "model": {
            "weights_version": weights_version(model),
            "training_steps": training_summary()["steps"],
            "file": "model/artifacts/model.safetensors",
        },
        "heldout": {"numbers": len(numbers), "with_und": sum(map(has_und, numbers)), "seed": "model.data.HELDOUT_SEED"},
        "how": "greedy decoding of every held-out number with one part switched off (model/ablation.py)",
        "seconds": round(time.perf_counter() - t0, 1),
        "rows": rows,
    }
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    if args.out == RESULT and RECORD.exists():
        write_record(doc)
    print(f"{len(rows)} rows in {doc['seconds']} s → {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
