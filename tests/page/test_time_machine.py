"""The training time machine: snapshots of the weights during training, served with
`?checkpoint=N`, measured per snapshot (research/results/time_machine.json) and told in step 21.

Each test recomputes what it checks from the committed files: the snapshots load, trace and re-execute;
snapshot 0 is the recipe's initialisation; how the last ones relate to the shipped model is what the
record says; bad checkpoints are refused with 422 and change nothing; the article's sentence on when the
"ones before tens" pattern appears is the data's."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import orjson
import pytest
import torch

from model.decode import EXTRA_LENGTH, greedy
from model.snapshots import SNAPSHOTS, load_snapshot, snapshot_state, snapshot_steps, training_log
from model.train import TrainConfig, average_state_dicts, load
from model.transformer import Config, EncoderDecoder
from model.vocab import VOCAB
from recorder import parameters, trace, weights_version
from tests.onnx_numpy import reexecute

ROOT = Path(__file__).resolve().parents[2]
RESULTS = json.loads((ROOT / "research" / "results" / "time_machine.json").read_text())
STEPS = snapshot_steps()
SHIPPED = load()


def step_text(n: int) -> str:
    (path,) = (ROOT / "content" / "steps").glob(f"{n:02d}-*.md")
    return re.sub(r"\s+", " ", path.read_text().replace("\u00a0", " ").replace("\u202f", " "))


# ---- the snapshots ------------------------------------------------------------------------------------


def test_about_24_snapshots_denser_early_in_one_float16_file():
    assert STEPS[0] == 0 and STEPS[-1] == TrainConfig().steps and STEPS == sorted(set(STEPS))
    assert 20 <= len(STEPS) + 1 <= 28  # with the averaged model: about 24 positions
    gaps = np.diff(STEPS)
    assert gaps[0] < gaps.max() / 10  # denser early
    state = snapshot_state(STEPS[1])
    from safetensors import safe_open

    with safe_open(str(SNAPSHOTS), "pt") as f:
        assert {f.get_tensor(k).dtype for k in list(f.keys())[:20]} == {torch.float16}
    n_params = sum(v.numel() for v in state.values())
    # float16: two bytes a number, plus the header (1 955 tensor names and offsets) and the log; float32 needs 4
    assert 2 * n_params * len(STEPS) < SNAPSHOTS.stat().st_size < 2.2 * n_params * len(STEPS)


@pytest.mark.parametrize("step", STEPS)
def test_every_snapshot_loads_traces_and_reexecutes(step):
    model = load_snapshot(step)
    params = parameters(model)
    t = orjson.loads(
        orjson.dumps(trace(model, 42, params, weights_version(model)).to_json(), option=orjson.OPT_SERIALIZE_NUMPY)
    )
    assert reexecute(t["nodes"], dict(params)) > 0
    assert t["weights_version"] != weights_version(SHIPPED)


def test_snapshot_0_is_the_initialisation():
    torch.manual_seed(TrainConfig().seed)  # as model.train.train starts
    init = EncoderDecoder(Config()).state_dict()
    snap = snapshot_state(0)
    assert set(snap) == set(init)
    for k, v in init.items():
        assert torch.equal(snap[k], v.half().float()), k
    torch.manual_seed(TrainConfig().seed + 1)  # a different seed is a different initialisation
    other = EncoderDecoder(Config()).state_dict()
    assert not torch.equal(snap["embedding"], other["embedding"].half().float())


def test_the_last_snapshots_against_the_shipped_model_are_as_documented():
    """The snapshots come from a re-run of the shipped recipe; the average of its last five checkpoints
    (snapshots 3 600–4 000) is compared with the shipped weights, and the record states the figures."""
    tc = TrainConfig()
    last = [tc.steps - tc.checkpoint_every * i for i in range(tc.average_last)][::-1]
    assert set(last) <= set(STEPS)
    averaged = average_state_dicts([snapshot_state(s) for s in last])
    shipped = SHIPPED.state_dict()
    diff = max((averaged[k] - shipped[k]).abs().max().item() for k in shipped)
    c = RESULTS["comparison"]
    assert c["snapshot_steps_averaged"] == last
    assert diff == pytest.approx(c["max_abs_difference"], rel=1e-6)
    record = (ROOT / "docs" / "time-machine.md").read_text()
    if c["bit_identical"]:
        assert diff < c["float16_bound"] and "bit-identical" in record
    else:
        assert diff > c["float16_bound"] and "re-run" in record
        assert f"{c['max_abs_difference']:.3f}" in record
        assert f"{100 * c['exact_match_agreement']:.2f} %" in record


def test_the_log_in_the_file_is_the_run_of_the_snapshots():
    log = training_log()
    assert [r["step"] for r in log if "loss" in r][:3] == [50, 100, 150]
    final = log[-1]
    assert final["averaged"] == TrainConfig().average_last
    # not bit for bit the shipped run: the losses agree to six digits at step 50, then drift apart
    shipped = json.loads((ROOT / "model" / "artifacts" / "training_log.json").read_text())["log"]
    assert log[0]["step"] == shipped[0]["step"] == 50
    assert log[0]["loss"] != shipped[0]["loss"] and abs(log[0]["loss"] - shipped[0]["loss"]) < 1e-5
    assert "the losses agree to six digits at step 50" in step_text(21)
    mib = f"{SNAPSHOTS.stat().st_size / 2**20:.1f} MiB"
    assert f"one file of {mib}" in step_text(21) and mib in (ROOT / "docs" / "time-machine.md").read_text()


# ---- the API ------------------------------------------------------------------------------------------


def test_trace_at_a_checkpoint_is_that_snapshot(client):
    step = STEPS[len(STEPS) // 2]
    r = client.get("/api/trace", params={"input": "42", "checkpoint": str(step)})
    assert r.status_code == 200
    doc = r.json()
    model = load_snapshot(step)
    assert doc["checkpoint"] == step and doc["weights_url"] == f"/api/weights?checkpoint={step}"
    assert doc["weights_version"] == weights_version(model)
    expected = trace(model, 42).to_json()
    assert doc["output_tokens"] == expected["output_tokens"]
    node = next(n for n in expected["nodes"] if n["id"] == "out.probs")
    served = next(n for n in doc["nodes"] if n["id"] == "out.probs")
    np.testing.assert_allclose(served["data"], node["data"].ravel(), rtol=1e-5, atol=1e-7)
    plain = client.get("/api/trace", params={"input": "42"})
    assert plain.json()["checkpoint"] is None and plain.json()["weights_url"] == "/api/weights"
    assert plain.headers["etag"] != r.headers["etag"]
    stream = client.get("/api/trace/stream", params={"input": "42", "checkpoint": str(step)})
    assert orjson.loads(stream.text.splitlines()[0])["weights_version"] == weights_version(model)


def test_snapshot_0_writes_nonsense_and_the_trained_model_does_not(client):
    early = client.get("/api/trace", params={"input": "42", "checkpoint": "0"}).json()
    trained = client.get("/api/trace", params={"input": "42"}).json()
    assert trained["input"]["correct"] and not early["input"]["correct"]
    # greedy writes at most the source's length + EXTRA_LENGTH pieces: 3 + 50 for "forty two </s>"
    limit = len(early["source_tokens"]) + EXTRA_LENGTH
    assert early["input"]["german_pieces"] == ["eleven"] * limit == early["output_tokens"]  # as step 21 says
    assert len(early["target_tokens"]) == limit  # <s> and every piece but the last: no row predicts past it
    greedy_output = VOCAB.tokens_of(greedy(load_snapshot(0), [VOCAB.ids(early["source_tokens"])])[0])
    assert early["input"]["german_pieces"] == greedy_output
    assert f"the model at step 0 writes *eleven* {limit} times, stopping only at the length limit" in step_text(21)


def test_weights_at_a_checkpoint(client):
    r = client.get("/api/weights", params={"checkpoint": "0"})
    assert r.status_code == 200
    doc = r.json()
    expected = parameters(load_snapshot(0))
    assert [p["id"] for p in doc["parameters"]] == list(expected)
    for p in doc["parameters"]:
        np.testing.assert_array_equal(np.array(p["data"], dtype=np.float32).reshape(p["shape"]), expected[p["id"]])
    again = client.get("/api/weights", params={"checkpoint": "0"}, headers={"If-None-Match": r.headers["etag"]})
    assert again.status_code == 304


@pytest.mark.parametrize("bad", ["abc", "-1", "30", "025", "1e3", "4000.0", "99999999", "０", "averaged", "25;0"])
def test_bad_checkpoints_get_422_naming_the_stored_steps_and_change_nothing(client, bad):
    svc = client.app.state.service
    before = client.get("/api/trace", params={"input": "42"}).content
    cached = len(svc.traces)
    for path in ("/api/trace", "/api/trace/stream", "/api/weights"):
        r = client.get(path, params={"input": "42", "checkpoint": bad})
        assert r.status_code == 422, (path, bad)
        message = r.json()["detail"]["message"]
        assert "checkpoint must be one of the stored training steps" in message
        assert ", ".join(str(s) for s in STEPS) in message
    assert len(svc.traces) == cached
    assert client.get("/api/trace", params={"input": "42"}).content == before


def test_the_openapi_documents_the_checkpoint(client):
    spec = client.get("/openapi.json").json()
    for path in ("/api/trace", "/api/trace/stream", "/api/weights"):
        names = [p["name"] for p in spec["paths"][path]["get"]["parameters"]]
        assert "checkpoint" in names, path
    assert "422" in spec["paths"]["/api/weights"]["get"]["responses"]


# ---- the measurements and the article ---------------------------------------------------------------


def test_results_cover_every_snapshot():
    assert [r["step"] for r in RESULTS["snapshots"]] == STEPS
    assert RESULTS["heldout_numbers"] == 2000 and RESULTS["alignment_numbers"] == 1000
    assert RESULTS["snapshots"][0]["heldout_exact_match"] == 0.0


def test_the_onset_is_recomputed_from_the_measurements():
    from research.time_machine import pattern_onset

    assert pattern_onset(RESULTS["snapshots"]) == RESULTS["pattern"]


def test_the_onset_snapshot_and_the_one_before_remeasured():
    """The two snapshots that bound the onset, measured again on the committed weights."""
    from model.data import heldout_numbers
    from research.time_machine import alignment_numbers, last_layer_alignment

    p = RESULTS["pattern"]
    rows = {r["step"]: r for r in RESULTS["snapshots"]}
    numbers = alignment_numbers(heldout_numbers())
    for step in (p["step"], p["previous_step"]):
        got = last_layer_alignment(load_snapshot(step), numbers)
        assert got["best_head_reordered"] == pytest.approx(rows[step]["alignment"]["best_head_reordered"], abs=1e-9)


def test_step_21_says_when_the_pattern_appears():
    p = RESULTS["pattern"]
    text = step_text(21)
    sentence = (
        f"the best last-layer cross-attention head puts its largest weight on the right English word for "
        f"{100 * p['best_head_reordered']:.1f} % of the reordered pieces by step {p['step']:,}"
    )
    sentence = sentence.replace(",", " ")
    assert sentence in text
    assert f"at step {p['previous_step']:,}".replace(",", " ") in text
    assert f"{100 * p['previous_best_head_reordered']:.1f} %" in text
    assert f"held-out loss had fallen from {p['initial_heldout_loss']:.2f} to {p['heldout_loss']:.3f}" in text
    assert f"{100 * p['loss_fall_done']:.0f} % of its whole fall" in text
    before = next(r for r in RESULTS["snapshots"] if r["step"] == p["previous_step"])
    assert (
        f"exact match rose from {100 * before['heldout_exact_match']:.2f} % to "
        f"{100 * p['heldout_exact_match']:.1f} % between the two snapshots"
    ) in text
    # "late in the fall of the loss, and suddenly": most of the fall done, the snapshot before far below
    assert "arrives late in the fall of the loss, and suddenly" in text
    assert p["loss_fall_done"] > 0.9 and p["previous_best_head_reordered"] < 0.5


# ---- the scrubber, in a browser -----------------------------------------------------------------------


def test_dragging_the_scrubber_redraws_the_stage_with_the_snapshot(browser, live_server):
    """Step 21: dragging the scrubber to its first position runs the input on snapshot 0; the stage then
    draws that snapshot's weights and output, the address keeps checkpoint=0, and the button goes back."""
    from tests.browser import open_stage_page

    page = open_stage_page(browser, f"{live_server}/?input=42#step-21", {"width": 1400, "height": 900})
    try:
        fig = "document.querySelector('figure[data-figure=\"time-machine\"]')"
        page.evaluate(f"{fig}.scrollIntoView(); anatomyFigures.draw({fig})")
        page.wait_for_function("!document.querySelector('.tm-scrubber').disabled", timeout=30_000)
        state = (
            "[anatomyStage.input.german_pieces.join(' '), anatomyStage.drawnValue('E', 3, 0), anatomy.trace.checkpoint]"
        )
        trained = page.evaluate(state)
        assert trained[2] is None
        scrubber = page.locator(".tm-scrubber")
        scrubber.scroll_into_view_if_needed()
        box = None  # the page settles (figures drawn above move it) before the hand takes the thumb
        for _ in range(40):
            page.wait_for_timeout(250)
            now = scrubber.bounding_box()
            if now == box:
                break
            box = now
        y = box["y"] + box["height"] / 2
        page.mouse.move(box["x"] + box["width"] - 4, y)  # the thumb starts at the right end: the trained model
        page.mouse.down()
        page.mouse.move(box["x"] + box["width"] / 2, y, steps=4)
        page.mouse.move(box["x"] + 1, y, steps=4)
        page.mouse.up()
        assert page.evaluate("document.querySelector('.tm-scrubber').value") == "0"
        page.wait_for_function(
            "anatomy.trace.checkpoint === 0 && anatomyStage.input.german_pieces.join(' ') !== "
            f"{json.dumps(trained[0])}",
            timeout=60_000,
        )
        page.evaluate("anatomyStage.idle()")
        early = page.evaluate(state)
        assert early[0] != trained[0]
        assert early[1] == pytest.approx(float(parameters(load_snapshot(0))["E"][3, 0]), abs=1e-6)
        assert early[1] != pytest.approx(trained[1], abs=1e-6)
        assert "checkpoint=0" in page.url
        assert "step 0" in page.locator(".tm-readout").text_content()
        page.click(".tm-reset")
        page.wait_for_function("anatomy.trace.checkpoint === null", timeout=60_000)
        page.evaluate("anatomyStage.idle()")
        assert page.evaluate(state) == trained and "checkpoint" not in page.url
        # two snapshots asked for at once (a fast scrub): the later one is shown, and the page names it
        first, later = STEPS[1], STEPS[2]
        page.evaluate(f"Promise.all([anatomy.setCheckpoint('{first}'), anatomy.setCheckpoint('{later}')])")
        shown = page.evaluate("[anatomy.trace.checkpoint, anatomy.checkpoint, location.search]")
        assert shown[0] == later and str(shown[1]) == str(later) and f"checkpoint={later}" in shown[2], shown
        assert page.errors == []
    finally:
        page.context.close()


