"""The colour scale of probabilities as it reaches the screen, measured in Chromium.

The stage's canvas is captured as a PNG (anatomyStage.png(): the WebGL drawing alone, so no DOM
overlay printed on a cell gets in the way), decoded in the page through a 2D canvas, and read at the
projected centre of the top face of every cell of the subject's probability blocks at steps 7
(encoder layer 1's self-attention weights) and 16 (decoder layer 2's cross-attention weights), for
the inputs 42, 305 and 777 777, at 1440×900. The claims:

- lightness (CIE L*, D65) rises with the value: no two cells whose weights differ by 0.01 or more
  (the precision the stage prints weights at) are drawn in the reverse order of lightness (by more
  than 0.5), and Spearman's rank correlation of L* with the weight is ≥ 0.9 in every case over the
  cells of 0.01 and more. (Below 0.01 an 8-bit screen cannot order them: most of a cross-attention
  block's weights lie there, 0.0001 and 0.004 fall on one byte, and their tied lightness alone pulls
  ρ over all cells to 0.89 for 777 777 at step 16 with no pair out of order; the note gives both.)
- the screen shows the palette's colour itself (ΔE*ab ≤ 3 from the published map at that value);
- the worked row of step 7 for 305 (weights 0.253 and 0.396): L* at least 8 apart;
- a weight near 0 stands apart from the stage's background (ΔE*ab ≥ 20);
- the largest weight of every row is outlined, and no other cell is.

The figures land in test-artifacts/colour-scale.md with screenshots of steps 7 and 16 for 305. With
COLOUR_SCALE_BEFORE=<commit> the same measures are taken, in the same run, of that commit's stage
(exported with git archive and served beside this one) and written as the "before" column, with
which of the claims it fails.
"""

from __future__ import annotations

import os
import subprocess
import tarfile
from io import BytesIO
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import spearmanr

from scene.cells import hex_rgb, on_stops
from tests.browser import open_stage_page
from tests.conftest import served
from tests.stage.test_stage import pytestmark  # noqa: F401  (skip without Chromium)

playwright_sync = pytest.importorskip("playwright.sync_api")

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
VIEWPORT = {"width": 1440, "height": 900}
INPUTS, STEPS = ["305", "42", "777777"], [7, 16]  # 305 first: its screenshots show its own text
WORKED = ("305", 7, "enc.0.self.h0.weights", 0, (0, 1))  # input, step, block, row, columns: 0.253 and 0.396
INSETS = (0.05, 0.09)  # world units in from a cell's edge where its outline (if any) is sampled

