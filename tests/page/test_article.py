"""The article as a reader gets it: 29 titled steps, every literature number in the ledger and every
ledger entry used or set aside on purpose, each figure's data served and recomputed, the research
desk honest when results are missing; and in Debian's Chromium: live values and the beam search
follow the input, every figure is drawn, a marked number opens its ledger entry, and at desktop and
phone widths text, figures and stage never overlap (screenshots in test-artifacts/)."""

from __future__ import annotations

import html as htmllib
import json
import math
import re
from pathlib import Path

import pytest

from app.documents.content import CONTENT, read_tsv, read_unused, split_front_matter
from app.routes import figures as app_figures
from app.service import research_views
from app.settings import settings
from article import figures
from article.format import format_number
from tests.in_page import page_parts
from tests.page.test_page import Page

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
FIGURE_NAMES = [*app_figures.MODEL_FIGURES, *app_figures.RESEARCH]
STEP_BLOCK = re.compile(r'<section id="step-(\d+)" class="step".*?</section>', re.S)


@pytest.fixture(scope="module")
def index_html(client) -> str:
    return client.get("/").text


def step_files() -> list[tuple[dict, str]]:
    return [split_front_matter(p.read_text(encoding="utf-8")) for p in sorted((CONTENT / "steps").glob("*.md"))]


def text_of(fragment: str) -> str:
    return htmllib.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", fragment))).strip()


# ---- the steps and the ledger -------------------------------------------------------------------


def test_all_29_steps_are_present_in_order_with_their_titles_and_text(index_html):
    blocks = list(STEP_BLOCK.finditer(index_html))
    assert [int(b.group(1)) for b in blocks] == list(range(1, 30))
    for (meta, _), block in zip(step_files(), blocks, strict=True):
        body = block.group(0)
        title = re.search(r'<h2 id="step-\d+-title"><a [^>]*>(.*?)</a></h2>', body).group(1)
        assert htmllib.unescape(title) == meta["title"]
        text = text_of(body.split('<div class="step-body">', 1)[1])
        assert len(text) > 400, f"step {meta['step']} has little text"


def test_the_progress_bar_deep_links_every_step(index_html):
    nav = re.search(r'<nav class="progress".*?</nav>', index_html, re.S).group(0)
    assert re.findall(r'href="#step-(\d+)"', nav) == [str(n) for n in range(1, 30)]


def test_every_marked_number_resolves_and_every_entry_is_used_or_set_aside(client):
    content = client.app.state.content
    ids = {f.id for f in content.facts}
    uses = content.fact_uses
    unused = read_unused(CONTENT / "facts_unused.txt")
    assert set(uses) <= ids, f"marked but not in the ledger: {sorted(set(uses) - ids)}"
    assert set(unused) <= ids, f"listed as unused but not in the ledger: {sorted(set(unused) - ids)}"
    assert not set(uses) & set(unused), f"used yet listed as unused: {sorted(set(uses) & set(unused))}"
    assert ids == set(uses) | set(unused), f"neither used nor set aside: {sorted(ids - set(uses) - set(unused))}"
    assert all(unused.values()), "each unused entry says why"


def test_marked_numbers_are_focusable_and_underlined(index_html, client):
    spans = re.findall(r"<span\b[^>]*\bdata-fact=[^>]*>", index_html)
    assert len(spans) > 50 and all('tabindex="0"' in s for s in spans)
    css = client.get("/static/css/site.css").text
    assert re.search(r"\[data-fact\]\s*\{[^}]*text-decoration:\s*underline", css)


def test_the_ledger_page_says_where_each_entry_is_used(client):
    page = client.get("/ledger").text
    content = client.app.state.content
    for fid, places in content.fact_uses.items():
        row = re.search(rf'<tr id="fact-{re.escape(fid)}">.*?</tr>', page, re.S).group(0)
        for link, _ in places:
            assert f'href="{link}"' in row, (fid, link)
    for fid in content.unused_facts:
        row = re.search(rf'<tr id="fact-{re.escape(fid)}">.*?</tr>', page, re.S).group(0)
        assert "not quoted:" in row


