"""The page's cold trace against a plain translation, and where its time goes: `python3 bench/bench_trace_encoding.py`.

In one run, for 20 random six-digit inputs (the static build's goal "a cold trace's request time at most 1.5× a
plain greedy translation of the same inputs"):
  - the request time as the page has it: headless Chromium runs the page's own client (static/js/api.js)
    from the request to the decoded trace object, and then the stage's tensors (static/stage/data.js
    traceTensors), for each form the client can ask: the NDJSON stream (the page until the compact form),
    the JSON document (the stage alone) and the compact form (`Accept: application/vnd.anatomy.trace`,
    the page now), each input cold (the server keeps one trace at a time, and each form runs through
    all inputs before the next form starts: every request is a new trace). The browser's Resource Timing
    splits each into the server's own time (its Server-Timing header), the rest of the wait for the
    first byte (compression, the response starting), the transfer, and the client's decoding after the
    last byte; bytes sent (compressed) and decoded.
  - in this process, for the same inputs: the plain greedy translation (Translator.translate, the
    baseline) and each part of a cold trace's server time: recording (the figures and the scene are the
    page's, after the trace is in hand, the same work on the static site),
    the JSON encoding, the compact encoding, and compressing either (zstd 4: the middleware's choice for
    a browser's Accept-Encoding).
The server is one uvicorn process as deployed; between requests the bench waits `--pause` seconds (a
reader's pace: the kept Brotli form a cold JSON request queues is made in the background meanwhile). The
forms take turns, input by input, so that a change in the machine's load falls on all of them alike.
`--before DIR` times the page's client of another checkout (the NDJSON stream before the compact form)
against a server started from DIR, in the same turns.
Machine load is printed too: on a busy machine every figure is worse.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from serving import free_port, start_server, stop  # noqa: E402

from app.settings import settings  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update"]
COMPACT = "application/vnd.anatomy.trace"

# One request from the page's client, timed in the page: `form` picks the client function.
TIMED = """async ({ n, form }) => {
  const api = await import('/static/js/api.js'), data = await import('/static/stage/data.js');
  performance.clearResourceTimings();
  const t0 = performance.now();
  const trace = form === 'ndjson' ? await api.readTraceStream(api.traceUrl(n, { stream: true }))
    : form === 'json' ? await api.fetchJson(api.traceUrl(n)) : await api.fetchCompactTrace(api.traceUrl(n));
  const t1 = performance.now();
  data.traceTensors(trace);
  const t2 = performance.now();
  let r;  // the resource entry is queued a moment after the body has been read
  for (let i = 0; i < 200 && !r; i++) {
    r = performance.getEntriesByType('resource').find((e) => e.name.includes('/api/trace'));
    if (!r) await new Promise((done) => setTimeout(done, 5));
  }
  return { trace: t1 - t0, tensors: t2 - t1, server: r.serverTiming.find((s) => s.name === 'trace')?.duration ?? 0,
           first_byte: r.responseStart - t0, last_byte: r.responseEnd - t0, sent: r.encodedBodySize,
           decoded: r.decodedBodySize, nodes: trace.nodes.length };
}"""


def median(rows: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def page_times(lanes: list[tuple[str, str, str]], numbers: list[int], pause: float) -> dict[str, list[dict]]:
    """Each lane's (label, server base URL, client form) rows of TIMED figures (ms, bytes). The lanes take
    turns, lane j on input i − j in round i, so that drift in the machine's load falls on all alike and no
    request repeats the input its server answered last (each server keeps one trace: every request is cold)."""
    from playwright.sync_api import sync_playwright

    out: dict[str, list[dict]] = {label: [] for label, _, _ in lanes}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        pages = {}
        for base in dict.fromkeys(base for _, base, _ in lanes):
            pages[base] = browser.new_page()
            pages[base].goto(f"{base}/healthz")
        for j, (_, base, form) in enumerate(lanes):  # warm each lane's code paths, on inputs not measured
            pages[base].evaluate(TIMED, {"n": 11 + j, "form": form})
        for i in range(len(numbers) + len(lanes) - 1):
            for j, (label, base, form) in enumerate(lanes):
                if 0 <= i - j < len(numbers):
                    time.sleep(pause)
                    out[label].append(pages[base].evaluate(TIMED, {"n": numbers[i - j], "form": form}))
        browser.close()
    return out


def server_parts(numbers: list[int]) -> dict[str, list[float]]:
    """In process: the plain translation and each part of a cold trace's server time, per input (ms)."""
    import torch
    import zstandard

    from app.documents.schemas import ServedTraceHeader, weights_url
    from app.service import model_service as served
    from app.serving.serialize import dumps
    from recorder import trace

    torch.set_num_threads(settings.torch_threads)
    svc = served.ModelService.load()
    tr, model = svc.translator, svc.translator.model
    tr.translate(1)
    svc.trace_sync(7)
    try:
        from app.serving.trace_bytes import compact_body
    except ImportError:  # before the compact form
        compact_body = None
    zstd = zstandard.ZstdCompressor(level=4)
    parts: dict[str, list[float]] = {
        k: []
        for k in (
            "greedy",
            "record",
            "json",
            "compact",
            "zstd json",
            "zstd compact",
            "json bytes",
            "compact bytes",
            "json zstd bytes",
            "compact zstd bytes",
        )
    }
    for n in numbers:
        t0 = time.perf_counter()
        tr.translate(n)
        t1 = time.perf_counter()
        t = trace(model, n, svc.params, svc.version)
        t2 = time.perf_counter()
        t4 = time.perf_counter()
        header = ServedTraceHeader.of(
            t.header(), model=svc.name, checkpoint=None, weights_url=weights_url(svc.name, None)
        )
        body = dumps(header)[:-1] + b',"nodes":[' + b",".join(dumps(node.to_json()) for node in t.nodes) + b"]}"
        t5 = time.perf_counter()
        compact = compact_body(header, t.nodes)[0] if compact_body else b""
        t6 = time.perf_counter()
        zj = zstd.compress(body)
        t7 = time.perf_counter()
        zc = zstd.compress(compact) if compact else b""
        t8 = time.perf_counter()
        for key, dt in zip(
            ("greedy", "record", "json", "compact", "zstd json", "zstd compact"),
            (t1 - t0, t2 - t1, t5 - t4, t6 - t5, t7 - t6, t8 - t7),
        ):
            parts[key].append(1000 * dt)
        sizes = (body, compact, zj, zc)
        for key, b in zip(("json bytes", "compact bytes", "json zstd bytes", "compact zstd bytes"), sizes):
            parts[key].append(len(b))
    return parts


