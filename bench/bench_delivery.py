"""Bytes on the wire before the stage is live, before and after compact delivery, in one run:
`python3 bench/bench_delivery.py` (about 2 minutes; needs Debian's chromium).

Three servers, one after another, on loopback port 8806 (--port):
  before    the tree at --before (the commit before compact delivery: JSON weights, nothing compressed),
            exported with `git archive` to a temporary folder, node_modules linked in
  no-zip    this tree with ANATOMY_COMPRESS=0 (binary weights, nothing compressed)
  after     this tree as deployed (compressed responses, precompressed traces, binary weights)
For each, headless Chromium opens /?input=42 in a fresh context and sums the encoded bytes of every
response finished (CDP Network.loadingFinished, headers included) until the stage reports ready; then
the page fetches the longest trace (777 777) as JSON and as the NDJSON stream, and those transfers
are summed the same way. Goals: ≤ 1.5 MB before the stage is live, the longest trace ≤ 200 KB; and, since the
page's JavaScript is bundled and minified (app/startup/bundle.py), ≤ 1.0 MB before the stage is live.
"js total" is every .js response until then, whichever row it is in. A --before tree that has the build
script (scripts/build-js.mjs) gets its bundle built first.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from serving import start_server, stop  # noqa: E402

from tests.browser import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

BEFORE = "6adb8f3"  # the last commit before compact delivery
READY = "window.anatomyStage && anatomyStage.ready && window.anatomy && window.anatomy.step"
LONGEST = 777_777


def kind(url: str) -> str:
    path = url.split("127.0.0.1", 1)[-1].split(":", 1)[-1].split("/", 1)[-1]
    for prefix, name in (
        ("bundle", "bundle"),
        ("vendor/three", "three.js"),
        ("vendor/katex", "KaTeX"),
        ("vendor/chartjs", "Chart.js"),
        ("api/weights", "weights"),
        ("api/trace", "trace"),
        ("static", "site js/css"),
        ("api", "other api"),
    ):
        if path.startswith(prefix):
            return name
    return "html/other"


class Wire:
    """Encoded bytes per request, from the DevTools protocol's network events."""

    def __init__(self, page):
        self.urls: dict[str, str] = {}
        self.encodings: dict[str, str] = {}
        self.bytes: dict[str, int] = {}
        cdp = page.context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
        cdp.on("Network.requestWillBeSent", lambda e: self.urls.__setitem__(e["requestId"], e["request"]["url"]))
        cdp.on("Network.responseReceived", self._response)
        cdp.on("Network.loadingFinished", lambda e: self.bytes.__setitem__(e["requestId"], int(e["encodedDataLength"])))

    def _response(self, e: dict) -> None:
        headers = {k.lower(): v for k, v in e["response"]["headers"].items()}
        self.encodings[e["requestId"]] = headers.get("content-encoding", "-")

    def snapshot(self) -> dict[str, int]:
        return dict(self.bytes)

    def by_kind(self, ids) -> dict[str, int]:
        out: dict[str, int] = defaultdict(int)
        for rid in ids:
            out[kind(self.urls.get(rid, ""))] += self.bytes[rid]
        return out


def measure(browser, base: str) -> dict:
    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, bypass_csp=True)
    page = ctx.new_page()
    wire = Wire(page)
    t0 = time.perf_counter()
    page.goto(f"{base}/?input=42")
    page.wait_for_function(READY, timeout=180_000)
    live_s = time.perf_counter() - t0
    at_live = wire.snapshot()
    out = {
        "live_s": live_s,
        "total": sum(at_live.values()),
        "kinds": wire.by_kind(at_live),
        "requests": len(at_live),
        "js": sum(n for rid, n in at_live.items() if wire.urls.get(rid, "").split("?")[0].endswith(".js")),
    }
    # each form twice: the first asking (compressed per request while the kept form is made in the
    # background, app/serving/delivery.py) and, 5 s later, the kept form
    for label, path in (
        ("trace_json", f"/api/trace?input={LONGEST}"),
        ("trace_json kept", f"/api/trace?input={LONGEST}"),
        ("trace_stream", f"/api/trace/stream?input={LONGEST}"),
        ("trace_stream kept", f"/api/trace/stream?input={LONGEST}"),
    ):
        if label.endswith("kept"):
            page.wait_for_timeout(5000)
        script = f"fetch('{path}', {{cache: 'no-store'}}).then(r => r.text()).then(t => t.length)"
        before = set(wire.snapshot())
        chars = page.evaluate(script)
        page.wait_for_timeout(300)  # loadingFinished may trail the body by an event-loop turn
        new = {rid: n for rid, n in wire.snapshot().items() if rid not in before and "trace" in wire.urls[rid]}
        out[label] = (sum(new.values()), chars, ",".join(wire.encodings.get(r, "-") for r in new))
    ctx.close()
    return out