def test_the_ledger_entry_has_value_what_and_quoted_source_with_section(client):
    facts = client.get("/api/facts").json()["facts"]
    assert facts and all(f["value"] and f["what"] and f["source"] for f in facts)
    assert sum(bool(re.search(r"§\s*\d|Table \d|Figure \d|footnote", f["source"])) for f in facts) > 0.9 * len(facts)


def test_references_how_it_was_made_and_cite_follow_the_steps(index_html):
    tail = index_html.split('<section id="step-29"', 1)[1]
    assert '<ol class="references">' in tail and 'id="ref-1"' in tail
    made = re.search(r'<section id="how-made".*?</section>', tail, re.S).group(0)
    for command in (
        "python -m model train",
        "python -m model eval",
        "python -m app.figures NAME",
        "python -m research ablations",
    ):
        assert command in made
    for name in app_figures.MODEL_FIGURES:
        assert f"<code>{name}</code>" in made
    cite = re.search(r'<section id="cite".*?</section>', tail, re.S).group(0)
    assert re.search(r"<pre class=\"bibtex\">@misc\{anatomy-of-the-transformer,.*title\s*=.*year\s*=", cite, re.S)


def test_every_figure_placeholder_has_data_or_a_live_source(index_html):
    placed = set(re.findall(r'<figure data-figure="([^"]+)"', index_html))
    assert placed == set(FIGURE_NAMES) | {"beam"}


def test_chartjs_and_the_figure_scripts_are_served_locally(client, index_html):
    for src in ("/bundle/js/figures.js", "/bundle/js/progress.js"):
        assert f'src="{src}"' in index_html
    # Chart.js is not loaded with the page (nothing needs its 210 KB before the stage is live): static/js/charts.js
    # adds it when the first chart is drawn, from here
    charts = (ROOT / "static/js/charts.js").read_text()
    assert "chartjs" not in index_html and "/vendor/chartjs/chart.umd.min.js" in charts
    for src in ("/vendor/chartjs/chart.umd.min.js", "/bundle/js/figures.js", "/bundle/js/progress.js"):
        r = client.get(src)
        assert r.status_code == 200 and "javascript" in r.headers["content-type"], src


# ---- the figures' data, recomputed ------------------------------------------------------------------


def figure(client, name: str) -> dict:
    r = client.get(f"/api/figures/{name}")
    assert r.status_code == 200, (name, r.text[:200])
    body = r.json()
    assert body["name"] == name and body["title"]
    return body["data"]


def test_the_figure_list_and_an_unknown_name(client):
    assert client.get("/api/figures").json()["names"] == FIGURE_NAMES
    r = client.get("/api/figures/no-such-figure")
    assert r.status_code == 404 and "pe-pattern" in r.json()["detail"]["message"]


def test_pe_figures_are_the_models_table_and_the_rotation_holds(client):
    assert figure(client, "pe-pattern") == figures.pe_pattern(50, 32)
    rotation = figure(client, "pe-rotation")
    assert [r["k"] for r in rotation["rows"]] == [1, 2, 5, 10]
    assert all(r["max_abs_error"] < 1e-5 for r in rotation["rows"])


def test_softmax_saturation_is_recomputed_and_scaling_keeps_the_gradient(client):
    data = figure(client, "softmax-saturation")
    assert data == json.loads(json.dumps(figures.softmax_saturation()))
    assert data["d_k"] == [2**i for i in range(11)]
    assert data["unscaled"]["gradient"][-1] < 0.2 < 0.7 < min(data["scaled"]["gradient"])


def test_attention_stat_per_head_averages_to_the_article_numbers(client):
    data = figure(client, "attention-stat")
    model_figs = client.get("/api/model").json()["figures"]
    flat_self = [v for layer in data["self"] for v in layer]
    flat_cross = [v for layer in data["cross"] for v in layer]
    assert len(flat_self) == len(flat_cross) == model_figs["n_layers"] * model_figs["n_heads"]
    assert math.isclose(sum(flat_self) / len(flat_self), model_figs["heldout_max_weight_self"], abs_tol=1e-5)
    assert math.isclose(sum(flat_cross) / len(flat_cross), model_figs["heldout_max_weight_cross"], abs_tol=1e-5)