def report(rows: dict[str, list[dict]], parts: dict[str, list[float]]) -> None:
    greedy = statistics.median(parts["greedy"])
    print(f"plain greedy translation (Translator.translate, in process): median {greedy:6.2f} ms")
    print(
        "server parts, in process, median ms: "
        + ", ".join(f"{k} {statistics.median(v):.2f}" for k, v in parts.items() if "bytes" not in k and k != "greedy")
    )
    print(
        "bytes, median: "
        + ", ".join(f"{k} {statistics.median(v) / 1024:.0f} KiB" for k, v in parts.items() if "bytes" in k)
    )
    print(
        f"{'form':14s} {'trace':>7s} {'+tensors':>8s} {'server':>7s} {'1st byte':>8s} {'last':>7s} "
        f"{'decode':>7s} {'sent KiB':>8s} {'decoded':>8s}  ratio to greedy (trace, +tensors)"
    )
    for form, rs in rows.items():
        total = median(rs, "trace")
        with_tensors = statistics.median(r["trace"] + r["tensors"] for r in rs)
        decode = statistics.median(r["trace"] - r["last_byte"] for r in rs)
        print(
            f"{form:14s} {total:7.2f} {with_tensors:8.2f} {median(rs, 'server'):7.2f} "
            f"{median(rs, 'first_byte'):8.2f} "
            f"{median(rs, 'last_byte'):7.2f} {decode:7.2f} {median(rs, 'sent') / 1024:8.0f} "
            f"{median(rs, 'decoded') / 1024:8.0f}  {total / greedy:.2f}x, {with_tensors / greedy:.2f}x"
        )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--inputs", type=int, default=20, help="random six-digit inputs")
    p.add_argument("--pause", type=float, default=0.3, help="seconds between requests (a reader's pace)")
    p.add_argument("--forms", default="ndjson,json,compact", help="which client forms to time")
    p.add_argument("--seed", type=int, default=25)
    p.add_argument("--before", help="a checkout of the app before the compact form (its page's stream, timed first)")
    args = p.parse_args()
    numbers = random.Random(args.seed).sample(range(100_000, 1_000_000), args.inputs)
    env = {
        "ANATOMY_TORCH_THREADS": str(settings.torch_threads),
        "ANATOMY_SERVER_TIMING": "1",
        "ANATOMY_CACHE_MB": "0",
    }  # a cache of one trace: every request in the order below is cold
    load = os.getloadavg()
    print(
        f"machine: {os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
        f"{len(numbers)} inputs, every request cold, {args.pause} s between requests"
    )
    procs, lanes = [], []
    try:
        if args.before:  # the page before the compact form: the same client against another checkout's server
            port = free_port()
            procs.append(start_server(port, root=Path(args.before), env=env))
            lanes.append(("ndjson, before", f"http://127.0.0.1:{port}", "ndjson"))
        port = free_port()
        procs.append(start_server(port, env=env))
        lanes += [(form, f"http://127.0.0.1:{port}", form) for form in args.forms.split(",")]
        rows = page_times(lanes, numbers, args.pause)
    finally:
        for proc in procs:
            stop(proc)
    report(rows, server_parts(numbers))


if __name__ == "__main__":
    main()
