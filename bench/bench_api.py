"""Benchmark of the trace API, in one run: `python3 bench/bench_api.py`.

Starts `uvicorn app.main:app` on a free loopback port (one process, as deployed) and prints:
  - /api/trace latency, median and p95: cold (numbers never asked before) and cached
  - the server's own time per cold trace (its Server-Timing header)
  - throughput with 16 concurrent clients for a bounded time, cached and cold
  - the JSON size of the longest input's trace (raw and gzipped)
  - the ratio of a cold trace to a plain translation (Translator.translate, greedy, in process), and
    to a greedy that recomputes the decoder at every step (cached=False: greedy before the KV cache)
Machine load is printed too: on a busy machine every figure is worse.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import os
import random
import statistics
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from serving import Connection, free_port, start_server, stop  # noqa: E402

from app.settings import settings  # noqa: E402


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def ms(xs: list[float]) -> str:
    return f"median {1000 * statistics.median(xs):7.2f} ms   p95 {1000 * pct(xs, 0.95):7.2f} ms"


def server_ms(r: httpx.Response) -> float:
    return float(r.headers["server-timing"].split("dur=")[1]) / 1000


def latencies(client: httpx.Client, numbers: list[int]) -> tuple[list[float], list[float]]:
    wall, server = [], []
    for n in numbers:
        t0 = time.perf_counter()
        r = client.get("/api/trace", params={"input": str(n)})
        wall.append(time.perf_counter() - t0)
        r.raise_for_status()
        server.append(server_ms(r))
    return wall, server


async def throughput(port: int, numbers, seconds: float, clients: int = 16) -> tuple[float, int, int]:
    """Requests per second for `clients` concurrent clients, each drawing its next number from `numbers`."""
    done = errors = 0
    stop = time.perf_counter() + seconds

    async def worker() -> None:
        nonlocal done, errors
        conn = Connection(port)
        try:
            while time.perf_counter() < stop:
                status, _ = await conn.get(f"/api/trace?input={next(numbers)}")
                done += 1
                errors += status != 200
        finally:
            conn.close()

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(clients)))
    return done / (time.perf_counter() - t0), done, errors


def longest_input() -> int:
    """The number whose source + target rows are longest (ties: the largest number)."""
    from model.numbers import to_english, to_german_pieces

    return max(range(1_000_000), key=lambda n: (len(to_english(n)) + len(to_german_pieces(n)), n))


def translate_times(numbers: list[int]) -> tuple[list[float], list[float]]:
    """Plain greedy translation of each number, and the uncached greedy of it, interleaved."""
    import torch

    from model.decode import greedy
    from model.translate import Translator
    from model.vocab import VOCAB

    torch.set_num_threads(settings.torch_threads)
    tr = Translator.load()
    tr.translate(1)
    out, uncached = [], []
    for n in numbers:
        t0 = time.perf_counter()
        tr.translate(n)
        out.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        greedy(tr.model, [VOCAB.ids(VOCAB.source_tokens(n))], cached=False)
        uncached.append(time.perf_counter() - t0)
    return out, uncached


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cold", type=int, default=100, help="distinct numbers for the cold/cached latencies")
    p.add_argument("--seconds", type=float, default=6.0, help="duration of each throughput run")
    p.add_argument("--threads", default=str(settings.torch_threads), help="torch threads")
    p.add_argument("--workers", default=str(settings.workers), help="concurrent traces")
    args = p.parse_args()

    env = {
        "ANATOMY_TORCH_THREADS": str(args.threads),
        "ANATOMY_WORKERS": str(args.workers),
        "ANATOMY_SERVER_TIMING": "1",
    }  # the server's own time per trace (off in production)
    os.environ.update(env)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    rng = random.Random(2017)
    numbers = rng.sample(range(1_000_000), args.cold)
    load = os.getloadavg()
    print(
        f"machine: {os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
        f"server: 1 uvicorn process, torch threads {args.threads}, {args.workers} concurrent traces"
    )
    proc = start_server(port, env=env)
    try:
        with httpx.Client(base_url=base, timeout=30) as client:
            client.get("/api/trace", params={"input": "1"}).raise_for_status()  # warm the code paths
            cold_wall, cold_server = latencies(client, numbers)
            cached_wall, cached_server = latencies(client, numbers)
            print(f"trace, cold   ({len(numbers)} numbers): {ms(cold_wall)}   (server time: {ms(cold_server)})")
            print(f"trace, cached ({len(numbers)} numbers): {ms(cached_wall)}   (server time: {ms(cached_server)})")

            pool = iter(lambda: rng.choice(numbers), None)
            rps, n, err = asyncio.run(throughput(port, pool, args.seconds))
            print(
                f"throughput, cached, 16 clients, {args.seconds:.0f} s: {rps:7.1f} requests/s "
                f"({n} requests, {err} errors)"
            )
            fresh = iter(lambda: rng.randrange(1_000_000), None)
            rps, n, err = asyncio.run(throughput(port, fresh, args.seconds))
            print(
                f"throughput, cold,   16 clients, {args.seconds:.0f} s: {rps:7.1f} requests/s "
                f"({n} requests, {err} errors)"
            )

            longest = longest_input()
            body = client.get("/api/trace", params={"input": str(longest)}).content
            print(
                f"longest input {longest}: trace JSON {len(body) / 1024:.0f} KiB "
                f"({len(gzip.compress(body, 6)) / 1024:.0f} KiB gzipped)"
            )
    finally:
        stop(proc)

    plain, uncached = translate_times(numbers)
    print(f"plain translation (Translator.translate, in process): {ms(plain)}")
    print(f"greedy without the key/value cache (in process):      {ms(uncached)}")
    print(
        f"ratio, cold trace to plain translation: {statistics.median(cold_server) / statistics.median(plain):.2f}x "
        f"server time, {statistics.median(cold_wall) / statistics.median(plain):.2f}x request time"
    )
    cold_ratio = statistics.median(cold_server) / statistics.median(uncached)
    print(
        f"ratio, cold trace to uncached greedy:   {cold_ratio:.2f}x "
        f"server time, {statistics.median(cold_wall) / statistics.median(uncached):.2f}x request time"
    )


if __name__ == "__main__":
    main()