def test_lr_schedule_uses_the_shipped_config_and_peaks_at_7e_4_for_the_paper(client):
    data = figure(client, "lr-schedule")
    cfg = figures.training_curves()["train_config"]
    assert data == json.loads(json.dumps(figures.lr_schedules(32, cfg["warmup"], cfg["steps"])))
    assert data["paper_base"]["peak_step"] == 4000 and round(data["paper_base"]["peak_lr"], 5) == 0.0007
    assert data["miniature"]["step"][-1] == cfg["steps"]


def test_training_curves_are_the_shipped_log(client):
    assert figure(client, "training-curves") == json.loads(json.dumps(figures.training_curves()))


def test_param_count_matches_the_model_and_the_paper_formula(client):
    data = figure(client, "param-count")
    assert data["total"] == data["model_count"] == client.get("/api/model").json()["parameter_count"]
    assert round(data["paper"]["base"] / 1e6, 2) == 63.08 and round(data["paper"]["big"] / 1e6, 2) == 214.25


@pytest.mark.parametrize("name", list(app_figures.RESEARCH))
def test_research_figures_show_committed_results_or_say_not_yet_run(client, name):
    from research.results import load

    data = figure(client, name)
    record = load(app_figures.RESEARCH[name])  # recomputed from the results, not read from the view file
    assert data["command"].startswith("python -m research")
    assert data["claim_html"] and data["hypothesis_html"] and data["design_html"]
    parts = record.get("parts") or [record]
    assert len(data["parts"]) == len(parts)
    for shown, part in zip(data["parts"], parts, strict=True):
        if part["runs"]:
            assert shown["status"] == "results" and len(shown["rows"]) == len(part["summary"])
            assert shown["runs"] == len(part["runs"])
        else:  # no numbers invented
            assert shown["status"] == "not yet run" and shown["rows"] == [] and shown["chart"] is None
    assert data["status"] == ("results" if record["runs"] else "not yet run")


def test_the_research_figures_are_the_view_files_the_desk_wrote():
    from research.views import pages

    assert sorted(app_figures.RESEARCH.values()) == sorted(pages())
    assert all(name == f"research-{view}" for name, view in app_figures.RESEARCH.items())


def test_a_broken_or_missing_view_file_does_not_break_the_page(client, monkeypatch, tmp_path):
    (tmp_path / "alignment.json").write_text('{"view": 1, "name": "alignm')  # half-written
    monkeypatch.setattr(settings, "research_views", tmp_path)
    data = figure(client, "research-alignment")
    assert data["status"] == "not available" and "JSONDecodeError" in data["error"]
    data = figure(client, "research-ablations")  # no file in this folder
    assert data["status"] == "not available" and "ablations.json" in data["error"]
    assert client.get("/").status_code == 200


def test_the_app_reads_the_views_from_the_configured_folder(client, monkeypatch, tmp_path):
    view = json.loads((research_views.DEFAULT / "extrapolation.json").read_text())
    view["title"] = "A copy elsewhere"
    view["parts"][0]["rows"][0][0] = "moved"
    (tmp_path / "extrapolation.json").write_text(json.dumps(view))
    monkeypatch.setattr(settings, "research_views", tmp_path)
    data = figure(client, "research-extrapolation")
    assert data["title"] == "A copy elsewhere" and data["parts"][0]["rows"][0][0] == "moved"


def test_the_app_never_imports_the_research_desk():
    for path in (ROOT / "app").rglob("*.py"):
        code = path.read_text()
        assert not re.search(r"^\s*(import research|from research)", code, re.M), path.name
    import subprocess
    import sys

    check = (
        "import sys, app.main, app.routes.figures as f; f.research_body('research-extrapolation'); "
        "assert not [m for m in sys.modules if m.split('.')[0] == 'research'], 'research imported'"
    )
    subprocess.run([sys.executable, "-c", check], cwd=ROOT, check=True, timeout=120)


