"""Training speed, before and after, in one run: `python3 bench/bench_train.py`.

Prints:
  1. where the time of a training step goes: torch.profiler's self time by operator, for the code
     before and after (the shares, which a busy machine changes less than the totals);
  2. ms per training step (4 000-step recipe: batch 128, dropout, label smoothing, Adam) for the
     code at commit BEFORE and for this tree, each in a fresh process with torch.set_num_threads(--threads),
     alternated --rounds times so that both see the same machine load;
  3. the held-out evaluation (greedy exact match on the 2 000 held-out numbers) before and after,
     for the shipped model and (--early) for a barely trained one (its outputs run long: the worst case);
  4. the estimate for `python -m model train`: 4 000 steps + 9 evaluations (every 500 steps and the
     averaged model's, each costed as the shipped model's: from step 500 on the model is 97 % right)
     + the held-out loss, against the target of 90 s;
  5. with --whole, instead: the whole `python -m model train` timed for both (this tree's splits each batch
     between 2 processes, model.train.Team), with the held-out exact match and loss each run ends with.
The "before" code is `git archive BEFORE model` unpacked in a temporary folder. Asserts nothing: the
machine is shared and noisy; read the ratios, measured in one run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BEFORE = "6adb8f3"  # the last commit before key/value-cached decoding and the training speed-ups
EVALUATIONS = 4000 // 500 + 1  # every 500 steps, and the averaged model at the end


def worker(steps: int, profile: bool, early: bool, threads: int = 2) -> dict:
    """Runs in the code tree on sys.path[0]: per-step cost, evaluation cost, optionally a profile."""
    import torch

    from model.data import heldout_numbers
    from model.train import TrainConfig, exact_match, heldout_loss, load, train
    from model.transformer import Config

    torch.set_num_threads(threads)
    warm = 20
    # held-out list of one number: no evaluation worth the name inside the timed steps
    tc = TrainConfig(steps=warm + steps, eval_every=10**9, log_every=warm, heldout=[1000])
    t0 = time.perf_counter()
    early, log = train(Config(), tc)
    total = time.perf_counter() - t0
    at = {r["step"]: r["seconds"] for r in log if "loss" in r}
    ms_step = 1000 * (at[warm + steps] - at[warm]) / steps
    held = heldout_numbers()
    shipped = load()
    t0 = time.perf_counter()
    em = exact_match(shipped, held)
    eval_trained = time.perf_counter() - t0
    t0 = time.perf_counter()
    loss = heldout_loss(shipped, held)
    loss_s = time.perf_counter() - t0
    em_early = eval_early = None
    if early:
        t0 = time.perf_counter()
        em_early = exact_match(early, held)
        eval_early = time.perf_counter() - t0
    out = {
        "ms_step": ms_step,
        "train_s": total,
        "eval_trained_s": eval_trained,
        "eval_early_s": eval_early,
        "heldout_loss_s": loss_s,
        "em": em,
        "em_early": em_early,
        "heldout_loss": loss,
    }
    if profile:
        out["profile"] = profile_steps(20)
    return out


def profile_steps(n: int) -> list[tuple[str, float]]:
    import inspect

    import torch
    from torch.profiler import profile

    import model.train as mt
    from model.data import NumberSampler, make_batch
    from model.transformer import Config, EncoderDecoder

    # one step as train() runs it, with the optimiser train() builds (read from the tree's source)
    source = inspect.getsource(mt)
    adam = {"fused": True} if "fused=True" in source else {"foreach": True} if "foreach=True" in source else {}
    packed = "packed" in inspect.signature(EncoderDecoder.forward).parameters  # real tokens only
    torch.manual_seed(1)
    model = EncoderDecoder(Config())
    opt = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9, **adam)
    sampler = NumberSampler(1, set())

    def step() -> None:
        model.train()
        src, dec_in, tgt = make_batch(sampler.sample(128))
        if packed:
            loss = mt.smoothed_loss(model(src, dec_in, packed=True), tgt[tgt != 0], 0.1, 0)
        else:
            loss = mt.smoothed_loss(model(src, dec_in), tgt, 0.1, 0)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        loss.item()

    for _ in range(5):
        step()
    with profile() as p:
        for _ in range(n):
            step()
    rows = sorted(((e.key, e.self_cpu_time_total) for e in p.key_averages()), key=lambda r: -r[1])
    total = sum(t for _, t in rows)
    return [(k, t / total) for k, t in rows[:12]]


def run_worker(tree: Path, steps: int, profile: bool, early: bool, threads: int) -> dict:
    code = (
        f"import sys; sys.path.insert(0, {str(tree)!r}); sys.path.insert(1, {str(ROOT / 'bench')!r}); "
        f"import json, bench_train; print(json.dumps(bench_train.worker({steps}, {profile}, {early}, {threads})))"
    )
    env = {**os.environ, "PYTHONPATH": str(tree)}
    res = subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, text=True)
    if res.returncode:
        raise SystemExit(res.stderr)
    return json.loads(res.stdout.strip().splitlines()[-1])


def before_tree(commit: str, into: Path) -> Path:
    archive = subprocess.run(["git", "archive", commit, "model"], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    artifacts = into / "model" / "artifacts"  # the same shipped weights on both sides
    if artifacts.exists() and not (artifacts / "model.safetensors").exists():
        for f in (ROOT / "model" / "artifacts").iterdir():
            if not (artifacts / f.name).exists() and f.is_file():
                (artifacts / f.name).symlink_to(f)
    return into


def whole_run(tree: Path) -> tuple[float, dict]:
    """`python -m model train` in `tree`, written to a scratch folder: wall seconds and its last record."""
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "model", "train", "--out", out],
            cwd=tree,
            check=True,
            env={**os.environ, "PYTHONPATH": str(tree)},
            capture_output=True,
        )
        wall = time.perf_counter() - t0
        return wall, json.loads((Path(out) / "training_log.json").read_text())["log"][-1]


def compare_log(steps: int, threads: int) -> None:
    """Train `steps` steps of the recipe with this tree and print its log beside the shipped run's:
    the shipped log is what the code before gives (same software, same weights), so a speed-up that
    changed what training computes would show here."""
    import torch

    from model.train import TrainConfig, train
    from model.transformer import Config

    torch.set_num_threads(threads)
    shipped = json.loads((ROOT / "model" / "artifacts" / "training_log.json").read_text())["log"]
    _, log = train(Config(), TrainConfig(steps=steps))
    old = {r["step"]: r for r in shipped if "loss" in r}
    print(f"\nthe first {steps} steps, this tree against the shipped log (4 000-step run):")
    print(f"{'step':>6s} {'loss now':>10s} {'shipped':>10s} {'exact now':>10s} {'shipped':>8s}")
    for r in log:
        if "loss" not in r or r["step"] not in old:
            continue
        em = (
            f"{r['heldout_exact_match']:10.2%} {old[r['step']].get('heldout_exact_match', float('nan')):8.2%}"
            if "heldout_exact_match" in r
            else ""
        )
        print(f"{r['step']:6d} {r['loss']:10.4f} {old[r['step']]['loss']:10.4f} {em}")
    print(
        f"({log[-1]['seconds']:.0f} s at this load; the averaged model: exact match "
        f"{log[-1]['heldout_exact_match']:.2%}, held-out loss {log[-1]['heldout_loss']:.4f})"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=100, help="timed training steps per process")
    p.add_argument("--rounds", type=int, default=2, help="before/after pairs, alternated")
    p.add_argument("--before", default=BEFORE, help="the commit to compare against")
    p.add_argument(
        "--early",
        action="store_true",
        help="also time the evaluation of the barely trained model "
        "(the worst case: its outputs run to the maximum length; slow before the cache)",
    )
    p.add_argument(
        "--threads",
        type=int,
        default=2,
        help="torch threads (2: the training CLI's default on 2 "
        "cores; on a machine oversubscribed by other jobs, 1 measures the work instead of OpenMP's waits)",
    )
    p.add_argument(
        "--whole",
        action="store_true",
        help="instead, time the whole `python -m model train` (its "
        "default: 2 processes) for the code before and this tree, one after the other (about 5 min)",
    )
    p.add_argument(
        "--compare-log",
        type=int,
        default=0,
        metavar="STEPS",
        help="only train STEPS steps with this tree and print the log beside the shipped run's",
    )
    args = p.parse_args()
    if args.compare_log:
        compare_log(args.compare_log, args.threads)
        return
    if args.whole:
        load = os.getloadavg()
        print(
            f"machine: {os.cpu_count()} cores, load average {load[0]:.2f}; `python -m model train`, "
            f"4 000 steps and its evaluations, before = {args.before} and this tree"
        )
        with tempfile.TemporaryDirectory() as tmp:
            walls = {"before": whole_run(before_tree(args.before, Path(tmp))), "after": whole_run(ROOT)}
        for name, (wall, last) in walls.items():
            print(
                f"{name:7s} {wall:6.1f} s wall; held-out exact match {last['heldout_exact_match']:.2%}, "
                f"held-out loss {last['heldout_loss']:.4f}"
            )
        print(f"{walls['before'][0] / walls['after'][0]:.2f}× faster; target 90 s")
        return
    load = os.getloadavg()
    print(
        f"machine: {os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
        f"torch threads {args.threads}; before = {args.before}, after = this tree"
    )
    with tempfile.TemporaryDirectory() as tmp:
        old = before_tree(args.before, Path(tmp))
        runs: dict[str, list[dict]] = {"before": [], "after": []}
        for r in range(args.rounds):
            for name, tree in (("before", old), ("after", ROOT)):
                runs[name].append(run_worker(tree, args.steps, r == 0, args.early, args.threads))
    load = os.getloadavg()
    print(f"(load average at the end {load[0]:.2f})\n")

    for name in ("before", "after"):
        print(f"where a training step's time goes, {name} (self time, 20 steps):")
        for op, share in runs[name][0]["profile"]:
            print(f"  {share:6.1%}  {op}")
    print()

    def med(name: str, key: str) -> float:
        return statistics.median(r[key] for r in runs[name])

    rows = [
        ("training step (ms)", "ms_step", 1),
        ("evaluation, shipped model (s)", "eval_trained_s", 1),
        ("held-out loss (s)", "heldout_loss_s", 1),
    ]
    if args.early:
        rows.insert(2, (f"evaluation, after {args.steps + 20} steps (s)", "eval_early_s", 1))
    print(f"{'median of ' + str(args.rounds) + ' processes each':38s} {'before':>10s} {'after':>10s} {'ratio':>7s}")
    for label, key, _ in rows:
        b, a = med("before", key), med("after", key)
        print(f"{label:38s} {b:10.3f} {a:10.3f} {b / a:6.2f}×")
    for name in ("before", "after"):
        r = runs[name][0]
        print(f"{name}: held-out exact match of the shipped model {r['em']:.2%}, held-out loss {r['heldout_loss']:.4f}")

    def estimate(name: str) -> float:
        evals = EVALUATIONS * med(name, "eval_trained_s")
        return 4000 * med(name, "ms_step") / 1000 + evals + med(name, "heldout_loss_s")

    b, a = estimate("before"), estimate("after")
    print(
        f"\nestimated `python -m model train` (4 000 steps + {EVALUATIONS} evaluations + held-out loss), "
        f"at this load: before {b:.0f} s, after {a:.0f} s ({b / a:.2f}× faster); "
        "target 90 s on an idle 2-core machine"
    )
    shipped = json.loads((ROOT / "model" / "artifacts" / "training_log.json").read_text())["log"][-1]
    print(f"the shipped run's log: {shipped['seconds']:.0f} s")


if __name__ == "__main__":
    main()
