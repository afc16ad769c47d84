"""Inputs one after another on the static page: how many a second the stage draws, and Enter-to-still for an
input of the shape on show and for one of a new shape.

    python3 bench/bench_scrub.py [--site DIR] [--before DIR] [--count 40] [--port 8821]

Builds the site as the README says (`python -m app.site build DIR`; --site reuses a built folder) and serves it
with `python -m http.server`; --before serves a second built folder (of an earlier commit) in the same run, so
that the two are measured on the same machine at the same time, in turns. Headless Chromium opens each page with
reduced motion (values are set at once: what is timed is the computation and the drawing).

- **Same shape, back to back**: the two-word numbers of the most common shape among 21–99 (the same source and
  output lengths, so the same blocks), each submitted as soon as the stage holds the one before and is still
  (no pause: the work an input leaves for later competes with the next one, as it does for a reader sweeping
  through numbers); inputs per second over the run. The issue's goal: at least 30.
- **A frame with nothing new**, one after another: the pace the browser draws at here, under which no input can
  be drawn (software WebGL and compositing on two shared cores).
- **Enter to still**, each after a pause that lets the page finish what the input before left to do: an input
  of the shape on show, and one of a new shape (alternating a three-word and a six-digit number).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_new_input import SHOWN  # noqa: E402
from bench_site import build, serve_folder  # noqa: E402
from serving import p95, stop  # noqa: E402

from tests.browser import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

LIVE = (
    "window.anatomy && anatomy.trace && anatomy.trace.scene && window.anatomyStage && anatomyStage.ready"
    " && anatomyStage.input && !document.getElementById('input-form').hasAttribute('aria-busy')"
)

# The shape of the trace on show: its blocks (ids and sizes), which a same-shape input keeps.
SHAPE = "() => anatomy.trace.scene.blocks.map((b) => `${b.id}:${b.rows}x${b.cols}`).join(',')"

# One input, submitted as the reader's Enter does; resolves when the stage holds it and is still, with the time.
ONE = (
    """async (n) => {
  const form = document.getElementById('input-form'), field = document.getElementById('number-input');
  field.value = String(n);
  const t0 = performance.now();
  form.requestSubmit();
"""
    + SHOWN
    + """  await anatomyStage.idle();
  return performance.now() - t0;
}"""
)

# Many inputs back to back: each submitted as soon as the one before is on the stage and still.
MANY = (
    """async (ns) => {
  const one = """
    + ONE
    + """;
  const t0 = performance.now();
  for (const n of ns) await one(n);
  return performance.now() - t0;
}"""
)


def open_page(browser, url: str):
    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, reduced_motion="reduce", bypass_csp=True)
    page = ctx.new_page()
    page.goto(url)
    page.set_default_timeout(120_000)
    for _ in range(1200):
        if page.evaluate(LIVE):
            break
        time.sleep(0.1)
    page.evaluate("anatomyStage.idle()")
    return page


def same_shape_numbers(page) -> list[int]:
    """The numbers 21–99 of the most common shape (a pause after each: the shape is read from the stage)."""
    shapes: dict[str, list[int]] = {}
    for n in range(21, 100):
        page.evaluate(ONE, n)
        shapes.setdefault(page.evaluate(SHAPE), []).append(n)
    return max(shapes.values(), key=len)


def measure(page, numbers: list[int], count: int) -> dict:
    page.evaluate(ONE, numbers[0])
    time.sleep(1)
    seq = [numbers[1 + i % (len(numbers) - 1)] for i in range(count)]
    seq = [n for i, n in enumerate(seq) if i == 0 or n != seq[i - 1]]
    ms = page.evaluate(MANY, seq)
    same, new = [], []
    for i in range(8):
        time.sleep(0.8)  # what the input before left for later ends first
        same.append(page.evaluate(ONE, numbers[(i % (len(numbers) - 1)) + 1]))
        time.sleep(0.8)
        new.append(page.evaluate(ONE, 777_777 - i))  # six words: another shape
        time.sleep(0.8)
        page.evaluate(ONE, numbers[0])  # back to the shape, untimed
    # the floor under all of it: frames with nothing new, one after another (the browser's own pace here)
    frame = page.evaluate(
        "async () => { const s = anatomyStage.stage, t0 = performance.now();"
        " for (let i = 0; i < 8; i++) { s.invalidate(); await s.idle(); await new Promise(requestAnimationFrame); }"
        " return (performance.now() - t0) / 8; }"
    )
    return {"rate": len(seq) / (ms / 1000), "inputs": len(seq), "same": same, "new": new, "frame": frame}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--site", type=Path, help="a built folder to serve (default: build one now)")
    ap.add_argument("--before", type=Path, help="a built folder of an earlier commit, measured in the same run")
    ap.add_argument("--count", type=int, default=40)
    ap.add_argument("--port", type=int, default=8821)
    a = ap.parse_args()
    from playwright.sync_api import sync_playwright

    print(f"machine load (1/5/15 min): {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        folder = a.site
        if folder is None:
            folder = Path(tmp) / "site"
            print(f"build: {build(folder)[0]:.1f} s")
        sites = {"now": folder, **({"before": a.before} if a.before else {})}
        servers = [serve_folder(f, a.port + i) for i, f in enumerate(sites.values())]
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            pages = {
                name: open_page(browser, f"http://127.0.0.1:{a.port + i}/?input=42") for i, name in enumerate(sites)
            }
            numbers = same_shape_numbers(pages["now"])
            print(f"same shape: {len(numbers)} numbers ({numbers[0]}, {numbers[1]}, … {numbers[-1]})")
            results = {name: measure(page, numbers, a.count) for name, page in reversed(pages.items())}
        finally:
            browser.close()
            for s in servers:
                stop(s)
    for name, r in results.items():
        print(
            f"{name:6s}: {r['rate']:5.1f} same-shape inputs a second back to back ({r['inputs']} inputs);"
            " Enter to still:"
            f" same shape median {statistics.median(r['same']):6.1f} ms (p95 {p95(r['same']):6.1f}),"
            f" new shape median {statistics.median(r['new']):6.1f} ms (p95 {p95(r['new']):6.1f});"
            f" a frame with nothing new, back to back: {r['frame']:6.1f} ms"
        )
    now = results["now"]
    print(f"goal >= 30 same-shape inputs a second: {'met' if now['rate'] >= 30 else 'NOT met'} ({now['rate']:.1f})")
    print(f"goal >= 10 new-shape inputs a second: {'met' if 1000 / statistics.median(now['new']) >= 10 else 'NOT met'}")


if __name__ == "__main__":
    main()
