"""Load on the trace API from many clients, bounded in time, on loopback only:
`python3 bench/bench_load.py` (about 2.5 minutes: start-up, then two 60-second phases).

Starts `uvicorn app.main:app --workers N` (N = --workers, default 2; several values run one after
another) on 127.0.0.1:8806 and drives it with 64 keep-alive clients (--clients) that send what a
browser sends (Accept-Encoding: gzip, deflate, br, zstd), for --seconds each:
  cold     every request a number never asked before (each trace is computed), and
  cached   numbers drawn from 32 already asked (each answered from the worker's cache).
Prints requests/s, latency p50/p90/p99/max, errors (no answer in 30 s, a broken connection or a status
other than 200) and 5xx separately. The goal: 0 errors and 0 × 5xx.
The clients run on the same machine as the server, so they take CPU from it; on a shared machine every
time is noisy (the load average is printed before and after).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import random
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from serving import Connection, start_server, stop  # noqa: E402

HEADERS = "Accept: application/json\r\nAccept-Encoding: gzip, deflate, br, zstd\r\n"
CACHED = 32


async def phase(port: int, numbers, seconds: float, clients: int) -> dict:
    latencies: list[float] = []
    errors = server_errors = sent_bytes = 0
    stop = time.perf_counter() + seconds

    async def client() -> None:
        nonlocal errors, server_errors, sent_bytes
        conn = Connection(port, HEADERS)
        try:
            while time.perf_counter() < stop:
                t0 = time.perf_counter()
                try:
                    status, body = await asyncio.wait_for(conn.get(f"/api/trace?input={next(numbers)}"), 30)
                except (TimeoutError, OSError, asyncio.IncompleteReadError, ValueError):
                    errors += 1
                    conn.close()
                    continue
                latencies.append(time.perf_counter() - t0)
                sent_bytes += len(body)
                errors += status != 200
                server_errors += status >= 500
        finally:
            conn.close()

    t0 = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    wall = time.perf_counter() - t0
    lat = sorted(latencies)

    def pct(q: float) -> float:
        return 1000 * lat[min(len(lat) - 1, int(q * len(lat)))] if lat else float("nan")

    return {
        "n": len(lat),
        "rps": len(lat) / wall,
        "p50": pct(0.50),
        "p90": pct(0.90),
        "p99": pct(0.99),
        "max": 1000 * lat[-1] if lat else float("nan"),
        "mean": 1000 * statistics.fmean(lat) if lat else 0,
        "errors": errors,
        "5xx": server_errors,
        "bytes": sent_bytes / max(1, len(lat)),
    }


async def warm(port: int, numbers: list[int], connections: int) -> None:
    """Asks each number over several new connections, so that every worker (very likely) caches it."""
    for _ in range(connections):
        conn = Connection(port, HEADERS)
        try:
            for n in numbers:
                await conn.get(f"/api/trace?input={n}")
        finally:
            conn.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workers", type=int, nargs="+", default=[2], help="uvicorn worker processes (several: each)")
    p.add_argument("--clients", type=int, default=64)
    p.add_argument("--seconds", type=float, default=60.0, help="length of each phase (cold, cached)")
    p.add_argument("--port", type=int, default=8806)
    args = p.parse_args()
    print(
        f"load before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores; "
        f"{args.clients} clients, {args.seconds:.0f} s per phase, loopback; the machine is shared and noisy"
    )
    rows = []
    for workers in args.workers:
        proc = start_server(args.port, workers=workers)
        try:
            cold = iter(random.Random(workers).sample(range(1_000_000), 1_000_000))
            hot = random.Random(1).sample(range(1_000_000), CACHED)
            asyncio.run(warm(args.port, hot, 4 * workers))
            pick = random.Random(2)
            for name, numbers in (("cold", cold), ("cached", (pick.choice(hot) for _ in itertools.count()))):
                rows.append((workers, name, asyncio.run(phase(args.port, numbers, args.seconds, args.clients))))
        finally:
            stop(proc)
    print(
        f"\n{'workers':>7} {'phase':>7} {'requests':>9} {'req/s':>8} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} "
        f"{'max ms':>8} {'errors':>7} {'5xx':>5} {'KB/answer':>10}"
    )
    for workers, name, r in rows:
        print(
            f"{workers:>7} {name:>7} {r['n']:>9} {r['rps']:>8.1f} {r['p50']:>8.0f} {r['p90']:>8.0f} {r['p99']:>8.0f} "
            f"{r['max']:>8.0f} {r['errors']:>7} {r['5xx']:>5} {r['bytes'] / 1e3:>10.1f}"
        )
    print(f"load after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    bad = sum(r["errors"] + r["5xx"] for _, _, r in rows)
    print("goal 0 errors and 0 x 5xx: " + ("met" if bad == 0 else f"NOT met ({bad})"))


if __name__ == "__main__":
    main()