# One step of one input: the canvas as a PNG, decoded; per subject probability cell its value (as
# drawn), the colour at its top face's centre (median of 3×3 pixels) and at points just inside its
# four edges. A stage without CellField.top (as the stage once was) stood each probability as a bar
# v · max_height tall.
MEASURE = """async () => {
  await anatomyStage.idle();
  const s = anatomyStage.stage, insets = INSETS;
  // the colour itself: the numbers printed on the cells (readouts.js, N) are turned off while it is read
  // and the worked row's focus (steps 6-9 dim the rest of its head while its row is lit) is cleared
  const printed = s.readouts?.on; s.readouts?.toggle(false);
  s.tour.resetEffects(); s.tour.applyHighlight(true); s.invalidate(); await anatomyStage.idle();
  const img = new Image(); img.src = s.png(); await img.decode();
  s.readouts?.toggle(printed);
  const W = img.width, H = img.height, cv = document.createElement('canvas');
  cv.width = W; cv.height = H;
  const ctx = cv.getContext('2d', { willReadFrequently: true }); ctx.drawImage(img, 0, 0);
  const px = ctx.getImageData(0, 0, W, H).data;
  const at = (x, y) => { const i = (Math.floor(y) * W + Math.floor(x)) * 4; return [px[i], px[i + 1], px[i + 2]]; };
  const screen = v => { const p = v.clone().project(s.camera); return [(p.x + 1) / 2 * W, (1 - p.y) / 2 * H]; };
  const median = a => a.slice().sort((p, q) => p - q)[a.length >> 1];
  const cell = s.scene.cell, counts = new Map();
  for (let i = 0; i < px.length; i += 4 * 97) {
    const k = px[i] << 16 | px[i + 1] << 8 | px[i + 2]; counts.set(k, (counts.get(k) || 0) + 1);
  }
  const bg = [...counts].sort((a, b) => b[1] - a[1])[0][0];
  const cells = [];
  for (const id of s.step.subject) {
    const b = s.blockById.get(id), e = s.cells.entry(id);
    if (!b || b.kind !== 'bar') continue;
    for (let r = 0; r < b.rows; r++) for (let c = 0; c < b.cols; c++) {
      // an open exercise's cells are drawn veiled, not in the scale (tests/page/test_exercises_page.py)
      if (b.transposed ? s.cells.isVeiled(id, c, r) : s.cells.isVeiled(id, r, c)) continue;
      const v = e.drawn[r * b.cols + c], p = s.pointer.cellCentre(b, r, c);
      p.z = s.cells.top ? s.cells.top(id, r, c)
        : Math.max(Math.min(Math.max(v, 0), 1) * cell.max_height, cell.min_height);
      const [x, y] = screen(p), patch = [];
      for (let dx = -1; dx <= 1; dx++) for (let dy = -1; dy <= 1; dy++) patch.push(at(x + dx, y + dy));
      const fill = [0, 1, 2].map(k => median(patch.map(q => q[k])));
      const half = cell.footprint / 2, edges = [];
      for (const d of insets) for (const [ox, oy] of [[0, half - d], [0, d - half], [half - d, 0], [d - half, 0]]) {
        const q = p.clone(); q.x += ox; q.y += oy; edges.push(at(...screen(q)));
      }
      cells.push({ id, r, c, v, fill, edges, x, y });
    }
  }
  return { bg: [bg >> 16 & 255, bg >> 8 & 255, bg & 255], cells, W, H };
}""".replace("INSETS", str(list(INSETS)))


def lab(rgb255) -> np.ndarray:
    """sRGB bytes (…, 3) → CIE L*a*b* (D65)."""
    c = np.asarray(rgb255, dtype=float) / 255
    lin = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    m = np.array(
        [[0.4124564, 0.3575761, 0.1804375], [0.2126729, 0.7151522, 0.0721750], [0.0193339, 0.1191920, 0.9503041]]
    )
    xyz = lin @ m.T / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.stack([116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])], -1)


def delta_e(a, b) -> np.ndarray:
    """CIE76 ΔE*ab between sRGB byte colours."""
    return np.linalg.norm(lab(a) - lab(b), axis=-1)


def measure_site(browser, base: str, shots: str | None) -> dict:
    """{(input, step): the page's measure} of the stage served at `base`; screenshots of 305 if `shots`."""
    page = open_stage_page(browser, f"{base}/?input={INPUTS[0]}#step-{STEPS[0]}", VIEWPORT, reduced_motion="reduce")
    out = {}
    try:
        for text in INPUTS:
            if text != INPUTS[0]:  # as a reader does: the input typed, then each step reached in the text
                page.fill("#number-input", text)
                page.press("#number-input", "Enter")
                page.wait_for_function(f"anatomyStage.input && anatomyStage.input.number === {int(text)}")
            for st in STEPS:
                page.evaluate(f"anatomy.goTo({st})")
                page.wait_for_function(f"anatomy.step === {st} && anatomyStage.stage.step.step === {st}")
                out[text, st] = page.evaluate(MEASURE)
                if shots and text == "305":
                    page.screenshot(path=str(ARTIFACTS / f"colour-scale-{shots}-step{st}-305.png"))
        out["palette"] = page.evaluate("anatomyStage.stage.scene.palette")
        page.evaluate("anatomyStage.inspect('enc.0.self.h0.weights', 0, 1)")
        out["legend"] = page.eval_on_selector(
            ".stage-legend",
            "el => ({title: el.querySelector('.stage-legend-title').textContent,"
            " bar: el.querySelector('.stage-legend-bar').style.background})",
        )
        assert not page.errors, page.errors
    finally:
        page.context.close()
    return out


