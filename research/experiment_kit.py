"""What every experiment of the research desk is built from: the options a run is asked with, one run's
spec (the smoke test's tiny settings applied in one place), the seeds, and the summary statistics of a variant."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from research.harness import RunSpec, mean

SMOKE = {"steps": 6, "train": {"batch_size": 16}, "heldout_size": 24}


@dataclass(frozen=True)
class Options:
    seeds: int
    steps: int
    smoke: bool = False


@dataclass(frozen=True)
class Experiment:
    name: str
    seeds: int  # default number of seeds
    steps: int  # default training steps
    specs: Callable[[Options], list[RunSpec]]
    summarise: Callable[[list[dict]], list[dict]]


def run_spec(
    experiment: str,
    variant: str,
    seed: int,
    o: Options,
    config: dict | None = None,
    train: dict | None = None,
    keep: str | None = None,
    analysis: str | None = None,
) -> RunSpec:
    train = dict(train or {})
    if o.smoke:
        train = {**train, **SMOKE["train"]}
    else:  # the recipe's 5 averaged checkpoints span the last fifth of the run (every 100 of 2 500)
        train.setdefault("checkpoint_every", max(1, o.steps // 25))
    return RunSpec(
        experiment,
        variant,
        seed,
        SMOKE["steps"] if o.smoke else o.steps,
        config or {},
        train,
        keep,
        SMOKE["heldout_size"] if o.smoke else None,
        analysis,
    )


def seeds_of(o: Options) -> range:
    return range(1, o.seeds + 1)


def value_stats(values: list) -> dict:
    vals = [v for v in values if v is not None]
    return {
        "values": values,
        "mean": mean(vals),
        "min": min(vals) if vals else None,
        "max": max(vals) if vals else None,
    }


def by_variant(runs: list[dict], order: list[str]) -> list[tuple[str, list[dict]]]:
    groups = {v: sorted([r for r in runs if r["variant"] == v], key=lambda r: r["seed"]) for v in order}
    return [(v, rs) for v, rs in groups.items() if rs]
