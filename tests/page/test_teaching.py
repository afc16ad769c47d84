"""The article teaches: every new live number, as the page computes it (tests/in_page.py), recomputed here
from the served trace's nodes for three inputs, and found on the page as the server fills it for the default
input (the page's figures computed ahead, app/prerender.py); the worked attention row
framed on the stage where the text says; the fixed claims about 42 and 34 checked against the model; and
one indexing convention (rows from 1, as a reader counts) in the text, the inspector and the live numbers."""

import html as htmllib
import math
import re
from pathlib import Path

import numpy as np
import pytest

from app.documents.content import CONTENT
from article.format import format_number
from article.tour import split_front_matter
from tests.in_page import page_parts
from tests.onnx_numpy import as_array

INPUTS = [42, 7, 731_015]
DEFAULT = 42  # the input the server fills the page's live slots for (the page's own code computes the rest)
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def served(client):
    """Per input: the served trace with the page's figures and scene added (`derived`, `scene`), its nodes as
    arrays, and the page the server fills for the default input (None for the others: their slots are filled
    by the page's script, from these same figures)."""
    out = {}
    for n, parts in zip(INPUTS, page_parts(client, [str(n) for n in INPUTS]), strict=True):
        t = {**parts["trace"], "derived": parts["derived"], "scene": parts["scene"]}
        nodes = {x["id"]: as_array(x) for x in t["nodes"]}
        out[n] = (t, nodes, client.get("/", params={"input": str(n)}).text if n == DEFAULT else None)
    return out


def pairs(text: str) -> tuple[list[str], np.ndarray]:
    """'forty −1.350, two 0.169' → (['forty', 'two'], [-1.35, 0.169])."""
    items = [item.rsplit(" ", 1) for item in text.split(", ")]
    return [tok for tok, _ in items], np.array([float(x.replace("\u2212", "-")) for _, x in items])


def numbers(text: str) -> np.ndarray:
    return np.array([float(x.replace("\u2212", "-")) for x in text.split()])


def shown(page: str, key: str) -> set[str]:
    """Every text the page shows in a `data-live` slot of this key."""
    return {htmllib.unescape(v) for v in re.findall(rf'data-live="{key}"[^>]*>([^<]*)</span>', page)}


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max())
    return e / e.sum()


# ---- the worked attention row (steps 6–9) ----------------------------------------------------------


@pytest.mark.parametrize("number", INPUTS)
def test_the_worked_row_is_recomputed_from_q_k_and_v_and_shown_as_computed(served, number):
    t, nodes, page = served[number]
    d = t["derived"]
    h, r = (
        d["worked_head"] - 1,
        d["worked_row"] - 1,
    )  # chosen from the trace (tests/scene/test_worked.py checks the rule)
    q, k, v = nodes[f"enc.0.self.q.h{h}"], nodes[f"enc.0.self.k.h{h}"], nodes[f"enc.0.self.v.h{h}"]
    d_k = q.shape[1]
    scores = (q[r] @ k.T) / math.sqrt(d_k)  # the worked row of encoder layer 1, from Q and K themselves
    weights = softmax(scores.astype(np.float64))
    output = weights @ v
    toks, shown_scores = pairs(d["worked_scores"])
    assert toks == t["source_tokens"] and d["worked_token"] == t["source_tokens"][r]
    assert shown_scores == pytest.approx(scores, abs=6e-4)
    assert pairs(d["worked_weights"])[1] == pytest.approx(weights, abs=6e-4)
    assert numbers(d["worked_output"]) == pytest.approx(output, abs=6e-4)
    # the same row without the 1/√d_k scale: the scores √d_k times wider
    unscaled = softmax(scores * math.sqrt(d_k))
    assert pairs(d["worked_unscaled_weights"])[1] == pytest.approx(unscaled, abs=6e-4)
    assert d["worked_unscaled_top_weight"] == pytest.approx(unscaled.max(), abs=1e-6)
    assert unscaled.max() > weights.max()  # wider scores, a harder choice
    top = int(weights.argmax())
    assert d["worked_top_token"] == t["source_tokens"][top]
    assert d["worked_top_weight"] == pytest.approx(weights[top], abs=1e-6)
    assert numbers(d["worked_v_top"]) == pytest.approx(v[top], abs=6e-4)
    blend = re.findall(r"(\S+)·V\[([^\]]+)\]", d["worked_blend"])
    assert [tok for _, tok in blend] == t["source_tokens"]
    assert [float(w) for w, _ in blend] == pytest.approx(weights, abs=6e-4)
    # the page, filled for this input, shows exactly these texts in steps 6–9
    j = t["source_tokens"].index(d["worked_key_token"])
    assert numbers(d["worked_qk_products"]) == pytest.approx(q[r] * k[j], abs=6e-4)
    assert d["worked_qk_dot"] == pytest.approx(float(q[r] @ k[j]), abs=1e-5)
    assert d["worked_qk_score"] == pytest.approx(float(scores[j]), abs=1e-5)
    for key in (
        "worked_scores",
        "worked_weights",
        "worked_unscaled_weights",
        "worked_output",
        "worked_blend",
        "worked_v_top",
        "worked_token",
        "worked_top_token",
        "worked_reason",
        "worked_claim",
        "worked_distances",
        "worked_qk_products",
        "worked_key_token",
    ):
        assert page is None or shown(page, key) == {d[key]}, key
    if page is None:  # not the default input: the page's script fills its slots from these figures
        return
    assert shown(page, "worked_top_weight") >= {format_number(d["worked_top_weight"], "fixed3")}
    assert shown(page, "worked_unscaled_top_weight") == {format_number(float(unscaled.max()), "fixed3")}
    assert shown(page, "sqrt_d_k") == {format_number(math.sqrt(d_k), "fixed2")}


