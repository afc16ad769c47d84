"""The browser computing a trace itself (static/engine/ over /api/program) against the served page's request.

    python bench/bench_browser_trace.py [--url http://127.0.0.1:8000] [--count 20] [--seed 25]

Starts `uvicorn app.main:app` on a free port unless --url is given, opens a page of it in headless
Chromium and, for `count` random six-digit inputs in one run, one after another, times
  - the served page's request: GET /api/trace from asking to the parsed JSON (a cold trace: a new
    input each time, so the server records it, builds the scene and sends ~800 KB), and
  - the browser's own trace: from the source token ids to every node of the trace (greedy decoding
    over the program, then the whole graph; the program and weights fetched once before).
It prints both (median, p95, each input) and their ratio; tests/browser_parity.mjs does the timing.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from serving import free_port, p95, six_digit_inputs, start_server, stop  # noqa: E402

from tests.browser import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from tests.page.test_browser_engine import serve_tests  # noqa: E402


def main() -> None:
    a, numbers = six_digit_inputs(__doc__.split("\n")[0])
    cases = [{"model": "2017", "number": n, "ablation": [], "checkpoint": None} for n in numbers]
    proc = None if a.url else start_server(port := free_port())
    url = a.url or f"http://127.0.0.1:{port}"
    try:
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            context = b.new_context()
            serve_tests(context, url)
            page = context.new_page()
            page.goto(f"{url}/healthz")
            page.evaluate("async () => { await import('/test-modules/browser_parity.mjs'); return true; }")
            warm = [{"model": "2017", "number": 7, "ablation": [], "checkpoint": None}]
            page.evaluate("(c) => window.parity(c, null, 1)", warm)  # program, weights and JIT once
            r = page.evaluate("(c) => window.parity(c, null, 1)", cases)
            b.close()
    finally:
        if proc:
            stop(proc)
    server, browser = r["serverMs"], r["browserMs"]
    for n, s, t in zip(numbers, server, browser):
        print(f"{n:7d}  served request {s:8.1f} ms   browser trace {t:7.1f} ms")
    print(
        f"served request (GET /api/trace → parsed JSON): {statistics.median(server):8.1f} ms median, "
        f"{p95(server):.1f} ms p95"
    )
    print(
        f"browser trace (ids → every node):              {statistics.median(browser):8.1f} ms median, "
        f"{p95(browser):.1f} ms p95"
    )
    print(
        f"ratio browser / served: {statistics.median(browser) / statistics.median(server):.3f} (medians), "
        f"{sum(browser) / sum(server):.3f} (totals); {r['nodes'] // len(cases)} nodes per trace"
    )


if __name__ == "__main__":
    main()
