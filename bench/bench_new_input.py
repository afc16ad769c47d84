"""A new input, from Enter to every tensor on the stage: the static build against the served page, in one run.

    python3 bench/bench_new_input.py [--site DIR] [--count 20] [--seed 25] [--port 8811]

The static build's goals, "new input to every tensor on the stage, static build, headless Chromium: at most 0.5×
the served page's request-to-stage time for the same inputs in the same run (20 random six-digit inputs)"
and "bytes per new input in the static build at most 40 KB".

Builds the site as the README says (`python -m app.site build DIR`, a fresh process; --site reuses a
built folder), serves it with `python -m http.server` and starts the app (uvicorn, this tree) beside it.
Headless Chromium opens both pages with reduced motion (the stage then sets new values at once: what is
timed is the computation and the drawing, not the value animation both pages would play alike),
lets each settle on its first input, and then, for each of `count` random six-digit inputs, in turns (the
served page, then the static one, so a change in the machine's load falls on both), puts the number in
the input field and submits the form inside the page, timing until the stage holds that input and has
drawn its last frame (anatomyStage.idle(); the time is that frame's end, noted by the stage's per-frame
hook, not when the polling notices); then, untimed, it waits for what the input started after the
stage (the beam search's table) to end, so that one page's turn never pays for the other's. Each input
is new to both pages: the served page asks the server for its trace (cold: recorded, its scene built,
sent compact and compressed); the static page computes the trace, its live figures and its scene in the
browser, reading only its shape's structure files when the shape is new to the page. Bytes per input
are the Resource Timing transfer sizes of what the page fetched for it (headers included). Beside the whole
time, the part until the page has the trace in hand (set in the store the stage follows, static/js/store.js
shownTrace): the rest, the article's live numbers and the stage's drawing, is the same work on both pages.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_site import build, serve_folder  # noqa: E402
from serving import p95, start_server, stop  # noqa: E402

from tests.browser import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

LIVE = (
    "window.anatomy && anatomy.trace && anatomy.trace.scene && window.anatomyStage && anatomyStage.ready"
    " && anatomyStage.input && !document.getElementById('input-form').hasAttribute('aria-busy')"
)

# Waits (in a page function with `n`, `form` and `t0`) until the stage holds input n and the form is no longer
# busy; a refusal or a minute rejects. bench_scrub.py's inputs wait alike.
SHOWN = """  await new Promise((ok, fail) => {
    const check = () => {
      if (anatomyStage.input && anatomyStage.input.number === n && !form.hasAttribute('aria-busy')) ok();
      else if (document.getElementById('input-error').textContent) fail(new Error('refused: ' + n));
      else if (performance.now() - t0 > 60000) fail(new Error('timed out'));
      else setTimeout(check, 1);
    };
    check();
  });