def figures(site: dict) -> dict:
    """The claims' figures over every case of a site's measures."""
    stops = site["palette"]["sequential"]
    rows, pooled, zero_de, match, ring_in, ring_out = [], [], [], [], [], []
    for (text, st), m in ((k, v) for k, v in site.items() if isinstance(k, tuple)):
        cells = m["cells"]
        v = np.array([c["v"] for c in cells])
        fill = np.array([c["fill"] for c in cells])
        lstar = lab(fill)[:, 0]
        apart = v >= 0.01
        rho, rho_all = spearmanr(v[apart], lstar[apart]).statistic, spearmanr(v, lstar).statistic
        reversed_pairs = int(((v[:, None] <= v[None, :] - 0.01) & (lstar[:, None] > lstar[None, :] + 0.5)).sum())
        rows.append((text, st, len(cells), float(rho), float(rho_all), reversed_pairs))
        pooled += list(zip(v, lstar))
        zero_de += list(delta_e(fill[v < 0.01], m["bg"]))
        match += list(delta_e(fill, np.round(on_stops(stops, v) * 255)))
        for c, f in zip(cells, fill):
            same_row = [d["v"] for d in cells if d["id"] == c["id"] and d["r"] == c["r"]]
            # lighter than the fill: an outline (a darker edge is the background, antialiased in)
            edges = np.array(c["edges"])
            ring = float((delta_e(edges, f) * (lab(edges)[:, 0] > lab(f)[0])).max())
            (ring_in if c["v"] == max(same_row) else ring_out).append(ring)
        if (text, st) == WORKED[:2]:
            worked = {
                c["c"]: (c["v"], lum) for c, lum in zip(cells, lstar) if c["id"] == WORKED[2] and c["r"] == WORKED[3]
            }
    vs, ls = np.array(pooled).T
    order = np.argsort(vs, kind="stable")
    at = {t: float(np.interp(t, vs[order], ls[order])) for t in (0.0, 0.25, 0.40, 1.0)}
    (v0, l0), (v1, l1) = (worked[c] for c in WORKED[4])
    bg = next(m["bg"] for k, m in site.items() if isinstance(k, tuple))
    return {
        "rows": rows,
        "rho_min": min(r[3] for r in rows),
        "rho_all_min": min(r[4] for r in rows),
        "reversed": sum(r[5] for r in rows),
        "L_at": at,
        "L_bg": float(lab(bg)[0]),
        "worked": (v0, l0, v1, l1),
        "zero_de_min": float(min(zero_de)),
        "match_max": float(max(match)),
        "ring_in_min": float(min(ring_in)),
        "ring_out_max": float(max(ring_out)),
        "legend": site["legend"],
        "stops": stops,
    }


def verdicts(f: dict) -> dict[str, bool]:
    return {
        "no pair 0.01 apart in reverse lightness order": f["reversed"] == 0,
        "rank correlation ≥ 0.9 (weights ≥ 0.01)": f["rho_min"] >= 0.9,
        "screen = palette (ΔE ≤ 3)": f["match_max"] <= 3,
        "0.253 vs 0.396: ΔL* ≥ 8": f["worked"][3] - f["worked"][1] >= 8,
        "0 vs background: ΔE ≥ 20": f["zero_de_min"] >= 20,
        "row max outlined (ΔE ≥ 15), no other (ΔE < 5)": f["ring_in_min"] >= 15 and f["ring_out_max"] < 5,
    }


