"""Train a variant of the miniature from a config, with several seeds, and score it.

Training is model/'s own `train()` (the paper's recipe); this module only names a run (`RunSpec`),
scores the averaged model it returns, and runs many specs in parallel processes, resumably: a run
is keyed by everything that determines its outcome (config, training overrides, filter, seed,
steps, evaluation set), and a key already present in any results file is not trained again.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import os
import sys
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from multiprocessing import get_context
from pathlib import Path

import torch

from model.data import heldout_numbers
from model.decode import greedy
from model.numbers import english_word_count, to_german_pieces
from model.train import TrainConfig, heldout_loss, perplexity, train
from model.transformer import Config, EncoderDecoder
from model.vocab import VOCAB
from research.analyses import ANALYSES

RESULTS = Path(__file__).resolve().parent / "results"
CURVE_EVERY = 250  # held-out exact match is measured every 250 steps (steps to reach 99 %)
TARGET = 0.99


# Training filters (TrainConfig.keep) by name, so that a spec stays JSON and picklable.
def has_sieben_und(n: int) -> bool:
    """True when the German contains "sieben und …" (…7 with tens ≥ 20 in either group)."""
    pieces = to_german_pieces(n)
    return any(a == "sieben" and b == "und" for a, b in zip(pieces, pieces[1:]))


def no_sieben_und(n: int) -> bool:
    return not has_sieben_und(n)


FILTERS: dict[str, Callable[[int], bool]] = {"no_sieben_und": no_sieben_und}


@dataclass(frozen=True)
class RunSpec:
    experiment: str
    variant: str  # the row of the experiment this run belongs to
    seed: int
    steps: int
    config: dict = field(default_factory=dict)  # overrides of model.transformer.Config
    train: dict = field(default_factory=dict)  # overrides of model.train.TrainConfig (JSON values)
    keep: str | None = None  # a name in FILTERS: train only on numbers it keeps
    heldout_size: int | None = None  # evaluate on the first k held-out numbers (smoke mode only)
    analysis: str | None = None  # a name in ANALYSES, run on the trained model (not part of the key)

    def key(self) -> str:
        """What determines the trained model and its scores; names and analyses are left out."""
        ident = {
            "config": Config(**self.config).to_dict(),
            "train": self.train_config_dict(),
            "keep": self.keep,
            "heldout_size": self.heldout_size,
        }
        return hashlib.sha1(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:16]

    def train_config_dict(self) -> dict:
        tc = TrainConfig(steps=self.steps, seed=self.seed, eval_every=CURVE_EVERY, heldout=[], **self.train)
        return {k: v for k, v in asdict(tc).items() if k not in ("heldout", "keep")}

    def heldout(self) -> list[int]:
        return evaluation_numbers(self.heldout_size)


def evaluation_numbers(size: int | None = None) -> list[int]:
    """The 2 000 held-out numbers, or (smoke mode) `size` of them spread over the whole range."""
    numbers = heldout_numbers()
    return numbers if not size else numbers[:: math.ceil(len(numbers) / size)][:size]


# Analyses run on a trained model: name -> function(model, spec) -> JSON-able dict. Filled by the
# modules that define them (alignment, head ablation) so that this module stays free of them.


@torch.no_grad()
def score(model: EncoderDecoder, numbers: list[int]) -> dict:
    """Free-running greedy exact match, overall and by input length in words; held-out loss."""
    outs = greedy(model, [VOCAB.ids(VOCAB.source_tokens(n)) for n in numbers])
    correct = [o == VOCAB.ids(VOCAB.target_tokens(n))[:-1] for o, n in zip(outs, numbers)]
    by_length: dict[str, dict] = {}
    for n, ok in zip(numbers, correct):
        row = by_length.setdefault(str(english_word_count(n)), {"n": 0, "correct": 0})
        row["n"] += 1
        row["correct"] += int(ok)
    for row in by_length.values():
        row["exact_match"] = row["correct"] / row["n"]
    loss = heldout_loss(model, numbers)
    return {
        "heldout_exact_match": sum(correct) / len(numbers),
        "heldout_loss": loss,
        "heldout_perplexity": perplexity(loss),
        "exact_match_by_length": dict(sorted(by_length.items(), key=lambda kv: int(kv[0]))),
        "heldout_correct": "".join("1" if ok else "0" for ok in correct),
    }


def subset_exact_match(record: dict, predicate: Callable[[int], bool]) -> tuple[float | None, int]:
    """Exact match over the held-out numbers a predicate selects, from a record's correct-string."""
    numbers = evaluation_numbers(record["heldout_size"])
    hits = [c == "1" for n, c in zip(numbers, record["heldout_correct"]) if predicate(n)]
    return (sum(hits) / len(hits) if hits else None), len(hits)


