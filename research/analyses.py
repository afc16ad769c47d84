"""Analyses run on a trained model after its run (research/harness.py `execute`), named by a run spec's
`analysis`: the alignment scores of step 28 and the per-head ablation of the follow-ups."""

from __future__ import annotations

from collections.abc import Callable

from model.transformer import EncoderDecoder
from research import alignment, heads

ALIGNMENT_NUMBERS = 1000  # held-out numbers scored for alignment (every other one)


def alignment_numbers(numbers: list[int]) -> list[int]:
    """Every other held-out number, at most ALIGNMENT_NUMBERS of them."""
    return numbers[:: max(1, len(numbers) // ALIGNMENT_NUMBERS)][:ALIGNMENT_NUMBERS]


def _alignment(model: EncoderDecoder, heldout: list[int]) -> dict:
    numbers = alignment_numbers(heldout)
    return {"numbers": len(numbers), **alignment.alignment_scores(model, numbers)}


def _head_ablation(model: EncoderDecoder, heldout: list[int]) -> dict:
    return {"rows": heads.head_ablation(model, heldout)}


# each takes the trained model and the run's held-out numbers
ANALYSES: dict[str, Callable[[EncoderDecoder, list[int]], dict]] = {
    "alignment": _alignment,
    "head_ablation": _head_ablation,
}