def write_note(after: dict, before: dict | None) -> None:
    cols = [("after", after)] + ([("before", before)] if before else [])
    head = "| | " + " | ".join(n for n, _ in cols) + " |\n|---|" + "---|" * len(cols) + "\n"
    line = lambda name, fn: f"| {name} | " + " | ".join(fn(f) for _, f in cols) + " |\n"  # noqa: E731
    body = line("Spearman ρ(L*, weight), least of 6 cases, weights ≥ 0.01", lambda f: f"{f['rho_min']:.3f}")
    body += line("the same over all cells", lambda f: f"{f['rho_all_min']:.3f}")
    body += line("pairs 0.01 apart drawn in reverse lightness order (> 0.5 L*)", lambda f: str(f["reversed"]))
    for t in (0.0, 0.25, 0.40, 1.0):
        body += line(f"L* at {t:g} (interpolated over the measured cells)", lambda f, t=t: f"{f['L_at'][t]:.1f}")
    body += line("L* of the background (the canvas's commonest colour)", lambda f: f"{f['L_bg']:.1f}")
    body += line(
        "305, step 7, head 1 row 0: L* of 0.253 → 0.396 (ΔL*)",
        lambda f: f"{f['worked'][1]:.1f} → {f['worked'][3]:.1f} ({f['worked'][3] - f['worked'][1]:+.1f})",
    )
    body += line("least ΔE*ab, a weight < 0.01 vs background", lambda f: f"{f['zero_de_min']:.1f}")
    body += line("largest ΔE*ab, screen vs palette colour", lambda f: f"{f['match_max']:.1f}")
    body += line(
        "lighter edge vs fill ΔE*ab: least of row maxima / largest of others",
        lambda f: f"{f['ring_in_min']:.1f} / {f['ring_out_max']:.1f}",
    )
    for claim in verdicts(after):
        body += line(claim, lambda f, c=claim: "holds" if verdicts(f)[c] else "**fails**")
    case = lambda r: f" {r[3]:.3f} / {r[4]:.3f} / {r[5]} |"  # noqa: E731
    cases = "".join(
        f"| {a[0]} | {a[1]} | {a[2]} |" + case(a) + (case(b) if before else "") + "\n"
        for a, b in zip(after["rows"], (before or after)["rows"])
    )
    text = (
        "# Colour scale of probabilities, measured (tests/stage/test_colour_scale.py)\n\n"
        "Read from the stage's canvas (PNG) at the projected centres of the subject's probability cells, "
        "steps 7 and 16, inputs 42, 305, 777 777, 1440×900; CIE L*a*b* (D65), ΔE*ab = CIE76.\n\n"
        + head
        + body
        + "\nPer case, ρ (weights ≥ 0.01) / ρ (all cells) / pairs in reverse order:\n\n"
        "| input | step | cells | after |"
        + (" before |" if before else "")
        + "\n|---|---|---|---|"
        + ("---|" if before else "")
        + "\n"
        + cases
    )
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "colour-scale.md").write_text(text)


@pytest.fixture(scope="module")
def before(browser, tmp_path_factory):
    """The measures of COLOUR_SCALE_BEFORE's stage, when that commit is named (else None)."""
    commit = os.environ.get("COLOUR_SCALE_BEFORE")
    if not commit:
        return None
    tree = tmp_path_factory.mktemp("before")
    tar = subprocess.run(["git", "-C", str(ROOT), "archive", commit], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(tar)) as t:
        t.extractall(tree, filter="data")
    (tree / "node_modules").symlink_to((ROOT / "node_modules").resolve())
    with served(tree, tmp_path_factory.mktemp("before-log"), what=f"the stage of {commit}") as url:
        return figures(measure_site(browser, url, "before"))


@pytest.fixture(scope="module")
def measured(browser, live_server, before):
    ARTIFACTS.mkdir(exist_ok=True)
    after = figures(measure_site(browser, live_server, "after"))
    write_note(after, before)
    return after


def test_lightness_rises_with_the_weight_in_every_case(measured):
    assert measured["reversed"] == 0, measured["rows"]
    assert measured["rho_min"] >= 0.9, measured["rows"]


def test_the_screen_shows_the_palettes_own_colour(measured):
    assert measured["match_max"] <= 3


def test_weights_of_0_25_and_0_40_are_clearly_apart(measured):
    v0, l0, v1, l1 = measured["worked"]
    assert round(v0, 3) == 0.253 and round(v1, 3) == 0.396  # the example that showed the two too close: 305, step 7
    assert l1 - l0 >= 8
    assert measured["L_at"][0.40] - measured["L_at"][0.25] >= 8


def test_a_zero_stands_apart_from_the_background(measured):
    assert measured["zero_de_min"] >= 20


def test_the_largest_weight_of_each_row_is_outlined_and_no_other(measured):
    assert measured["ring_in_min"] >= 15 and measured["ring_out_max"] < 5


def test_the_scale_failed_these_claims_before(before):
    if before is None:
        pytest.skip("COLOUR_SCALE_BEFORE names no commit to measure")
    assert not all(verdicts(before).values())


def test_the_legend_says_what_is_drawn(measured):
    """The legend of a probability block: the palette's stops, and words that say colour, not height."""
    legend = measured["legend"]
    assert "height" not in legend["title"] and "outlined" in legend["title"]
    first = ", ".join(str(int(round(x * 255))) for x in hex_rgb(measured["stops"][0]))
    assert f"rgb({first})" in legend["bar"]
