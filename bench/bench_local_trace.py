"""The trace computed in JS (static/compute/trace.js computeTrace) under Node, per input.

    python bench/bench_local_trace.py [--url http://127.0.0.1:8000] [--count 20] [--seed 25]

Starts `uvicorn app.main:app` on a free port unless --url is given; Node fetches the program, the number
words and the weights from it once (a warm-up input), then computes `count` random six-digit inputs one
after another and times each whole computeTrace (the request read, greedy decoding, every node, the header,
every value in the form the page's compact decoder gives) and, apart, the engine's share (browserTrace).
The scene and the article's figures are not in it (injected functions, none here). Beside it, the served
way for the same input: GET /api/trace in the compact form, from asking to the decoded trace (cold: the
server records the input and builds its scene and figures). Prints all three per input, medians and p95.
"""

from __future__ import annotations

import json
import statistics
import subprocess
from pathlib import Path

from serving import free_port, p95, six_digit_inputs, start_server, stop

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    a, numbers = six_digit_inputs(__doc__.split("\n")[0])
    proc = None if a.url else start_server(port := free_port())
    url = a.url or f"http://127.0.0.1:{port}"
    try:
        out = subprocess.run(
            ["node", "--no-warnings", str(ROOT / "bench" / "bench_local_trace.mjs"), url, ",".join(map(str, numbers))],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
    finally:
        if proc:
            stop(proc)
    r = json.loads(out.stdout)
    for n, whole, engine, served in zip(numbers, r["whole"], r["engine"], r["served"], strict=True):
        print(f"{n:7d}  computeTrace {whole:7.1f} ms   the engine alone {engine:7.1f} ms   served {served:7.1f} ms")
    for name, values in (
        ("computeTrace (input → the trace document)   ", r["whole"]),
        ("browserTrace alone (ids → every node)       ", r["engine"]),
        ("served compact trace (request → decoded)    ", r["served"]),
    ):
        print(f"{name}: {statistics.median(values):7.1f} ms median, {p95(values):.1f} ms p95")
    print(
        f"ratio computeTrace / served: {statistics.median(r['whole']) / statistics.median(r['served']):.3f} "
        f"(medians); {r['nodes'] // len(numbers)} nodes per trace"
    )


if __name__ == "__main__":
    main()