def export_before(ref: str, into: Path) -> Path:
    archive = into / "before.tar"
    subprocess.run(["git", "archive", "--format=tar", "-o", str(archive), ref], cwd=ROOT, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "tree", filter="data")
    (into / "tree" / "node_modules").symlink_to(ROOT / "node_modules")
    if (into / "tree" / "scripts" / "build-js.mjs").is_file():
        subprocess.run(["node", "scripts/build-js.mjs"], cwd=into / "tree", check=True)
    return into / "tree"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--before", default=BEFORE, help="git revision of the old configuration")
    p.add_argument("--port", type=int, default=8806)
    args = p.parse_args()
    from playwright.sync_api import sync_playwright

    print(
        f"machine load (1/5/15 min): {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores "
        "(shared; times are noisy, bytes are not)"
    )
    results = {}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        configs = (
            ("before", export_before(args.before, Path(tmp)), {}),
            ("no-zip", ROOT, {"ANATOMY_COMPRESS": "0"}),
            ("after", ROOT, {}),
        )
        for name, root, env in configs:
            proc = start_server(args.port, root, env)
            try:
                results[name] = measure(browser, f"http://127.0.0.1:{args.port}")
            finally:
                stop(proc)
        browser.close()

    kinds = sorted({k for r in results.values() for k in r["kinds"]}, key=lambda k: -results["before"]["kinds"][k])
    names = list(results)
    print(
        f"\nbytes transferred until the stage is live (/?input=42, {BEFORE if args.before == BEFORE else args.before}"
        " = before)"
    )
    print(f"{'':14}" + "".join(f"{n:>14}" for n in names))
    for k in kinds:
        print(f"{k:14}" + "".join(f"{results[n]['kinds'].get(k, 0):>14,}" for n in names))
    print(f"{'total':14}" + "".join(f"{results[n]['total']:>14,}" for n in names))
    print(f"{'  js total':14}" + "".join(f"{results[n]['js']:>14,}" for n in names))
    print(f"{'requests':14}" + "".join(f"{results[n]['requests']:>14}" for n in names))
    print(f"{'time to live':14}" + "".join(f"{results[n]['live_s']:>13.1f}s" for n in names))
    for label in ("trace_json", "trace_json kept", "trace_stream", "trace_stream kept"):
        print(
            f"{LONGEST} {label.replace('trace_', 'as ')}".ljust(14)
            + "".join(f"{results[n][label][0]:>14,}" for n in names)
            + "   ("
            + ", ".join(f"{n}: {results[n][label][2]}" for n in names)
            + ")"
        )
    b, a = results["before"], results["after"]
    print(
        f"\nbefore the stage is live: {b['total'] / 1e6:.2f} MB -> {a['total'] / 1e6:.2f} MB "
        f"({b['total'] / a['total']:.1f}x less; goal <= 1.5 MB: "
        f"{'met' if a['total'] <= 1.5e6 else 'NOT met'}; "
        f"<= 1.0 MB (JavaScript bundled): {'met' if a['total'] <= 1.0e6 else 'NOT met'})"
    )
    print(f"JavaScript before the stage is live: {b['js'] / 1e3:.0f} KB -> {a['js'] / 1e3:.0f} KB")
    for label in ("trace_json", "trace_json kept", "trace_stream", "trace_stream kept"):
        print(
            f"longest trace {label.replace('trace_', 'as ')}: {b[label][0] / 1e3:.0f} KB -> "
            f"{a[label][0] / 1e3:.0f} KB "
            f"(goal <= 200 KB: {'met' if a[label][0] <= 200e3 else 'NOT met'})"
        )
    print(
        "(the first asking is compressed per request, so that a cold trace does not wait up to 0.9 s for\n"
        " the kept form; every later asking gets the kept form)"
    )


if __name__ == "__main__":
    main()
