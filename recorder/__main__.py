"""Command line: python -m recorder NUMBER — every tensor of one translation by the shipped 2017 model,
as JSON on stdout (the trace document without the article's live figures: `derived` is null)."""

from __future__ import annotations

import argparse
import sys

import orjson
import torch

from model.__main__ import OneLineParser
from model.parse import parse_number
from model.translate import Translator
from recorder.record import trace


def _number(text: str) -> int:
    try:
        return parse_number(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def main(argv: list[str] | None = None) -> int:
    torch.set_num_threads(2)
    p = OneLineParser(prog="python -m recorder", description="Every tensor of one translation, as JSON.")
    p.add_argument("number", type=_number, help="digits or English words")
    args: argparse.Namespace = p.parse_args(argv)
    try:
        t = trace(Translator.load().model, args.number)
    except (ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    sys.stdout.buffer.write(orjson.dumps(t.to_json(), option=orjson.OPT_SERIALIZE_NUMPY) + b"\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