@pytest.mark.parametrize("number", INPUTS)
def test_step_9_frames_the_worked_rows_cells_on_the_stage(served, number):
    t, nodes, _ = served[number]
    step = next(s for s in t["scene"]["steps"] if s["step"] == 9)
    h, r = t["derived"]["worked_head"] - 1, t["derived"]["worked_row"] - 1
    n, d_k = len(t["source_tokens"]), nodes[f"enc.0.self.h{h}.out"].shape[1]
    assert step["animation"]["name"] == "sweep"  # the rows fill in, then the worked row stays framed
    assert step["animation"]["rects"] == [
        [f"enc.0.self.h{h}.scores", [r, r, 0, n - 1]],
        [f"enc.0.self.h{h}.weights", [r, r, 0, n - 1]],
        ["enc.0.self.v", [0, n - 1, h * d_k, h * d_k + d_k - 1]],
        [f"enc.0.self.h{h}.out", [r, r, 0, d_k - 1]],
    ]
    # the rows the text works through are framed by step 9's view, V with them: the heads stand over V
    # (scene/layout.py), so the value rows the weights mix are read on the stage, not on the card
    assert {f"enc.0.self.h{h}.weights", f"enc.0.self.h{h}.out", "enc.0.self.v"} <= set(step["subject"])
    assert f"enc.0.self.h{h}.scores" in step["lit"]  # lit, between V and the weights, its key names on it
    by_id = {b["id"]: b for b in t["scene"]["blocks"]}
    v, heads = by_id["enc.0.self.v"], [by_id[f"enc.0.self.h{i}.{k}"] for i in range(4) for k in ("scores", "out")]
    assert max(b["x"] + b["w"] for b in heads) == v["x"] + v["w"]  # flush with V's right edge
    assert all(v["y"] < b["y"] - b["rows"] for b in heads)  # over it
    # a stage too small for the whole frames the worked head over its own columns of V first (scene/windows.py)
    first = step["parts"][0]
    assert first["blocks"] == [f"enc.0.self.h{h}.{k}" for k in ("scores", "weights", "out")] + ["enc.0.self.v"]
    assert first["window"]["cols"] == [h * d_k, h * d_k + d_k - 1] and first["window"]["clip"] == ["enc.0.self.v"]
    # and step 6's one cell is in the same row, in the head's first column of Q
    one = next(s for s in t["scene"]["steps"] if s["step"] == 6)["animation"]
    assert (one["name"], one["row"], one["col"]) == ("one-cell", r, h * d_k)
    assert t["derived"]["worked_q_col"] == h * d_k + 1  # counted from 1


# ---- the other live numbers --------------------------------------------------------------------------


@pytest.mark.parametrize("number", INPUTS)
def test_the_context_target_pairs_and_the_row_names_are_recomputed(served, number):
    t, _, page = served[number]
    d, rows, out = t["derived"], t["target_tokens"], t["output_tokens"]
    expected = [f"{' '.join(rows[: i + 1])} → {out[i]}" for i in range(len(out))]
    assert d["decoder_pairs"].split("; ") == expected
    assert d["decoder_pairs"].startswith(f"<s> → {out[0]}")
    assert page is None or shown(page, "decoder_pairs") == {d["decoder_pairs"]}
    # the inspector's words for a decoder row: what it reads and what it writes
    names = t["scene"]["row_names"]["target"]
    assert names == [f"reads “{a}”, writes “{b}”" for a, b in zip(rows, out, strict=True)]
    assert t["scene"]["row_names"]["source"] == [f"token “{s}”" for s in t["source_tokens"]]
    # step 16's and step 18's live spans name a decoder row the same way
    assert d["cross_alignment"].split("; ")[0].startswith(f"<s> → {out[0]}: ")
    worst = d["least_certain_position"] - 1
    assert (d["least_certain_reads"], d["least_certain_token"]) == (rows[worst], out[worst])


