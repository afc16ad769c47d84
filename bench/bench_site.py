"""The static build, measured: `python3 bench/bench_site.py` (about a minute; needs Debian's chromium).

1. The build: `python -m app.site build DIR` in a fresh process, as a reader runs it (imports and the
   model's start-up included), timed.
2. The site on disk: total and by folder (site/ by what it holds: weights, programs, scenes, figures).
   Goal: at most 30 MB.
3. Bytes before the stage is live: headless Chromium opens / of the folder served by
   `python -m http.server` (which sends every file as it is, uncompressed), summing the encoded bytes
   of every response (bench_delivery.py's Wire: CDP loadingFinished) until the stage reports ready, or,
   while the static page cannot draw it yet, until the network is quiet (said so). Beside it, the same
   files gzip-compressed, as a static host that compresses (GitHub Pages, Netlify, nginx with gzip on)
   sends them, and the served page (uvicorn, this tree, /?input=42) measured the same way in this run.
   Goal: at most 1.0 MB.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_delivery import READY, Wire, kind  # noqa: E402
from serving import start_server, stop  # noqa: E402

from tests.browser import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

BINARY_SUFFIXES = (".bin", ".gz", ".woff2", ".woff", ".png")  # already dense: a host sends them as they are


def build(folder: Path) -> tuple[float, dict]:
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "app.site", "build", str(folder)], cwd=ROOT, check=True, stdout=subprocess.DEVNULL
    )
    seconds = time.perf_counter() - t0
    return seconds, json.loads((folder / "site" / "index.json").read_text())


def sizes(folder: Path) -> dict[str, int]:
    """Bytes on disk by folder: the top level, and site/ one level down (site/api two: site/api/weights)."""
    out: dict[str, int] = defaultdict(int)
    for p in folder.rglob("*"):
        if p.is_file():
            parts = p.relative_to(folder).parts
            depth = 1 if parts[0] != "site" else 3 if parts[1:2] == ("api",) else 2
            out["/".join(parts[: max(1, min(depth, len(parts) - 1))])] += p.stat().st_size
    return dict(out)


def static_kind(url: str) -> str:
    """bench_delivery's kinds, for the static folder's paths too (/site/api/weights/… is the weights)."""
    path = urlsplit(url).path
    if path.startswith("/site/scene/"):
        return "scene"
    return kind(url.replace("/site/api/", "/api/", 1))


def measure(browser, url: str, folder: Path | None = None, wait_ms: int = 60_000) -> dict:
    """Bytes until the stage is live at `url` (or until the network is quiet, if it does not go live)."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, bypass_csp=True)
    page = ctx.new_page()
    wire = Wire(page)
    t0 = time.perf_counter()
    page.goto(url)
    try:
        page.wait_for_function(READY, timeout=wait_ms)
        live = True
    except Exception:  # noqa: BLE001 - the static page without a trace: measure what it loaded
        page.wait_for_load_state("networkidle")
        live = False
    seconds = time.perf_counter() - t0
    page.wait_for_timeout(300)  # loadingFinished may trail the body by an event-loop turn
    at_live = wire.snapshot()
    kinds: dict[str, int] = defaultdict(int)
    for rid, n in at_live.items():
        kinds[static_kind(wire.urls.get(rid, ""))] += n
    out = {
        "live": live,
        "seconds": seconds,
        "total": sum(at_live.values()),
        "kinds": dict(kinds),
        "requests": len(at_live),
    }
    if folder is not None:  # the same files as a compressing static host would send them (headers left out)
        files = {local(folder, wire.urls[rid]) for rid in at_live if rid in wire.urls}
        out["gzip"] = sum(
            len(gzip.compress(f.read_bytes(), 6)) if not f.name.endswith(BINARY_SUFFIXES) else f.stat().st_size
            for f in files
            if f.is_file()
        )
    ctx.close()
    return out


def local(folder: Path, url: str) -> Path:
    path = folder / unquote(urlsplit(url).path).lstrip("/")
    return path / "index.html" if path.is_dir() else path


def serve_folder(folder: Path, port: int) -> subprocess.Popen:
    """`python -m http.server -d DIR` (the README's command), once it answers."""
    import httpx

    proc = subprocess.Popen(
        [sys.executable, "-m", "http.server", "-d", str(folder), "--bind", "127.0.0.1", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(100):
        try:
            httpx.get(f"http://127.0.0.1:{port}/", timeout=1)
            return proc
        except httpx.HTTPError:
            time.sleep(0.1)
    raise SystemExit("python -m http.server did not start")


def report(seconds: float, doc: dict, disk: dict[str, int], static: dict, served: dict | None) -> None:
    total = sum(disk.values())
    print(
        f"\nbuild: {seconds:.1f} s in a fresh process (imports and the model's start-up included); "
        f"scenes: {doc['scenes_note'] or 'built'}"
    )
    print(f"site on disk: {total / 1e6:.2f} MB (goal <= 30 MB: {'met' if total <= 30e6 else 'NOT met'})")
    for name, n in sorted(disk.items(), key=lambda kv: -kv[1]):
        print(f"  {name:34}{n:>12,}")
    rows = [("static (http.server)", static)] + ([("served (uvicorn)", served)] if served else [])
    kinds = sorted({k for _, r in rows for k in r["kinds"]}, key=lambda k: -static["kinds"].get(k, 0))
    print("\nbytes transferred before the stage is live")
    print(f"{'':16}" + "".join(f"{name:>22}" for name, _ in rows))
    for k in kinds:
        print(f"{k:16}" + "".join(f"{r['kinds'].get(k, 0):>22,}" for _, r in rows))
    print(f"{'total':16}" + "".join(f"{r['total']:>22,}" for _, r in rows))
    print(f"{'requests':16}" + "".join(f"{r['requests']:>22}" for _, r in rows))
    print(f"{'seconds':16}" + "".join(f"{r['seconds']:>21.1f}s" for _, r in rows))
    print(f"{'stage live':16}" + "".join(f"{'yes' if r['live'] else 'no (network quiet)':>22}" for _, r in rows))
    print(
        f"\nstatic, as a compressing host sends the same files (gzip -6, headers left out): "
        f"{static['gzip']:,} B (goal <= 1.0 MB: {'met' if static['gzip'] <= 1e6 else 'NOT met'}); "
        f"as http.server sends them: {static['total']:,} B"
    )
    if not static["live"]:
        print(
            "(the static page did not make the stage live: until the page computes its trace in the browser, "
            "these are the bytes it loads before asking for one)"
        )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port", type=int, default=8807, help="the file server's port; the app's is the next")
    p.add_argument("--no-served", action="store_true", help="skip the served page's measurement")
    args = p.parse_args()
    from playwright.sync_api import sync_playwright

    print(
        f"machine load (1/5/15 min): {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores "
        "(shared; times are noisy, bytes are not)"
    )
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        folder = Path(tmp) / "site"
        seconds, doc = build(folder)
        disk = sizes(folder)
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        files = serve_folder(folder, args.port)
        try:
            static = measure(browser, f"http://127.0.0.1:{args.port}/", folder, wait_ms=30_000)
        finally:
            stop(files)
        served = None
        if not args.no_served:
            app = start_server(args.port + 1)
            try:
                served = measure(browser, f"http://127.0.0.1:{args.port + 1}/?input=42")
            finally:
                stop(app)
        browser.close()
    report(seconds, doc, disk, static, served)


if __name__ == "__main__":
    main()