# ---- in the browser ------------------------------------------------------------------------------


def live_texts(page) -> dict[str, list[str]]:
    return page.evaluate("""() => { const out = {};
      for (const el of document.querySelectorAll('.step [data-live]'))
        (out[el.dataset.live] ??= []).push(el.textContent);
      return out; }""")


def beam_shown(page) -> dict:
    return page.evaluate("""() => { const f = document.querySelector('figure[data-figure="beam"]');
      return { number: Number(f.dataset.number),
               winner: f.querySelector('.winner-tokens').textContent,
               turns: [...f.querySelectorAll('.beam-step')]
                 .map(s => [...s.querySelectorAll('tbody tr')].map(r => r.dataset.tokens)),
               winners: [...f.querySelectorAll('tr.winner')].map(r => r.dataset.tokens) }; }""")


def expected_beam(client, number: int) -> dict:
    b = client.get("/api/beam", params={"input": str(number)}).json()
    return {
        "number": number,
        "winner": " ".join(b["best"]["tokens"]),
        "turns": [[" ".join(h["tokens"]) for h in s["alive"] + s["finished"]] for s in b["steps"]],
    }


def test_live_values_and_the_beam_follow_the_input(browser, live_server, client):
    tab = Page(browser, 900, 700)
    page = tab.open(live_server + "/?input=42#step-19")
    page.wait_for_function("() => document.querySelector('figure[data-figure=\"beam\"]').dataset.number === '42'")
    before = live_texts(page)
    assert before and all(t.strip() and t != "…" for texts in before.values() for t in texts), before
    shown = beam_shown(page)
    assert {k: shown[k] for k in ("number", "winner", "turns")} == expected_beam(client, 42)
    assert shown["winners"] and set(shown["winners"]) == {shown["winner"]}

    page.fill("#number-input", "731015")
    page.press("#number-input", "Enter")
    page.wait_for_function(
        "() => document.querySelector('figure[data-figure=\"beam\"]').dataset.number === '731015'", timeout=60_000
    )
    after = live_texts(page)
    # what the page's code computes for each input (tests/in_page.py), its input's words checked against the
    # served trace's header; the figures themselves are checked against numpy by tests/page/test_teaching.py and
    # friends, and against the Python pin by tests/page/test_live_figures_pinned.py
    p42, p731 = page_parts(client, ["42", "731015"])
    d42, d731 = p42["derived"], p731["derived"]
    for parts in (p42, p731):
        head, d = parts["trace"], parts["derived"]
        assert (d["number"], d["german"]) == (head["input"]["number"], head["input"]["german"])
        assert d["english"] == " ".join(head["input"]["english"])
        assert d["source_tokens"] == head["source_tokens"]
    model = client.get("/api/model").json()["figures"]
    changed = [k for k in after if k in d42 and d42[k] != d731[k]]
    assert {"german", "english", "source_tokens", "number"} <= set(changed)
    for key, texts in after.items():
        assert all(t.strip() for t in texts), key
        value = d731[key] if key in d731 else model[key]
        fmt = page.get_attribute(f'.step [data-live="{key}"]', "data-format") or "text"
        assert texts[0] == format_number(value, fmt), key
        if key in changed:
            assert texts != before[key], key
    assert {k: beam_shown(page)[k] for k in ("number", "winner", "turns")} == expected_beam(client, 731015)
    assert tab.errors == []
    page.close()


