"""Benchmark of the 3D stage in headless Chromium (software WebGL unless the machine has a GPU).

    python bench/bench_stage.py [--url http://127.0.0.1:8000] [--input 731015]

Starts `uvicorn app.main:app` on a free port unless --url is given, opens the page, and prints:
draw calls and cells at the overview, per-frame JavaScript time (median and p95 over orbit frames),
the hover hit-test time (mean over 2 000 points), the input-to-redraw time of a real mouse move and
of a new input, all read from window.anatomyStage.stats (see static/stage/README.md).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]

from serving import free_port, start_server, stop  # noqa: E402

ARGS = [
    "--no-sandbox",
    "--use-gl=angle",
    "--use-angle=gl-egl",
    "--ignore-gpu-blocklist",
    "--enable-unsafe-swiftshader",
    "--disable-background-networking",
]

FRAMES_JS = """async (n) => {
  const s = anatomyStage.stage, out = [];
  for (let i = 0; i < n; i++) {
    s.rig.orbit(6, 0); s.rig.apply(); s.invalidate();
    await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
    out.push(anatomyStage.stats.lastFrameMs);
  }
  return out;
}"""

RENDERER_JS = """(() => {
  const g = anatomyStage.stage.renderer.getContext(), e = g.getExtension('WEBGL_debug_renderer_info');
  return e ? g.getParameter(e.UNMASKED_RENDERER_WEBGL) : '?';
})()"""

HIT_JS = """(n) => {
  // timed in bulk: performance.now() is coarsened to 0.1 ms in a page that is not cross-origin isolated
  const s = anatomyStage.stage, r = s.renderer.domElement.getBoundingClientRect();
  const pts = Array.from({length: n}, () => [r.left + Math.random() * r.width, r.top + Math.random() * r.height]);
  let hits = 0;
  s.hitTest(pts[0][0], pts[0][1]);
  const t0 = performance.now();
  for (const [x, y] of pts) if (s.hitTest(x, y)) hits++;
  return {mean: (performance.now() - t0) / n, hits};
}"""


def p95(values: list[float]) -> float:
    return sorted(values)[int(len(values) * 0.95)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--url")
    ap.add_argument("--input", default="731015")
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=800)
    a = ap.parse_args()
    proc = None if a.url else start_server(port := free_port())
    url = a.url or f"http://127.0.0.1:{port}"
    try:
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            # bypass_csp: wait_for_function evaluates strings
            page = b.new_page(viewport={"width": a.width, "height": a.height}, bypass_csp=True)
            t0 = time.perf_counter()
            page.goto(f"{url}/?input=42")
            page.wait_for_function("window.anatomyStage && anatomyStage.ready", timeout=120_000)
            print(f"ready after        {time.perf_counter() - t0:8.2f} s (page load, weights, trace, first frame)")
            page.evaluate("anatomyStage.overview()")
            page.evaluate("anatomyStage.idle()")
            st = page.evaluate("anatomyStage.stats")
            gl = page.evaluate(RENDERER_JS)
            print(f"renderer           {gl}")
            print(f"draw calls         {st['drawCalls']:8d} (overview, {st['blocks']} blocks)")
            print(f"cells drawn        {st['cellsDrawn']:8d}")
            frames = page.evaluate(FRAMES_JS, 40)
            print(
                f"frame JS, overview {statistics.median(frames):8.2f} ms median, {p95(frames):.2f} ms p95 "
                "(JS time in frame(): tweens + renderer.render submission)"
            )
            page.evaluate("anatomyStage.step(6)")
            page.evaluate("anatomyStage.idle()")
            frames = page.evaluate(FRAMES_JS, 40)
            print(
                f"frame JS, step 6   {statistics.median(frames):8.2f} ms median, {p95(frames):.2f} ms p95 "
                f"({page.evaluate('anatomyStage.stats.drawCalls')} draw calls after culling)"
            )
            page.evaluate("anatomyStage.returnToStep()")
            page.evaluate("anatomyStage.idle()")
            hit = page.evaluate(HIT_JS, 2000)
            print(
                f"hit-test           {hit['mean'] * 1000:8.1f} µs mean over 2000 random points "
                f"({hit['hits']} on a cell)"
            )
            redraw = []
            for node_id, r, c in [
                ("enc.0.self.W_q", 3, 5),
                ("enc.0.self.q", 1, 5),
                ("enc.0.self.b_q", 0, 20),
                ("enc.0.self.W_q", 10, 10),
            ] * 3:
                pt = page.evaluate("([i, r, c]) => anatomyStage.project(i, r, c)", [node_id, r, c])
                page.mouse.move(pt["x"], pt["y"])
                page.evaluate("anatomyStage.idle()")
                redraw.append(page.evaluate("anatomyStage.stats.lastInputToRedrawMs"))
            print(f"hover → redraw     {statistics.median(redraw):8.2f} ms median over {len(redraw)} moves")
            count = page.evaluate("anatomyStage.traceCount")
            page.fill("#number-input", a.input)
            t1 = time.perf_counter()
            page.press("#number-input", "Enter")
            page.wait_for_function(f"anatomyStage.traceCount > {count}", timeout=60_000)
            ms = page.evaluate("anatomyStage.stats.lastInputToRedrawMs")
            page.evaluate("anatomyStage.idle()")
            print(
                f"new input → redraw {ms:8.2f} ms (trace event to first frame of the new values); "
                f"{(time.perf_counter() - t1) * 1000:.0f} ms from Enter to the end of the animation, fetch included"
            )
            b.close()
    finally:
        if proc:
            stop(proc)


if __name__ == "__main__":
    main()
