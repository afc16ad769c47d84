"""Model benchmarks: training ms/step, greedy latency, trace latency against greedy, trace size.

Run: python bench/bench_model.py. Prints figures; asserts nothing (the machine is shared and noisy:
read the ratios, measured in one run).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

import orjson
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from model.train import ARTIFACTS, TrainConfig, train  # noqa: E402
from model.transformer import Config  # noqa: E402
from model.translate import Translator  # noqa: E402
from recorder import parameters, trace, weights_version  # noqa: E402


def timed(fn, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return out


def main() -> None:
    torch.set_num_threads(2)
    steps = 100
    t0 = time.perf_counter()
    train(Config(), TrainConfig(steps=steps, eval_every=10**9, heldout=[1000]))
    per_step = (time.perf_counter() - t0) * 1000 / steps
    shipped = json.loads((ARTIFACTS / "training_log.json").read_text())["log"][-1]
    print(
        f"training: {per_step:.1f} ms/step now ({steps} steps); shipped run: {shipped['step']} steps "
        f"in {shipped['seconds']:.0f} s including evaluations"
    )

    tr = Translator.load()
    params, version = parameters(tr.model), weights_version(tr.model)
    for n in (42, 777_777):
        g = timed(lambda n=n: tr.translate(n), 30)
        t = timed(lambda n=n: trace(tr.model, n, params, version), 30)
        j = timed(
            lambda n=n: orjson.dumps(trace(tr.model, n, params, version).to_json(), option=orjson.OPT_SERIALIZE_NUMPY),
            10,
        )
        size = len(orjson.dumps(trace(tr.model, n, params, version).to_json(), option=orjson.OPT_SERIALIZE_NUMPY))
        print(
            f"input {n}: greedy median {statistics.median(g):.1f} ms; trace median "
            f"{statistics.median(t):.1f} ms ({statistics.median(t) / statistics.median(g):.2f}× greedy); "
            f"trace + JSON {statistics.median(j):.1f} ms; JSON {size / 1024:.0f} KiB"
        )


if __name__ == "__main__":
    main()