def weights_path(cache: Path, key: str) -> Path:
    return cache / f"{key}.pt"


def load_model(record: dict, cache: Path) -> EncoderDecoder | None:
    path = weights_path(cache, record["key"])
    if not path.exists():
        return None
    model = EncoderDecoder(Config(**record["config"]))
    model.load_state_dict(torch.load(path, weights_only=True))
    model.eval()
    return model


def execute(spec: RunSpec, cache: Path, prior: dict | None = None) -> dict:
    """Train and score one run (or reuse a finished one with the same key), then run its analysis."""
    torch.set_num_threads(1)  # one core per worker; parallelism comes from processes
    model = load_model(prior, cache) if prior else None
    # A finished run is reused: with its weights, or without them when no analysis needs the model
    # (its record holds every score; the same key trains the same model).
    if model is not None or (prior and not spec.analysis):
        record = copy.deepcopy(prior)
        record["reused_from"] = prior.get("reused_from") or f"{prior['experiment']}/{prior['variant']}"
    else:
        record = _train_and_score(spec, cache)
    record.update(experiment=spec.experiment, variant=spec.variant)
    record.pop("analysis", None)
    if spec.analysis:
        record["analysis"] = ANALYSES[spec.analysis](model or load_model(record, cache), spec.heldout())
    return record


def _train_and_score(spec: RunSpec, cache: Path) -> dict:
    cfg = Config(**spec.config)
    heldout = spec.heldout()
    tc = TrainConfig(
        steps=spec.steps,
        seed=spec.seed,
        eval_every=CURVE_EVERY,
        heldout=heldout,
        keep=FILTERS[spec.keep] if spec.keep else None,
        **spec.train,
    )
    t0 = time.perf_counter()
    model, log = train(cfg, tc)
    train_seconds = time.perf_counter() - t0
    scores = score(model, heldout)
    curve = [
        {"step": r["step"], "heldout_exact_match": r["heldout_exact_match"], "loss": r["loss"]}
        for r in log
        if "heldout_exact_match" in r and "averaged" not in r
    ]
    reached = [r["step"] for r in curve if r["heldout_exact_match"] >= TARGET]
    cache.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), weights_path(cache, spec.key()))
    return {
        "key": spec.key(),
        "experiment": spec.experiment,
        "variant": spec.variant,
        "seed": spec.seed,
        "steps": spec.steps,
        "heldout_size": spec.heldout_size,
        "config": cfg.to_dict(),
        "train": spec.train_config_dict(),
        "keep": spec.keep,
        "params": model.get_num_params(),
        "train_seconds": round(train_seconds, 2),
        "wall_seconds": round(time.perf_counter() - t0, 2),
        **scores,
        "steps_to_99": reached[0] if reached else None,
        "curve": curve,
        "final_training_loss": log[-2]["loss"] if len(log) > 1 else None,
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
    }


# ---- many runs: resumable, in parallel processes --------------------------------------------


def results_file(out: Path, experiment: str) -> Path:
    return out / f"{experiment}.json"


def read_runs(path: Path) -> list[dict]:
    return json.loads(path.read_text())["runs"] if path.exists() else []


def write_runs(path: Path, experiment: str, runs: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"experiment": experiment, "runs": runs}, indent=1, sort_keys=True))
    os.replace(tmp, path)  # atomic: an interrupted run never leaves a half-written file


def finished_by_key(out: Path) -> dict[str, dict]:
    """Every finished training run under `out`, from any experiment, by key."""
    found: dict[str, dict] = {}
    for path in sorted(out.glob("*.json")):
        for run in read_runs(path):
            found.setdefault(run["key"], run)
    return found


