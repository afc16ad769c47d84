"""Command line: python -m model {train, eval, translate} (the trace is the recorder's: python -m recorder)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

from model.models import NAMES as MODEL_NAMES


def _number(text: str) -> int:
    from model.parse import parse_number

    try:
        return parse_number(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _processes(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 64:
        raise argparse.ArgumentTypeError(f"expected a whole number of processes from 1 to 64, got {text!r}")
    return int(text)


class OneLineParser(argparse.ArgumentParser):
    """Bad arguments get one line on stderr and exit status 2, never a usage dump or a traceback."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}\n")


def cmd_train(args: argparse.Namespace) -> None:
    from model import models
    from model.train import TrainConfig, save, train

    tc = TrainConfig(steps=args.steps, seed=args.seed)
    recorder = None
    if args.snapshots:
        from model.snapshots import Recorder

        recorder = Recorder()
    model, log = train(models.config(args.model), tc, progress=True, on_step=recorder, processes=args.processes)
    save(model, log, tc, args.out or models.DIRECTORIES[args.model])
    if recorder:
        from model import snapshots

        snapshots.save(
            recorder,
            model.cfg,
            args.snapshots,
            note=f"python -m model train --steps {tc.steps} --seed {tc.seed} --snapshots",
            log=log,
        )
    last = log[-1]
    print(
        f"trained {tc.steps} steps in {last['seconds']:.0f} s; held-out exact match "
        f"{last['heldout_exact_match']:.2%} (average of the last {last['averaged']} checkpoints)"
    )


def cmd_eval(args: argparse.Namespace) -> None:
    from model.data import heldout_numbers
    from model.decode import beam_search, strip_eos
    from model.train import exact_match, load
    from model.vocab import VOCAB

    model = load()
    numbers = list(range(1_000_000)) if args.all else heldout_numbers()
    t0 = time.perf_counter()
    em = exact_match(model, numbers)
    print(f"greedy exact match on {len(numbers):,} numbers: {em:.4%} ({time.perf_counter() - t0:.1f} s)")
    if args.beam and not args.all:
        hits = sum(
            strip_eos(beam_search(model, VOCAB.ids(VOCAB.source_tokens(n))).best.tokens)
            == VOCAB.ids(VOCAB.target_tokens(n))[:-1]
            for n in numbers
        )
        print(f"beam 4 exact match on {len(numbers):,} held-out numbers: {hits / len(numbers):.4%}")


def cmd_translate(args: argparse.Namespace) -> None:
    from model.translate import Translator

    tr = Translator.load()
    for n in args.numbers:
        r = tr.translate(n)
        print(f"{n}\t{' '.join(r.english)}\t{r.german}")


def main(argv: list[str] | None = None) -> int:
    torch.set_num_threads(2)
    p = OneLineParser(prog="python -m model", description="The trained miniature Transformer.")
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=OneLineParser)
    t = sub.add_parser("train", help="train with the paper's recipe and save to model/artifacts")
    t.add_argument("--steps", type=int, default=4000)
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--out", type=Path, default=None)
    t.add_argument(
        "--snapshots",
        type=Path,
        default=None,
        help="also keep float16 weights at the steps of model.snapshots.SNAPSHOT_STEPS in this file",
    )
    t.add_argument(
        "--processes",
        type=_processes,
        default=2,
        help="processes sharing each batch, one core each (default 2: this machine's cores)",
    )
    t.add_argument(
        "--model",
        choices=MODEL_NAMES,
        default="2017",
        help="the recipe: 2017 (the paper's, default) or modern (today's); saved to its own folder",
    )
    e = sub.add_parser("eval", help="exact match on the held-out set (greedy and beam 4)")
    e.add_argument("--all", action="store_true", help="greedy over all 1 000 000 numbers instead")
    e.add_argument("--no-beam", dest="beam", action="store_false")
    tr = sub.add_parser("translate", help="translate numbers (digits or English words)")
    tr.add_argument("numbers", nargs="+", type=_number)
    args = p.parse_args(argv)
    try:
        {"train": cmd_train, "eval": cmd_eval, "translate": cmd_translate}[args.cmd](args)
    except (ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
