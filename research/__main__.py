"""Command line: python -m research {ablations, extrapolation, alignment, followups, …}."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from research.experiments import EXPERIMENTS, GROUPS, Options, expand
from research.harness import RESULTS, read_runs, results_file, run_specs
from research.results import RECORDS, record_path
from research.views import write_desk_views, write_result_block


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m research", description=__doc__)
    p.add_argument("experiment", choices=sorted(EXPERIMENTS) + sorted(GROUPS))
    p.add_argument("--seeds", type=int, help="seeds 1..N (default: the experiment's own)")
    p.add_argument("--steps", type=int, help="training steps per run (default: the experiment's own)")
    p.add_argument("--jobs", type=int, default=1, help="parallel worker processes (one core each)")
    p.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="train on a Ray cluster (its address, or 'local' to start one here); results land as usual",
    )
    p.add_argument("--smoke", action="store_true", help="tiny runs on a few numbers, to check the plumbing")
    p.add_argument("--out", type=Path, help="results folder (default research/results; smoke: a temp folder)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--report", action="store_true", help="train nothing: rewrite the record's table from the results")
    args = p.parse_args(argv)
    out = args.out or (Path(tempfile.mkdtemp(prefix="research-smoke-")) if args.smoke else RESULTS)
    if args.smoke and out.resolve() == RESULTS.resolve():
        p.error("smoke runs never write into research/results")
    for name in expand(args.experiment):
        exp = EXPERIMENTS[name]
        opts = Options(
            seeds=args.seeds or (1 if args.smoke else exp.seeds), steps=args.steps or exp.steps, smoke=args.smoke
        )
        t0 = time.perf_counter()
        if not args.quiet:
            print(f"{name}: results in {out}", file=sys.stderr)
        runs = (
            read_runs(results_file(out, name))
            if args.report
            else run_specs(exp.specs(opts), out, name, jobs=args.jobs, progress=not args.quiet, ray=args.ray)
        )
        rows = exp.summarise(runs)
        # The record's result table is regenerated from data; smoke runs write theirs beside their data.
        record = record_path(name, RECORDS) if out.resolve() == RESULTS.resolve() else out / f"{name}.md"
        write_result_block(name, rows, record)
        if not args.quiet:
            print(f"{name}: {len(runs)} runs, {time.perf_counter() - t0:.0f} s; table in {record}", file=sys.stderr)
    # The page's view files (research/results/views/*.json), from the results and records just written.
    write_desk_views(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
