"""Debian's Chromium for the browser tests: where it is, how it starts, and how a test opens the page
and waits for the stage. The `browser` fixture (tests/conftest.py) launches it once per session."""

from __future__ import annotations

import shutil
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
# software WebGL through ANGLE/EGL (about 5× faster frames than SwiftShader alone); no background
# traffic, which this machine's closed network refuses
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--use-gl=angle",
    "--use-angle=gl-egl",
    "--ignore-gpu-blocklist",
    "--enable-unsafe-swiftshader",
    "--disable-background-networking",
    "--disable-component-update",
]


def has_chromium() -> bool:
    return bool(shutil.which(CHROMIUM)) or Path(CHROMIUM).exists()


def open_stage_page(browser, url: str, viewport: dict, permissions: tuple[str, ...] = (), **context):
    """A new context and page at `url`, once the stage has drawn and the article knows its step.
    `page.errors` collects console errors and page errors (a 422 for a bad input is expected, not one)."""
    ctx = browser.new_context(viewport=viewport, bypass_csp=True, **context)  # wait_for_function evaluates strings
    if permissions:
        ctx.grant_permissions(list(permissions))
    page = ctx.new_page()
    page.errors = []
    page.on("console", lambda m: m.type == "error" and "status of 422" not in m.text and page.errors.append(m.text))
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.goto(url)
    page.wait_for_function(
        "window.anatomyStage && anatomyStage.ready && window.anatomy && window.anatomy.step", timeout=90_000
    )
    page.evaluate("anatomyStage.idle()")
    return page


def until(page, expr: str, ms: int = 60_000) -> None:
    """Until `expr` is true in the page, under the site's Content-Security-Policy (no unsafe-eval): the
    expression is part of the script Playwright sends (which the policy lets run), not compiled in the page
    as wait_for_function's predicate is (which it refuses)."""
    page.evaluate(f"""() => new Promise((ok, fail) => {{ const end = performance.now() + {ms};
      const check = () => {{ let v; try {{ v = ({expr}); }} catch {{ v = false; }}
        if (v) ok(true); else if (performance.now() > end) fail(new Error('timed out'));
        else setTimeout(check, 50); }};
      check(); }})""")


def show_input(page, text: str) -> None:
    """The reader's input, typed into the bar, until the stage draws its trace and settles."""
    if page.evaluate("anatomyStage.input.number") == int(text):
        return
    count = page.evaluate("anatomyStage.traceCount")
    page.fill("#number-input", text)
    page.press("#number-input", "Enter")
    until(page, f"anatomyStage.traceCount > {count}")
    page.evaluate("anatomyStage.idle()")