@pytest.mark.parametrize("number", INPUTS)
def test_the_ffn_lights_about_k_of_its_units(served, number):
    t, nodes, page = served[number]
    d, hidden = t["derived"], nodes["enc.0.ffn.hidden"]
    active = (hidden > 0).sum(axis=1)
    assert hidden.shape[1] == 128
    assert d["ffn_active_units"] == pytest.approx(active.mean())
    assert (d["ffn_active_min"], d["ffn_active_max"]) == (active.min(), active.max())
    assert d["ffn_zero_fraction"] == pytest.approx(1 - active.sum() / hidden.size)
    assert page is None or shown(page, "ffn_active_units") == {format_number(float(active.mean()), "int")}
    assert 1 <= round(active.mean()) < 32  # "about k of 128": a small subset


@pytest.mark.parametrize("number", INPUTS)
def test_the_norms_are_recomputed(served, number):
    t, nodes, page = served[number]
    d = t["derived"]
    scaled = np.linalg.norm(nodes["src.scaled"].astype(np.float64), axis=1)
    pe = np.linalg.norm(nodes["src.pe"].astype(np.float64), axis=1)
    toks, shown_norms = pairs(d["scaled_row_norms"])
    assert toks == t["source_tokens"] and shown_norms == pytest.approx(scaled, abs=6e-3)
    assert d["pe_row_norm"] == pytest.approx(pe.mean(), abs=1e-4) == pytest.approx(4.0, abs=1e-5)  # √(d/2), every row
    x = np.linalg.norm(nodes["src.x0"].astype(np.float64), axis=1)
    correction = np.linalg.norm(nodes["enc.0.self.proj"].astype(np.float64), axis=1)
    assert d["attn_input_norm"] == pytest.approx(x.mean()) and d["attn_output_norm"] == pytest.approx(correction.mean())
    assert d["attn_output_norm"] < d["attn_input_norm"] / 2  # step 11: a small correction to a larger input
    ln = nodes["enc.0.self.ln"][0].astype(np.float64)
    assert (d["ln_row_mean"], d["ln_row_std"]) == (pytest.approx(ln.mean()), pytest.approx(ln.std()))
    for key, fmt in (
        ("pe_row_norm", "fixed2"),
        ("attn_input_norm", "fixed2"),
        ("attn_output_norm", "fixed2"),
        ("ln_row_mean", "fixed3"),
        ("ln_row_std", "fixed3"),
    ):
        assert page is None or shown(page, key) == {format_number(d[key], fmt)}, key
    assert page is None or shown(page, "scaled_row_norms") == {d["scaled_row_norms"]}


# ---- fixed claims about one input, checked against the model -------------------------------------------


def step_text(n: int) -> str:
    (path,) = (CONTENT / "steps").glob(f"{n:02d}-*.md")
    return re.sub(r"\s+", " ", split_front_matter(path.read_text(encoding="utf-8"))[1])


def last_cross(nodes: dict) -> tuple[int, int]:
    """The last decoder layer and the number of its cross-attention heads, read from the trace's node ids."""
    cross = [i.split(".") for i in nodes if i.startswith("dec.") and ".cross.h" in i and i.endswith(".weights")]
    last = max(int(p[1]) for p in cross)
    return last, sum(int(p[1]) == last for p in cross)


def test_step_6_previews_step_16_for_42(client):
    t = client.get("/api/trace", params={"input": "42"}).json()
    nodes = {x["id"]: as_array(x) for x in t["nodes"]}
    last, heads = last_cross(nodes)
    assert t["target_tokens"][0] == "<s>" and t["output_tokens"][0] == "zwei"
    two = t["source_tokens"].index("two")
    on_two = [nodes[f"dec.{last}.cross.h{h}.weights"][0, two] for h in range(heads)]
    assert sum(f"{w:.2f}" == "1.00" for w in on_two) == 3 and heads == 4
    assert "puts a weight of 1.00 on *two* in three of the four heads" in step_text(6)


def test_step_16s_reordering_for_34_holds_in_the_last_layer(client):
    t = client.get("/api/trace", params={"input": "34"}).json()
    nodes = {x["id"]: as_array(x) for x in t["nodes"]}
    last, heads = last_cross(nodes)
    mean = np.mean([nodes[f"dec.{last}.cross.h{h}.weights"] for h in range(heads)], axis=0)
    src, rows, out = t["source_tokens"], t["target_tokens"], t["output_tokens"]
    assert (rows[0], out[0], src[int(mean[0].argmax())]) == ("<s>", "vier", "four")
    assert (rows[2], out[2], src[int(mean[2].argmax())]) == ("und", "dreißig", "thirty")
    assert "row 1, which reads `<s>` and writes *vier*, looks past *thirty* to *four*" in step_text(16)
    assert "row 3, which reads *und* and writes *dreißig*, looks back to *thirty*" in step_text(16)


