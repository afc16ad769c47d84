"""Key/value-cached decoding against recomputing the decoder at every step, in one process, interleaved:
`python3 bench/bench_decode.py`.

Prints median milliseconds, uncached (cached=False, the code before the cache) and cached, and their
ratio, for: greedy of one number (a short and the longest input), beam search 4 of the same, greedy of
the 2 000 held-out numbers in one batch (the training's evaluation), and the in-process parts of a
cold trace (the greedy that checks the correct German as a draft, which the trace runs, and its cost
when the draft is wrong from the first piece; the trace; the compact form the service caches) beside
a plain greedy translation. Asserts nothing: the machine is shared and noisy; read the ratios.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.settings import settings  # noqa: E402
from model.data import heldout_numbers  # noqa: E402
from model.decode import beam_search, greedy, greedy_checking  # noqa: E402
from model.numbers import to_german_pieces  # noqa: E402
from model.train import exact_match, load  # noqa: E402
from model.vocab import VOCAB  # noqa: E402

LONGEST = 777_777  # 11 output pieces + </s>, among the longest


def interleaved(fns: dict[str, callable], repeat: int) -> dict[str, float]:
    """Median ms of each function, the functions called in turn `repeat` times (same load for all)."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    for f in fns.values():
        f()  # warm
    for _ in range(repeat):
        for k, f in fns.items():
            t0 = time.perf_counter()
            f()
            times[k].append(1000 * (time.perf_counter() - t0))
    return {k: statistics.median(v) for k, v in times.items()}


def line(label: str, before: float, after: float) -> None:
    print(f"{label:44s} {before:10.2f} {after:10.2f} {before / after:7.2f}×")


def main() -> None:
    torch.set_num_threads(settings.torch_threads)  # as the service runs
    load_avg = os.getloadavg()
    print(f"machine: {os.cpu_count()} cores, load average {load_avg[0]:.2f}; torch threads {torch.get_num_threads()}")
    model = load()
    print(f"{'median ms':44s} {'uncached':>10s} {'cached':>10s} {'ratio':>8s}")
    for n in (42, LONGEST):
        src = VOCAB.ids(VOCAB.source_tokens(n))
        m = interleaved(
            {"u": lambda s=src: greedy(model, [s], cached=False), "c": lambda s=src: greedy(model, [s])}, 40
        )
        line(f"greedy, {n}", m["u"], m["c"])
        m = interleaved(
            {"u": lambda s=src: beam_search(model, s, cached=False), "c": lambda s=src: beam_search(model, s)}, 15
        )
        line(f"beam search 4, {n}", m["u"], m["c"])
    held = heldout_numbers()
    srcs = [VOCAB.ids(VOCAB.source_tokens(n)) for n in held]
    m = interleaved({"u": lambda: greedy(model, srcs, cached=False), "c": lambda: greedy(model, srcs)}, 3)
    line("greedy, 2 000 held-out numbers, one batch", m["u"], m["c"])
    m = interleaved(
        {
            "u": lambda: [greedy(model, srcs[i : i + 1000], cached=False) for i in (0, 1000)],
            "c": lambda: exact_match(model, held),
        },
        3,
    )
    line("evaluation: 2 × 1 000 uncached / exact_match", m["u"], m["c"])

    # the cold trace's work in process, beside a plain greedy translation of the same number
    from app.documents.schemas import ServedTraceHeader
    from app.service.model_service import CachedTrace
    from recorder import parameters, trace, weights_version

    params, version = parameters(model), weights_version(model)
    print(f"\n{'cold trace parts, median ms':44s} {'42':>10s} {LONGEST:>10d}")
    rows: dict[str, list[float]] = {}
    for n in (42, LONGEST):
        src = VOCAB.ids(VOCAB.source_tokens(n))
        t = trace(model, n, params, version)
        m = interleaved(
            {
                "plain greedy, uncached": lambda s=src: greedy(model, [s], cached=False),
                "plain greedy, cached": lambda s=src: greedy(model, [s]),
                "greedy checking the correct German": lambda s=src, n=n: greedy_checking(
                    model, s, VOCAB.ids(to_german_pieces(n))
                ),
                "… a draft wrong from its first piece": lambda s=src, n=n: greedy_checking(
                    model, s, VOCAB.ids(to_german_pieces(n))[1:]
                ),
                "trace() (with that greedy)": lambda n=n: trace(model, n, params, version),
                "CachedTrace.build()": lambda t=t: CachedTrace.build(ServedTraceHeader.of(t.header()), t.nodes),
            },
            20,
        )
        for k, v in m.items():
            rows.setdefault(k, []).append(v)
    for k, (a, b) in rows.items():
        print(f"{k:44s} {a:10.2f} {b:10.2f}")
    for i, n in enumerate((42, LONGEST)):
        # the figures and the scene are the page's now (static/compute/page_parts.js), not the server's
        work = sum(rows[k][i] for k in ("trace() (with that greedy)", "CachedTrace.build()"))
        print(
            f"{n}: cold trace work {work:.1f} ms = {work / rows['plain greedy, uncached'][i]:.2f}× an uncached "
            f"greedy, {work / rows['plain greedy, cached'][i]:.2f}× a cached greedy"
        )


if __name__ == "__main__":
    main()
