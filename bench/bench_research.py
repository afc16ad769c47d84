"""Benchmark of the research desk's training, in one run: `python3 bench/bench_research.py`.

Prints, in CPU seconds of this process (time.process_time, one thread: on a shared machine wall time
only measures the neighbours):
  - one training step of the miniature (batch 128, the paper's recipe: dropout, smoothed loss, Adam)
  - the same step for K seeds at once as one batched model (torch.func.stack_module_state + vmap,
    randomness="different"), per seed, and its ratio to K separate steps: whether batching seeds pays
  - one held-out evaluation (greedy exact match on the 2 000 held-out numbers, done every 250 steps), with
    the shipped trained model (an untrained one decodes every output to the length limit: ~20x longer)
  - the desk's whole bill: every distinct training every experiment asks for at its record's length,
    priced at the baseline's measured step and evaluation cost (wider variants cost more), in CPU
    minutes and in minutes on 2 free cores, against the 30-minute goal
Machine load is printed too.

With --whole, instead: the whole desk from nothing, as `python -m research NAME --jobs 2` runs it, every
experiment at its record's length, into a scratch folder (results and weights, never research/results):
each experiment's wall seconds and the total, against the 30-minute goal. About half an hour on 2 cores.
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.func import functional_call, stack_module_state, vmap  # noqa: E402

from model.data import NumberSampler, heldout_numbers, make_batch  # noqa: E402
from model.train import exact_match, load, smoothed_loss  # noqa: E402
from model.transformer import Config, EncoderDecoder  # noqa: E402
from research.experiments import EXPERIMENTS, Options  # noqa: E402
from research.harness import CURVE_EVERY  # noqa: E402

BATCH = 128


def cpu_per_step(step, steps: int) -> float:
    step()  # warm-up
    t = time.process_time()
    for _ in range(steps):
        step()
    return (time.process_time() - t) / steps


def plain_step(seed: int = 1):
    torch.manual_seed(seed)
    model = EncoderDecoder(Config()).train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.98), eps=1e-9, fused=True)
    sampler = NumberSampler(seed, set(heldout_numbers()))

    def step():  # as model.train's loop takes it: the real tokens only (packed)
        src, dec_in, tgt = make_batch(sampler.sample(BATCH))
        loss = smoothed_loss(model(src, dec_in, packed=True), tgt[tgt != 0], 0.1, 0)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step


def batched_step(k: int):
    """K seeds' models stacked; each keeps its own data stream, and Adam on a stacked parameter is K
    independent Adams (it is elementwise). Batches are padded to the widest of the K."""
    models = []
    for seed in range(1, k + 1):
        torch.manual_seed(seed)
        models.append(EncoderDecoder(Config()))
    params, buffers = stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta").train()
    opt = torch.optim.Adam(params.values(), lr=1e-3, betas=(0.9, 0.98), eps=1e-9)
    samplers = [NumberSampler(seed, set(heldout_numbers())) for seed in range(1, k + 1)]

    def loss_of(p, b, src, dec_in, tgt):
        return smoothed_loss(functional_call(base, (p, b), (src, dec_in)), tgt, 0.1, 0)

    losses = vmap(loss_of, randomness="different")

    def stack(tensors):
        width = max(t.shape[1] for t in tensors)
        return torch.stack([F.pad(t, (0, width - t.shape[1])) for t in tensors])

    def step():
        batches = [make_batch(s.sample(BATCH)) for s in samplers]
        src, dec_in, tgt = (stack([b[i] for b in batches]) for i in range(3))
        loss = losses(params, buffers, src, dec_in, tgt).sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step


def desk_bill() -> tuple[int, int]:
    """(training steps, evaluations) over every distinct run key the experiments ask for."""
    seen: dict[str, tuple[int, int]] = {}
    for exp in EXPERIMENTS.values():
        for spec in exp.specs(Options(seeds=exp.seeds, steps=exp.steps)):
            seen.setdefault(spec.key(), (spec.steps, spec.steps // CURVE_EVERY + 2))
    return sum(s for s, _ in seen.values()), sum(e for _, e in seen.values())


def whole_desk(jobs: int, smoke: bool) -> None:
    """Every experiment in the order a fresh desk runs them (later ones reuse earlier runs by key)."""
    import subprocess
    import tempfile

    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; the whole desk, --jobs {jobs}")
    total = 0.0
    with tempfile.TemporaryDirectory() as out:
        for name in EXPERIMENTS:
            t0 = time.perf_counter()
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "research",
                    name,
                    "--jobs",
                    str(jobs),
                    "--out",
                    out,
                    "--quiet",
                    *(["--smoke"] if smoke else []),
                ],
                cwd=ROOT,
                check=True,
            )
            seconds = time.perf_counter() - t0
            total += seconds
            print(f"  {name:22s} {seconds:7.0f} s")
    print(f"the whole desk: {total:.0f} s = {total / 60:.1f} min (goal: 30 min on 2 cores)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=20, help="steps timed per measurement")
    p.add_argument("--whole", action="store_true", help="instead, run and time the whole desk (about 30 min)")
    p.add_argument("--jobs", type=int, default=2, help="with --whole: worker processes")
    p.add_argument("--smoke", action="store_true", help="with --whole: the experiments' smoke runs (plumbing)")
    args = p.parse_args()
    if args.whole:
        whole_desk(args.jobs, args.smoke)
        return
    torch.set_num_threads(1)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; torch {torch.__version__}, 1 thread")
    one = cpu_per_step(plain_step(), args.steps)
    print(f"one training step (batch {BATCH}):           {1000 * one:6.1f} ms CPU")
    for k in (2, 3, 4):
        per_seed = cpu_per_step(batched_step(k), args.steps) / k
        print(
            f"{k} seeds as one vmapped model, per seed:   {1000 * per_seed:6.1f} ms CPU"
            f"  (speed-up over separate steps: {one / per_seed:.2f}x)"
        )
    model = load()  # the shipped, trained model: it stops decoding when every output has ended
    t = time.process_time()
    exact_match(model, heldout_numbers())
    evaluation = time.process_time() - t
    print(f"one held-out evaluation (2 000 numbers):    {evaluation:6.2f} s CPU")
    steps, evals = desk_bill()
    cpu = steps * one + evals * evaluation
    print(
        f"the whole desk: {steps} training steps and {evals} evaluations over its distinct runs = "
        f"{cpu / 60:.0f} CPU minutes at the baseline's cost, {cpu / 120:.0f} min on 2 free cores "
        f"(goal: 30 min)"
    )


if __name__ == "__main__":
    main()