def run_specs(
    specs: list[RunSpec], out: Path, experiment: str, jobs: int = 1, progress: bool = True, ray: str | None = None
) -> list[dict]:
    """Run what is not yet done; the experiment's file is rewritten after every finished run.

    Trainings go to `jobs` local worker processes, or, with `ray` (a cluster address, or "local" for a
    Ray instance on this machine), to a Ray cluster; either way the records and weights land here, in
    the same files. Runs in the file that the specs no longer ask for (an older length) are dropped.
    """
    path, cache = results_file(out, experiment), out / "cache"
    wanted = {(s.variant, s.key()) for s in specs}
    runs = [r for r in read_runs(path) if (r["variant"], r["key"]) in wanted]
    done = {(r["variant"], r["key"]) for r in runs if not _needs_analysis(r, specs)}
    runs = [r for r in runs if (r["variant"], r["key"]) in done]
    todo = [s for s in specs if (s.variant, s.key()) not in done]
    prior = finished_by_key(out)
    bar = Progress(len(specs), len(specs) - len(todo), enabled=progress)
    # Runs that only reuse weights go first and in-process; trainings are spread over the workers.
    # Two specs with one key (the same model under two names) train once; the second reuses it.
    trainings: dict[str, RunSpec] = {}
    for s in todo:
        if not (s.key() in prior and (not s.analysis or weights_path(cache, s.key()).exists())):
            trainings.setdefault(s.key(), s)
    reusers = [s for s in todo if trainings.get(s.key()) is not s]
    for spec in [s for s in reusers if s.key() not in trainings]:
        runs.append(execute(spec, cache, prior[spec.key()]))
        write_runs(path, experiment, runs)
        bar.step(runs[-1])
    trained = (
        _map_ray(list(trainings.values()), cache, ray) if ray else _map(list(trainings.values()), cache, prior, jobs)
    )
    for record in trained:
        runs.append(record)
        prior[record["key"]] = record
        write_runs(path, experiment, runs)
        bar.step(record)
    for spec in [s for s in reusers if s.key() in trainings]:
        runs.append(execute(spec, cache, prior[spec.key()]))
        write_runs(path, experiment, runs)
        bar.step(runs[-1])
    bar.close()
    return runs


def _needs_analysis(run: dict, specs: list[RunSpec]) -> bool:
    wanted = {(s.variant, s.key()): s.analysis for s in specs}
    return bool(wanted.get((run["variant"], run["key"]))) and "analysis" not in run


def _map(specs: list[RunSpec], cache: Path, prior: dict, jobs: int) -> Iterable[dict]:
    if jobs <= 1 or len(specs) <= 1:
        for spec in specs:
            yield execute(spec, cache, prior.get(spec.key()))
        return
    with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn")) as pool:
        futures = [pool.submit(execute, spec, cache, prior.get(spec.key())) for spec in specs]
        for future in as_completed(futures):
            yield future.result()


# ---- on a Ray cluster ----------------------------------------------------------------------


def train_elsewhere(spec: RunSpec) -> tuple[dict, bytes]:
    """Train (and analyse) one run in a scratch folder; return its record and its weights' bytes, so
    that the caller stores both where a local run would (nothing is left on the worker's disk)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="research-run-") as scratch:
        record = execute(spec, Path(scratch))
        return record, weights_path(Path(scratch), record["key"]).read_bytes()


def ray_runtime_env() -> dict:
    """The desk's code travels with the job (a cluster's nodes need not have this checkout); weights
    and results stay here. One thread per task, as in a local worker."""
    root = Path(__file__).resolve().parent.parent
    return {
        "py_modules": [str(root / "model"), str(root / "research")],
        "excludes": ["results/", "gallery/", "artifacts/", "__pycache__/", "*.pt"],
        "env_vars": {"OMP_NUM_THREADS": "1"},
    }


def _map_ray(specs: list[RunSpec], cache: Path, address: str) -> Iterable[dict]:
    """Each training as a Ray task (one CPU each); results come back as they finish."""
    if not specs:
        return
    try:
        import ray
    except ImportError as e:
        raise SystemExit("--ray needs Ray: pip install -e '.[research]' (or pip install ray)") from e
    if not ray.is_initialized():
        ray.init(
            address=None if address == "local" else address,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
            runtime_env=ray_runtime_env(),
        )
    task = ray.remote(num_cpus=1)(train_elsewhere)
    pending = [task.remote(spec) for spec in specs]
    cache.mkdir(parents=True, exist_ok=True)
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        record, weights = ray.get(ready[0])
        weights_path(cache, record["key"]).write_bytes(weights)
        yield record


class Progress:
    """A one-line progress bar over runs, with the last run's score and an estimate of time left."""

    def __init__(self, total: int, done: int = 0, enabled: bool = True):
        self.total, self.done, self.start_done, self.enabled = total, done, done, enabled
        self.t0 = time.perf_counter()
        self._draw("")

    def step(self, record: dict) -> None:
        self.done += 1
        self._draw(f"{record['variant']} seed {record['seed']}: exact {record['heldout_exact_match']:.1%}")

    def _draw(self, last: str) -> None:
        if not self.enabled:
            return
        width, elapsed = 30, time.perf_counter() - self.t0
        filled = int(width * self.done / max(self.total, 1))
        new = self.done - self.start_done
        eta = f" eta {elapsed / new * (self.total - self.done) / 60:.1f} min" if new else ""
        sys.stderr.write(
            f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} runs "
            f"{elapsed / 60:.1f} min{eta}  {last}".ljust(100)
        )
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")


def mean(xs: list[float]) -> float | None:
    xs = [x for x in xs if x is not None and not (isinstance(x, float) and math.isnan(x))]
    return sum(xs) / len(xs) if xs else None
