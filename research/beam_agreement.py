"""Greedy decoding against beam search on the shipped model: how often they write the same German.

    python -m research.beam_agreement            # writes research/results/beam_agreement.json
    python -m research.beam_agreement --check 40 # recomputes 40 held-out numbers and compares (no writing)

Every held-out number is decoded greedily and by the paper's beam search (beam 4, α = 0.6, model/decode.py),
and the two outputs are compared token for token. Per number the file keeps whether they agree ('1') and
whether the beam's output is the reference German ('1'), one character each, so a test can recompute any
subset and compare exactly. The beam-search topic page states the count.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

from model.data import heldout_numbers
from model.decode import beam_search, greedy, strip_eos
from model.numbers import to_german_pieces
from model.transformer import EncoderDecoder
from model.translate import Translator
from model.vocab import VOCAB
from recorder import weights_version

RESULT = Path(__file__).resolve().parent / "results" / "beam_agreement.json"
BEAM, ALPHA = 4, 0.6


def compare(model: EncoderDecoder, numbers: list[int]) -> tuple[str, str]:
    """('1' where beam search writes what greedy writes, '1' where the beam's German is the reference),
    one character per number in `numbers`' order."""
    sources = [VOCAB.ids(VOCAB.source_tokens(n)) for n in numbers]
    greedy_out = greedy(model, sources)
    agree, right = [], []
    for n, source, g in zip(numbers, sources, greedy_out, strict=True):
        beam = strip_eos(beam_search(model, source, BEAM, ALPHA).best.tokens)
        agree.append("1" if beam == strip_eos(g) else "0")
        right.append("1" if beam == VOCAB.ids(to_german_pieces(n)) else "0")
    return "".join(agree), "".join(right)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m research.beam_agreement",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--out", type=Path, default=RESULT)
    ap.add_argument("--check", type=int, metavar="N", help="recompute N held-out numbers and compare; write nothing")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    model = Translator.load().model.eval()
    numbers = heldout_numbers()
    if args.check:
        saved = json.loads(args.out.read_text())
        idx = list(range(0, len(numbers), max(1, len(numbers) // args.check)))[: args.check]
        agree, right = compare(model, [numbers[i] for i in idx])
        same = agree == "".join(saved["agree_bits"][i] for i in idx) and right == "".join(
            saved["beam_correct_bits"][i] for i in idx
        )
        print(f"{len(idx)} numbers: {'the same' if same else 'different'}")
        return 0 if same else 1
    t0 = time.perf_counter()
    agree, right = compare(model, numbers)
    doc = {
        "experiment": "beam_agreement",
        "model": {"weights_version": weights_version(model), "file": "model/artifacts/model.safetensors"},
        "heldout": {"numbers": len(numbers), "seed": "model.data.HELDOUT_SEED"},
        "how": f"greedy decoding against beam search (beam {BEAM}, alpha {ALPHA}) on every held-out number",
        "beam": BEAM,
        "alpha": ALPHA,
        "agree": agree.count("1"),
        "beam_correct": right.count("1"),
        "seconds": round(time.perf_counter() - t0, 1),
        "agree_bits": agree,
        "beam_correct_bits": right,
    }
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{doc['agree']} of {len(numbers)} agree in {doc['seconds']} s → {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
