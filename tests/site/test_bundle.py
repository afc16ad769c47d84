"""The page's JavaScript is served bundled and minified (app/startup/bundle.py, scripts/build-js.mjs): every module
the templates name is built, the app refuses to start without the bundle or with one older than its
sources, and the article page loads the bundle and nothing of the unbundled modules or of node_modules'
three.js."""

from __future__ import annotations

import hashlib
import json
import subprocess

import pytest

from app.startup import bundle
from tests.browser import until

ROOT = bundle.ROOT
READY = "window.anatomyStage && anatomyStage.ready && window.anatomy && window.anatomy.step"
MANIFEST = json.loads((bundle.BUNDLE / "manifest.json").read_text(encoding="utf-8"))


def test_every_module_the_templates_name_is_built_and_served_compressed(client):
    named = bundle.template_entries()
    assert {"js/page.js", "stage/main.js", "js/embed.js", "js/math.js"} <= set(named)
    assert MANIFEST["entries"] == named
    for entry in named:
        assert (ROOT / "static" / entry).is_file(), entry  # its source
        r = client.get(f"/bundle/{entry}", headers={"Accept-Encoding": "br"})
        assert r.status_code == 200 and "javascript" in r.headers["content-type"], entry
        if len(r.content) > 1024:  # app/serving/once.py leaves the smallest as they are
            assert r.headers["content-encoding"] == "br", entry
    assert client.get("/bundle/manifest.json").status_code == 404  # only what the build wrote for the page


def test_no_template_loads_an_unbundled_module():
    pages = "".join(p.read_text(encoding="utf-8") for p in (ROOT / "templates").rglob("*.html"))
    assert '<script type="module"' in pages
    assert pages.count('<script type="module"') == pages.count('<script type="module" src="/bundle/')


def test_the_build_reads_the_same_entries_as_the_app():
    script = "import('./scripts/build-js.mjs').then(m => console.log(JSON.stringify(m.templateEntries())))"
    run = subprocess.run(["node", "-e", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout) == bundle.template_entries()


def test_three_is_inside_the_bundle_minified():
    stage = (bundle.BUNDLE / "stage" / "main.js").read_text(encoding="utf-8")
    three = sum(
        len((ROOT / "node_modules/three/build" / f).read_text(encoding="utf-8"))
        for f in ("three.module.js", "three.core.js")
    )
    assert "node_modules/three/build/three.core.js" in MANIFEST["inputs"]
    # the stage with three.js inside: 0.32 of three's two files minified, 0.43 with whitespace only, 0.66 as is
    assert len(stage) < 0.36 * three and stage.count("/**") <= 2
    for f in MANIFEST["files"]:
        if f.endswith(".js"):
            text = (bundle.BUNDLE / f).read_text(encoding="utf-8")
            assert 'from"three"' not in text and "vendor/three" not in text, f  # nothing left for the import map


def fake_project(tmp_path, entries=("js/a.js",)):
    """A project folder with one template, the sources and a bundle built from them (by hand)."""
    (tmp_path / "templates").mkdir(parents=True)
    (tmp_path / "templates" / "p.html").write_text(
        "".join(f'<script type="module" src="/bundle/{e}"></script>\n' for e in entries)
    )
    inputs = {}
    for e in entries:
        (tmp_path / "static" / e).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "static" / e).write_text(f"console.log('{e}');\n")
        inputs[f"static/{e}"] = hashlib.sha256((tmp_path / "static" / e).read_bytes()).hexdigest()
        (tmp_path / "bundle" / e).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "bundle" / e).write_text("console.log(1)")
    manifest = {"entries": list(entries), "files": list(entries), "inputs": inputs}
    (tmp_path / "bundle" / "manifest.json").write_text(json.dumps(manifest))
    return tmp_path


def test_a_stale_or_incomplete_bundle_is_named(tmp_path):
    root = fake_project(tmp_path)
    assert bundle.problems(root) == []
    (root / "static/js/a.js").write_text("console.log('edited');\n")
    assert bundle.problems(root) == ["static/js/a.js changed since the build"]
    root = fake_project(tmp_path / "second")
    with (root / "templates" / "p.html").open("a") as f:
        f.write('<script type="module" src="/bundle/js/new.js"></script>\n')
    assert bundle.problems(root) == ["js/new.js is named by the templates but not built"]
    root = fake_project(tmp_path / "third")
    (root / "bundle/js/a.js").unlink()
    assert bundle.problems(root) == ["js/a.js is missing from the bundle"]


def test_without_its_bundle_the_app_refuses_to_start(tmp_path, monkeypatch, capsys):
    from app import main

    monkeypatch.setattr(main, "ROOT", fake_project(tmp_path))
    main.create_app()  # a whole bundle: it starts
    (tmp_path / "bundle" / "manifest.json").unlink()
    with pytest.raises(SystemExit) as stopped:
        main.create_app()
    assert stopped.value.code == 3
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "npm run build" in lines[0] and "no bundle" in lines[0]


def test_the_page_loads_the_bundle_and_no_unbundled_module(browser, live_server):
    """The article page until its stage is live: its scripts come from /bundle, each answered; none from
    the sources in /static nor three.js from node_modules; the stage's own CSS (bundle/stage/stage.css) too;
    under the app's Content-Security-Policy (not bypassed here, unlike the other page tests), nothing refused."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = ctx.new_page()
        answered: dict[str, int] = {}
        page.on("response", lambda r: answered.__setitem__(r.url.removeprefix(live_server), r.status))
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: m.type == "error" and errors.append(m.text))
        page.goto(f"{live_server}/?input=42")
        until(page, READY, 90_000)
        page.evaluate("anatomyStage.idle()")
    finally:
        ctx.close()
    scripts = {u for u in answered if u.split("?")[0].endswith(".js")}
    own = ("js/embed.js", "js/deeper.js")  # the embed view's and the topic pages' own scripts
    assert {f"/bundle/{e}" for e in bundle.template_entries() if e not in own} <= scripts
    assert "/bundle/stage/stage.css" in answered
    assert [u for u in scripts if u.startswith("/static/") or u.startswith("/vendor/three")] == []
    assert {u: s for u, s in answered.items() if s >= 400} == {} and errors == []