def test_step_21_says_how_many_heads_the_snapshots_need():
    """Per snapshot with exact match ≥ 90 %: how many last-layer cross-attention heads cost more than 10
    points of exact match (numbers with und) when switched off alone; the re-run's average; the shipped model."""
    from research.time_machine import ABLATE_FROM, NEEDED_DROP

    words = {0: "none", 1: "one", 2: "two", 3: "three", 4: "four"}
    rows = [r for r in RESULTS["snapshots"] if r["head_ablation"]]
    working = [r["step"] for r in RESULTS["snapshots"] if r["heldout_exact_match"] >= ABLATE_FROM]
    assert [r["step"] for r in rows] == working
    for r in rows + [RESULTS["averaged"], RESULTS["rerun_averaged"]]:
        h = r["head_ablation"]
        assert h["needed_heads"] == [i for i, em in enumerate(h["one_off"]) if h["none_off"] - em > NEEDED_DROP]
    counts = [sum(len(r["head_ablation"]["needed_heads"]) == k for r in rows) for k in (0, 1, 2)]
    assert sum(counts) == len(rows)
    text = step_text(21)
    assert (
        f"Of the {len(rows)} snapshots from step {rows[0]['step']} on (exact match 90 % or more), {counts[0]} need "
        f"no such head, {counts[1]} need one and {counts[2]} need two"
    ) in text
    assert f"needs {words[len(RESULTS['rerun_averaged']['head_ablation']['needed_heads'])]}; the shipped model" in text
    assert f"the recipe's first run, needs {words[len(RESULTS['averaged']['head_ablation']['needed_heads'])]}" in text
    assert f"with *und* ({RESULTS['averaged']['head_ablation']['numbers_with_und']} of step 28's 1 000)" in text
    assert "more than 10 points of exact match" in text and NEEDED_DROP == 0.1