def test_step_23s_two_inputs_have_three_and_six_tokens(client):
    n = {x: len(client.get("/api/trace", params={"input": str(x)}).json()["source_tokens"]) for x in (42, 42_042)}
    assert n == {42: 3, 42_042: 6}
    assert "[compare 42 042 with 42](/?input=42042&compare=42#step-23)" in step_text(23)
    assert "36 cells against 9" in step_text(23)


# ---- one indexing convention ------------------------------------------------------------------------

ROW_READS = re.compile(r"\b[Rr]ow (\d+),? (?:which )?reads (`<s>`|\*\w+\*|the first piece)")
READS_AT = {"`<s>`": 1, "the first piece": 2, "*und*": 3}  # for 42 and 34 alike, counted from 1


def test_rows_are_counted_from_1_in_every_step_and_in_the_inspector(served):
    t = served[42][0]
    texts = {n: step_text(n) for n in range(1, 30)}
    assert "counted from 1" in texts[1] and "row 1 is the first token" in texts[1]
    # a row named with what it reads: the index is the position of that token, counted from 1 (42, 34, or any input)
    found = 0
    for n, text in texts.items():
        for index, token in ROW_READS.findall(text):
            found += 1
            assert READS_AT.get(token) == int(index), (n, index, token)
    assert found >= 3
    # no "row 0" or "column 0" anywhere a reader reads (the old 0-based steps)
    for n, text in texts.items():
        assert not re.search(r"\b[Rr]ow 0\b|\bcolumn 0\b|\bhead 0\b|\blayer 0\b", text), n
    assert "Row 1 reads `<s>` and writes the first piece" in texts[14]
    assert "Row 1, which reads `<s>`, can see only itself" in texts[15]
    # the inspector counts from 1 and names the row with the scene's words for it
    js = (ROOT / "static" / "stage" / "inspector.js").read_text()
    assert "`row ${row + 1}, column ${col + 1}`" in js and "rowName" in js
    blocks = {b["id"]: b for b in t["scene"]["blocks"]}
    assert blocks["dec.mask"]["description"] == "causal mask (row i reads columns 1…i)"
    assert t["scene"]["row_names"]["target"][0] == "reads “<s>”, writes “zwei”"
    # the live row numbers count from 1 too: step 18's least certain row reads what the trace's row reads
    d = t["derived"]
    assert t["target_tokens"][d["least_certain_position"] - 1] == d["least_certain_reads"]


# ---- in Chromium: the inspector's words and step 9's frames, as the reader sees them ---------------------


def test_the_inspector_names_rows_from_1_and_decoder_rows_by_what_they_read_and_write(browser, live_server):
    from tests.browser import has_chromium, open_stage_page

    if not has_chromium():
        pytest.skip("Debian's chromium is not installed")
    page = open_stage_page(browser, f"{live_server}/?input=42", {"width": 1000, "height": 640}, reduced_motion="reduce")
    try:

        def inspected(block: str, row: int, col: int) -> str:
            page.evaluate("([i, r, c]) => anatomyStage.inspect(i, r, c)", [block, row, col])
            return page.eval_on_selector(".stage-inspector", "el => el.textContent")

        assert "row 1, column 4 (reads “<s>”, writes “zwei”)" in inspected("tgt.x0", 0, 3)
        assert "row 4, column 1 (reads “vierzig”, writes “</s>”)" in inspected("dec.1.ffn.ln", 3, 0)
        assert "row 2, column 6 (token “two”)" in inspected("src.x0", 1, 5)
        # step 9 ends with the worked row framed: for 42 (chosen from its weights: "forty" resting on "two")
        # row 0 of head 1's scores, weights and output, and head 1's columns of V
        page.evaluate("anatomyStage.step(9)")
        page.evaluate("anatomyStage.idle()")
        rects = page.evaluate("""() => Object.fromEntries(['enc.0.self.h0.scores', 'enc.0.self.h0.weights',
            'enc.0.self.h0.out', 'enc.0.self.v', 'enc.0.self.h3.weights']
            .map(id => [id, anatomyStage.stage.cells.focusRects(id)]))""")
        assert rects == {
            "enc.0.self.h0.scores": [[0, 0, 0, 2]],
            "enc.0.self.h0.weights": [[0, 0, 0, 2]],
            "enc.0.self.h0.out": [[0, 0, 0, 7]],
            "enc.0.self.v": [[0, 2, 0, 7]],
            "enc.0.self.h3.weights": [],
        }
        assert page.errors == []
    finally:
        page.context.close()