def test_every_figure_is_drawn_and_a_marked_number_opens_its_entry(browser, live_server, client):
    tab = Page(browser, 1000, 760)
    page = tab.open(live_server + "/")
    page.evaluate(
        "() => { for (const f of document.querySelectorAll('figure[data-figure]:not([data-figure=beam])'))"
        " window.anatomyFigures.draw(f); }"
    )
    page.wait_for_function(
        "() => [...document.querySelectorAll('figure[data-figure]:not([data-figure=beam])')]"
        ".every(f => f.dataset.drawn === 'true' || f.dataset.drawn === 'error')",
        timeout=30_000,
    )
    drawn = page.evaluate("""() => [...document.querySelectorAll('figure[data-figure]:not([data-figure=beam])')]
      .map(f => [f.dataset.figure, f.dataset.drawn, f.querySelectorAll('canvas').length,
                 f.querySelectorAll('table').length, f.textContent.includes('Not yet run')])""")
    assert sorted({d[0] for d in drawn}) == sorted(FIGURE_NAMES)  # a research figure may show one part per step
    for name, state, canvases, tables, not_run in drawn:
        assert state == "true", name
        assert canvases or tables or not_run, name
    for name in app_figures.RESEARCH:  # a part without results says so instead of drawing numbers
        data = client.get(f"/api/figures/{name}").json()["data"]
        missing = sum(p["status"] != "results" for p in data["parts"])
        shown = page.locator(f'figure[data-figure="{name}"] .not-run').count()
        assert shown == missing, name
    rows = page.locator('figure[data-figure="param-count"] tbody tr').count()
    assert rows == len(client.get("/api/figures/param-count").json()["data"]["rows"]) + 2

    fact = page.locator('#step-19 [data-fact="beam-4-alpha"]')
    fact.focus()
    page.wait_for_selector("#fact-popover:not([hidden])")
    entry = next(f for f in read_tsv(CONTENT / "facts.tsv") if f["id"] == "beam-4-alpha")
    text = page.text_content("#fact-popover")
    assert entry["value"] in text and entry["what"] in text and entry["source"] in text
    assert tab.errors == []
    page.close()


def boxes_overlap(a: dict, b: dict) -> bool:
    return not (
        a["x"] + a["width"] <= b["x"] + 1
        or b["x"] + b["width"] <= a["x"] + 1
        or a["y"] + a["height"] <= b["y"] + 1
        or b["y"] + b["height"] <= a["y"] + 1
    )


@pytest.mark.parametrize("width, height", [(1280, 800), (390, 844)])
def test_screenshots_nothing_overlaps_and_formulas_render(browser, live_server, width, height):
    ARTIFACTS.mkdir(exist_ok=True)
    tab = Page(browser, width, height)
    page = tab.open(live_server + "/?input=731015")
    assert page.locator(".katex").count() > 50 and page.locator(".katex-error").count() == 0
    for step in (5, 7, 19, 21, 24, 25, 27):
        for i in range(page.locator(f"#step-{step} figure[data-figure]").count()):  # each figure drawn when seen
            page.evaluate(  # a figure in a fold ("More: …") is drawn once its fold is opened
                f"() => {{ const f = document.querySelectorAll('#step-{step} figure[data-figure]')[{i}]; "
                "const fold = f.closest('details'); if (fold) fold.open = true; f.scrollIntoView(); }"
            )
            page.wait_for_function(
                f"() => {{ const f = document.querySelectorAll('#step-{step} figure[data-figure]')"
                f"[{i}]; return f.dataset.drawn === 'true' || f.dataset.number; }}",
                timeout=30_000,
            )
        page.evaluate(
            f"() => document.querySelector('#step-{step} figure, #step-{step} table, #step-{step}').scrollIntoView()"
        )
        page.wait_for_timeout(300)
        stage = page.locator("#stage").bounding_box()
        article = page.locator("#article").bounding_box()
        assert not boxes_overlap(stage, article), (step, stage, article)
        # nothing in the step is wider than the article column (figures and tables scroll inside)
        wide = page.evaluate(f"""() => {{ const col = document.getElementById('article').getBoundingClientRect();
          return [...document.querySelectorAll('#step-{step} .step-body > *')].filter(el => {{
            const r = el.getBoundingClientRect();
            return r.width > 0 && (r.left < col.left - 1 || r.right > col.right + 1); }})
            .map(el => el.tagName + '.' + el.className); }}""")
        assert wide == [], (step, wide)
        page.screenshot(path=str(ARTIFACTS / f"article-{width}-step{step}.png"))
    assert tab.errors == []
    page.close()