"""

# One new input, submitted as the reader's Enter does; resolves with the milliseconds until the stage holds
# it and is still, and the bytes and URLs the page fetched meanwhile.
NEW_INPUT = (
    """async (n) => {
  const form = document.getElementById('input-form'), field = document.getElementById('number-input');
  await anatomyStage.idle();
  const view = anatomyStage.stage.view;  // the end of each picture, noted (the polling below may see it late)
  if (!view.timedFrames) {
    const after = view.onFrame;
    view.onFrame = () => { after?.(); view.lastFrameAt = performance.now(); };
    view.timedFrames = true;
  }
  const seen = performance.getEntriesByType('resource').length;
  field.value = String(n);
  let traced = 0;  // when the page has the trace in hand (announced to the stage and the article)
  const stop = anatomy.stores.shownTrace.subscribe(() => { traced = performance.now(); stop(); });
  const t0 = performance.now();
  form.requestSubmit();
"""
    + SHOWN
    + """  await anatomyStage.idle();
  const ms = view.lastFrameAt - t0;  // the last picture drawn (reduced motion: the one that shows n)
  // untimed: the work the input starts after the stage (the beam search's table) ends before the other
  // page's turn, so that neither page's turn pays for the other's
  const beam = document.querySelector('figure[data-figure="beam"]');
  const drawn = () => !beam.hasAttribute('aria-busy') && beam.querySelector('.beam-best')?.dataset.number === String(n);
  for (let i = 0; i < 400 && beam && !drawn(); i++) {
    await new Promise((done) => setTimeout(done, 25));
  }
  // and half a second more: the server finishes what a trace leaves it to do (its kept compressed forms), and a
  // resource entry is queued a moment after its body
  await new Promise((done) => setTimeout(done, 500));
  const got = performance.getEntriesByType('resource').slice(seen);
  return { ms, traced: traced - t0, bytes: got.reduce((s, e) => s + e.transferSize, 0), urls: got.map((e) => e.name) };
}"""
)


def open_page(browser, url: str):
    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, reduced_motion="reduce", bypass_csp=True)
    page = ctx.new_page()
    page.goto(url)
    page.wait_for_function(LIVE, timeout=120_000)
    page.evaluate("anatomyStage.idle()")
    page.set_default_timeout(120_000)
    return page


def summary(name: str, values: list[float], unit: str) -> str:
    return f"{name:34} median {statistics.median(values):9.1f} {unit}   p95 {p95(values):9.1f} {unit}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--site", type=Path, help="a built folder to serve (default: build one now)")
    ap.add_argument("--count", type=int, default=20)
    ap.add_argument("--seed", type=int, default=25)
    ap.add_argument("--port", type=int, default=8811, help="the file server's port; the app's is the next")
    a = ap.parse_args()
    from playwright.sync_api import sync_playwright

    numbers = random.Random(a.seed).sample(range(100_000, 1_000_000), a.count)
    print(f"machine load (1/5/15 min): {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        folder = a.site
        if folder is None:
            folder = Path(tmp) / "site"
            print(f"build: {build(folder)[0]:.1f} s")
        files, app = serve_folder(folder, a.port), start_server(a.port + 1)
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            pages = {
                "served": open_page(browser, f"http://127.0.0.1:{a.port + 1}/?input=42"),
                "static": open_page(browser, f"http://127.0.0.1:{a.port}/?input=42"),
            }
            assert pages["static"].evaluate("anatomy.source") == "browser", "the static page must compute"
            assert pages["served"].evaluate("anatomy.source") == "server", "the served page must ask the server"
            runs: dict[str, list[dict]] = {name: [] for name in pages}
            for n in numbers:
                for name, page in pages.items():
                    runs[name].append(page.evaluate(NEW_INPUT, n))
                print(
                    f"{n:7d}  "
                    + "   ".join(
                        f"{name} {runs[name][-1]['ms']:7.1f} ms {runs[name][-1]['bytes']:8,} B" for name in pages
                    )
                )
        finally:
            browser.close()
            stop(app)
            stop(files)
    ms = {name: [r["ms"] for r in rs] for name, rs in runs.items()}
    sent = {name: [r["bytes"] for r in rs] for name, rs in runs.items()}
    print()
    for name in runs:
        print(summary(f"{name}: Enter to the stage still", ms[name], "ms"))
        print(summary(f"{name}:   of it, to the trace in hand", [r["traced"] for r in runs[name]], "ms"))
        print(summary(f"{name}: bytes fetched per input", sent[name], "B "))
    ratio = statistics.median(ms["static"]) / statistics.median(ms["served"])
    print(f"\nstatic / served, medians: {ratio:.2f}× (goal <= 0.5×: {'met' if ratio <= 0.5 else 'NOT met'})")
    traced = {name: statistics.median(r["traced"] for r in rs) for name, rs in runs.items()}
    print(
        f"  the trace in hand alone (the browser's computation against the server's round trip): "
        f"{traced['static'] / traced['served']:.2f}×"
    )
    worst = max(sent["static"])
    print(f"static bytes per new input: largest {worst:,} B (goal <= 40 KB: {'met' if worst <= 40_000 else 'NOT met'})")
    asked = sorted({u.split("127.0.0.1", 1)[-1] for r in runs["static"] for u in r["urls"]})
    print(f"the static page fetched for them: {', '.join(asked) or 'nothing'}")


if __name__ == "__main__":
    main()
