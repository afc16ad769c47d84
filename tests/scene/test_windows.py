"""A step's parts on a phone: what the scene the page computes (static/compute/windows.js, by scene.js
`personalize`) gives a stage too small for a step's subject, checked against the trace for three inputs.
Steps 6–9's parts frame the worked head (scene.worked, chosen from the trace), not the first; the wide blocks
(the FFN's 128 hidden units, the 65 pieces of the output layer) are framed by windows of their columns, the
output layer's around the pieces steps 18–20 ring for this input (the trace's argmax, and step 20's reference
pieces of the training rows, recomputed here), each window's label saying which columns it shows and which
ringed pieces it leaves out; and the rows beside an input's ids column are named by that column's token
labels. The stage's side (names, numbers and label inside the phone's stage) is tests/stage/test_readouts.py."""

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from model.vocab import VOCAB
from scene.cells import col_x
from scene.document import scene_from_json
from tests.in_page import node_json, page_parts

ROOT = Path(__file__).resolve().parents[2]
INPUTS = [42, 305, 777777]


@pytest.fixture(scope="module")
def scenes(client):
    """Each input's served trace and the scene the page computes for it."""
    shown = page_parts(client, [str(n) for n in INPUTS])
    return {n: (p["trace"], scene_from_json(p["scene"])) for n, p in zip(INPUTS, shown, strict=True)}


@pytest.fixture(scope="module")
def windows(client) -> dict:
    """The window constants the shape's structure document gives the page (personal.windows)."""
    body = client.get("/site/scene/2017/4.json.gz").content
    return json.loads(gzip.decompress(body) if body[:2] == b"\x1f\x8b" else body)["personal"]["windows"]


def marked_windows(cases: list[tuple[list[int], int]], w: dict) -> list[list[int]]:
    """static/compute/windows.js markedWindow for each (marked columns, columns), under Node."""
    script = (
        "import { markedWindow } from './static/compute/windows.js';\n"
        f"const cases = {json.dumps(cases)}, w = {json.dumps(w)};\n"
        "console.log(JSON.stringify(cases.map(([m, n]) => markedWindow(m, n, w))));\n"
    )
    return node_json(script)


def test_the_run_around_the_marks(windows):
    wide, least = windows["wide"], windows["marked_min"]
    runs = marked_windows(
        [
            ([36, 62, 56, 2], 65),
            ([41, 63, 41, 62, 59, 64, 41, 63, 41, 62, 59, 2], 65),
            ([33, 2], 65),
            (list(range(10, 60, 2)), 65),
        ],
        windows,
    )
    assert runs[0] == [36, 62]  # </s> alone, far left: the German pieces' run
    assert runs[1] == [41, 64]
    lo, hi = runs[2]  # one piece each: the later cluster, widened about its centre
    assert hi - lo + 1 == least and lo <= 33 <= hi
    lo, hi = runs[3]  # wider than a phone's window: the fullest run
    assert hi - lo + 1 == wide and sum(lo <= c <= hi for c in range(10, 60, 2)) == (wide + 1) // 2


@pytest.mark.parametrize("number", INPUTS)
def test_steps_6_to_9_frame_the_worked_head_on_a_phone(scenes, number):
    _, scene = scenes[number]
    w = scene.worked
    head_blocks = {w["scores"], w["weights"], w["out"]}
    by_id = {b.id for b in scene.blocks}
    for step in scene.steps:
        if step.step not in (7, 8, 9):
            continue
        assert step.parts, step.step
        for part in step.parts:  # step 9's may stand over V: V whole, or a window of the head's columns of it
            mine = head_blocks | ({w["v_full"]} if step.step == 9 else set())
            assert set(part["blocks"]) <= mine, (step.step, part["blocks"], w["name"])
            assert set(part["blocks"]) <= by_id
            box = part["view"]["box"]  # the view moved with the blocks: it still holds them (a window: its columns)
            for b in (scene.block(i) for i in part["blocks"]):
                x0, x1 = b.x, b.x + b.w
                if part.get("window") and b.id in part["window"]["clip"]:
                    c0, c1 = part["window"]["cols"]
                    x0, x1 = b.x + col_x(b.gap_every, c0), b.x + col_x(b.gap_every, c1) + 1
                assert box[0] <= x0 and x1 <= box[1] + 1e-9, (step.step, b.id)
        if step.step == 9:  # V's rows in view first, over the head's own columns of V where a window may show them
            assert step.parts[0]["blocks"][-1] == w["v_full"] and step.parts[0]["window"]["cols"] == [
                w["v_cols"][0],
                sum(w["v_cols"]) - 1,
            ]


@pytest.mark.parametrize("number", INPUTS)
def test_wide_blocks_are_framed_by_windows_around_the_ringed_pieces(scenes, windows, number):
    t, scene = scenes[number]
    steps = {s.step: s for s in scene.steps}
    probs = np.asarray(next(n for n in t["nodes"] if n["id"] == "out.probs")["data"]).reshape(-1, 65)
    written = [int(c) for c in probs.argmax(axis=1)]  # the piece greedy decoding writes in each row
    out_tokens, pieces = t["output_tokens"], VOCAB.target_tokens(number)
    forced = [r for r in range(len(out_tokens)) if r < len(pieces) and out_tokens[:r] == pieces[:r]]
    reference = [(r, VOCAB.ids([pieces[r]])[0]) for r in forced]  # step 20 rings the training rows' pieces
    vocab = scene.axes["vocab"]
    for n, ringed in (
        (18, list(enumerate(written))),
        (19, list(enumerate(written))),
        (20, list(enumerate(written)) + reference),
    ):
        wins = [p["window"] for p in steps[n].parts if p.get("window")]
        assert wins, n
        for win in wins:
            c0, c1 = win["cols"]
            assert windows["marked_min"] <= c1 - c0 + 1 <= windows["wide"] and 0 <= c0 <= c1 < 65
            out = sorted({(r, c) for r, c in ringed if not c0 <= c <= c1})
            said = f"columns {c0 + 1}–{c1 + 1} of 65" + "".join(
                f" · row {r + 1}'s {vocab[c]}: column {c + 1}" for r, c in out
            )
            assert win["label"] == said
            assert sum(c0 <= c <= c1 for _, c in ringed) >= len(ringed) - 2  # at most </s> (and its ring) out
            assert "out.probs" in win["clip"]
    ffn = [p for p in steps[12].parts if p.get("window")]
    assert [p["window"]["cols"] for p in ffn] == [[0, 31], [0, 23], [0, 15]]
    assert all(p["blocks"] == ["enc.0.ffn.hidden_pre", "enc.0.ffn.hidden"] for p in ffn)
    assert ffn[1]["window"]["label"] == "columns 1–24 of 128"


def test_rows_beside_an_inputs_ids_are_named_by_its_labels(scenes):
    _, scene = scenes[42]
    by_id = {b.id: b for b in scene.blocks}
    assert by_id["src.emb"].rows_named_by == "src.ids" and by_id["tgt.emb"].rows_named_by == "tgt.ids"
    assert by_id["out.probs"].rows_named_by is None  # beside the chosen tokens, which say what a row writes
    assert by_id["src.scaled"].rows_named_by is None
