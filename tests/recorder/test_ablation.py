"""Switching parts off and the logit lens: in the traced graph, in greedy
decoding, through the API, and the committed per-part table of the shipped model."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import orjson
import pytest
import torch

from model.ablation import ablated, parse_ablation, parts
from model.data import heldout_numbers
from model.vocab import VOCAB
from recorder import parameters, trace, weights_version
from research.part_ablation import correct, has_und, score
from tests.in_page import PageRequest, page_parts
from tests.onnx_numpy import as_array, reexecute

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "research" / "results" / "part_ablation.json"

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def model():
    from model.train import load

    return load()


@pytest.fixture(scope="module")
def params(model):
    return parameters(model)


@pytest.fixture(scope="module")
def table() -> dict:
    return json.loads(TABLE.read_text())


def as_json(t) -> dict:
    return orjson.loads(orjson.dumps(t.to_json(), option=orjson.OPT_SERIALIZE_NUMPY))


def nodes_of(doc: dict) -> dict[str, dict]:
    return {n["id"]: n for n in doc["nodes"]}


def broken_number(table: dict, part: str, und: bool) -> int:
    """A held-out number the committed table says `part`'s ablation gets wrong (with or without "und")."""
    row = next(r for r in table["rows"] if r["part"] == part)
    return next(
        n for n, b in zip(heldout_numbers(), row["correct_bits"], strict=True) if b == "0" and has_und(n) == und
    )


# ---- names -------------------------------------------------------------------------------------------


def test_every_head_and_sublayer_of_the_shipped_shape_is_a_part(model):
    ids = [p.id for p in parts(model.cfg)]
    assert len(ids) == 10 + 6 * 4 and len(set(ids)) == len(ids)
    assert "dec.1.cross.h3" in ids and "enc.0.ffn" in ids and "dec.1.self" in ids
    assert "enc.0.cross" not in ids and "dec.0.ffn.h0" not in ids


def test_parsing_checks_dedupes_and_puts_parts_in_the_models_order(model):
    assert parse_ablation(" dec.1.cross.h2 ,enc.0.ffn,dec.1.cross.h2,", model.cfg) == ("enc.0.ffn", "dec.1.cross.h2")
    assert parse_ablation(["dec.1.self", "enc.1.self.h0"], model.cfg) == ("enc.1.self.h0", "dec.1.self")
    assert parse_ablation("", model.cfg) == parse_ablation(None, model.cfg) == ()
    for bad, says in [
        ("dec.2.cross.h0", "2 layers"),
        ("dec.1.cross.h4", "4 heads"),
        ("enc.0.cross", "no cross"),
        ("dec.0.ffn.h1", "no heads"),
        ("W_o", "not a part"),
        ("dec.1.cross.h01", "not a part"),
    ]:
        with pytest.raises(ValueError, match=says) as e:
            parse_ablation(bad, model.cfg)
        assert "dec.L.cross.hH" in str(e.value)


# ---- the graph -----------------------------------------------------------------------------------------


def test_ablating_nothing_adds_no_node_and_leaves_the_forward_path_unread_by_the_lens(model, params):
    plain, empty = trace(model, 42, params), trace(model, 42, params, ablation=())
    assert orjson.dumps(plain.to_json(), option=orjson.OPT_SERIALIZE_NUMPY) == orjson.dumps(
        empty.to_json(), option=orjson.OPT_SERIALIZE_NUMPY
    )
    ids = [n.id for n in plain.nodes]
    assert not [i for i in ids if i.endswith((".gate", ".off"))] and plain.ablation == []
    # the lens comes after the output and no forward node reads it
    assert ids.index("out.tokens") < min(ids.index(i) for i in ids if i.startswith("lens."))
    assert not [
        n.id for n in plain.nodes if not n.id.startswith("lens.") and any(i.startswith("lens.") for i in n.inputs)
    ]


def test_ablating_a_head_zeroes_exactly_its_columns_of_the_concat(model, params):
    part = "dec.1.cross.h3"
    t = as_json(trace(model, 42, params, ablation=[part]))
    nodes, d_k = nodes_of(t), model.cfg.d_k
    assert t["ablation"] == [part]
    gate, off = nodes[f"{part}.gate"], nodes[f"{part}.off"]
    assert gate["op"] == "Constant" and as_array(gate) == 0 and gate["attrs"]["ablation"] == part
    assert off["op"] == "Mul" and off["inputs"] == [f"{part}.out", f"{part}.gate"]
    assert np.abs(as_array(nodes[f"{part}.out"])).max() > 0.1  # the head still computes; its output is dropped
    concat = nodes["dec.1.cross.concat"]
    assert concat["inputs"] == [f"dec.1.cross.h{i}.out" for i in range(3)] + [f"{part}.off"]
    c = as_array(concat)
    assert np.all(c[:, 3 * d_k :] == 0)
    for i in range(3):  # the other heads' columns are their outputs, untouched
        assert np.array_equal(c[:, i * d_k : (i + 1) * d_k], as_array(nodes[f"dec.1.cross.h{i}.out"]))
    # nothing before the head's layer changes
    plain = nodes_of(as_json(trace(model, 42, params)))
    if t["target_tokens"] == trace(model, 42, params).target_tokens:
        for nid in ("dec.1.cross.h3.out", "dec.1.self.ln", "enc.1.ffn.ln"):
            assert nodes[nid]["data"] == plain[nid]["data"]


def test_a_sublayer_switched_off_leaves_its_branch_out_of_the_residual_sum(model, params):
    t = as_json(trace(model, 42, params, ablation=["enc.0.ffn"]))
    nodes = nodes_of(t)
    assert nodes["enc.0.ffn.sum"]["inputs"] == ["enc.0.self.ln", "enc.0.ffn.off"]
    assert np.array_equal(as_array(nodes["enc.0.ffn.sum"]), as_array(nodes["enc.0.self.ln"]))


@pytest.mark.parametrize("ablation", [["dec.0.cross.h3"], ["dec.1.self", "enc.0.self.h1"], ["dec.0.cross"]])
def test_re_executing_an_ablated_trace_in_numpy_gives_its_logits_and_tokens(model, params, table, ablation):
    number = broken_number(table, ablation[0], und=True) if len(ablation) == 1 else 731_015
    t = as_json(trace(model, number, params, ablation=ablation))
    values = dict(params)
    assert reexecute(t["nodes"], values) > 200
    chosen = VOCAB.tokens_of(values["out.tokens"].tolist())
    assert chosen == t["output_tokens"] and t["target_tokens"][1:] == chosen[: len(t["target_tokens"]) - 1]
    # the graph's zero gates and the ablated copy's zeroed weights are the same model
    src = torch.tensor([VOCAB.ids(VOCAB.source_tokens(number))])
    with torch.no_grad():
        theirs = ablated(model, ablation)(src, torch.tensor([VOCAB.ids(t["target_tokens"])]))[0].numpy()
    assert np.allclose(values["out.logits"], theirs, atol=1e-4)


def test_greedy_decoding_runs_with_the_ablation_so_the_german_breaks_where_the_table_says(model, params, table):
    part = "dec.0.cross.h3"
    number = broken_number(table, part, und=True)
    assert trace(model, number, params).header().input.correct
    broken = trace(model, number, params, ablation=[part]).header().input
    assert not broken.correct and broken.german_pieces != broken.reference_pieces


# ---- the logit lens ------------------------------------------------------------------------------------


@pytest.mark.parametrize("number", [42, 731_015])
def test_the_lens_of_the_last_decoder_layer_is_the_models_own_output_distribution(model, params, number):
    t = trace(model, number, params)
    last = t.lens[-1]
    assert last.layer == model.cfg.n_layers - 1 and last.reads == f"dec.{last.layer}.ffn.ln"
    probs = t.node(last.probs).value
    assert np.array_equal(probs, t.node("out.probs").value)
    src = torch.tensor([VOCAB.ids(t.source_tokens)])
    with torch.no_grad():
        own = model(src, torch.tensor([VOCAB.ids(t.target_tokens)]))[0].softmax(-1).numpy()
    assert np.allclose(probs, own, atol=1e-5)
    assert np.array_equal(t.node(last.tokens).value, t.node("out.tokens").value)


def test_the_lens_after_the_first_layer_is_that_layers_output_through_e_transposed(model, params):
    t = trace(model, 731_015, params)
    first = t.lens[0]
    assert [la.layer for la in t.lens] == list(range(model.cfg.n_layers))
    node = t.node(first.logits)
    assert node.op == "MatMul" and node.inputs == ["dec.0.ffn.ln", "out.ET"]
    probs = t.node(first.probs).value
    e = params["E"]
    assert np.allclose(probs, torch.tensor(t.node("dec.0.ffn.ln").value @ e.T).softmax(-1).numpy(), atol=1e-6)
    assert not np.allclose(probs, t.node("out.probs").value, atol=1e-3)  # the first layer is not the output
    for row, top in zip(probs, first.top, strict=True):  # the header's top pieces are the node's
        best = np.argsort(-row)[: len(top)]
        assert [p.piece for p in top] == VOCAB.tokens_of(best.tolist())
        assert np.allclose([p.p for p in top], row[best])


def test_the_articles_lens_line_names_each_layers_argmax_piece_and_its_probability(client):
    """The page's live line, position by position, read against the served trace's own lens nodes."""
    page = page_parts(client, ["731015"])[0]
    nodes = {n["id"]: n for n in page["trace"]["nodes"]}
    said = page["derived"]["logit_lens"].split("; ")
    assert len(said) == len(page["trace"]["lens"])
    for la, line in zip(page["trace"]["lens"], said, strict=True):
        p = np.array(nodes[la["probs"]]["data"], dtype=np.float32).reshape(nodes[la["probs"]]["shape"])
        chosen = nodes[la["tokens"]]["data"]
        words = [f"{tok} ({p[r, i]:.2f})" for r, (tok, i) in enumerate(zip(VOCAB.tokens_of(chosen), chosen))]
        assert line == f"after decoder {la['layer'] + 1}: " + " ".join(words)


def test_the_scene_draws_the_lens_in_its_own_stations_and_offers_every_part_as_a_switch(client, model):
    off = "dec.1.cross.h3,dec.0.ffn"
    page = page_parts(client, [PageRequest("42", ablate=off)])[0]
    scene, trace_ = page["scene"], page["trace"]
    blocks = {b["id"]: b for b in scene["blocks"]}
    lens_blocks = [b for b in scene["blocks"] if b["id"].startswith("lens.")]
    assert {b["id"] for b in lens_blocks} == set(scene["lens"]) and len(lens_blocks) == 3 * model.cfg.n_layers
    assert {b["station"] for b in lens_blocks} == {f"lens.dec.{i}" for i in range(model.cfg.n_layers)}
    assert [s["id"] for s in scene["switches"]] == [p.id for p in parts(model.cfg)]
    assert trace_["ablation"] == ["dec.0.ffn", "dec.1.cross.h3"]
    assert blocks["dec.1.cross.h3.off"]["station"] == "dec.1.cross"
    assert blocks["dec.0.ffn.gate"]["station"] == "dec.0.ffn"
    # the lens's argmax is labelled with its own pieces, not the output's
    first = VOCAB.tokens_of(next(n for n in trace_["nodes"] if n["id"] == "lens.dec.0.tokens")["data"])
    b = blocks["lens.dec.0.tokens"]
    assert [
        la["text"]
        for la in scene["labels"]
        if la["role"] == "token" and la["x"] > b["x"] + b["w"] and b["y"] - b["rows"] < la["y"] < b["y"]
    ] == first


# ---- the committed table of the shipped model ------------------------------------------------------------


def test_the_table_is_about_the_shipped_model_and_covers_every_part(model, table):
    assert table["model"]["weights_version"] == weights_version(model)
    assert [r["part"] for r in table["rows"]] == ["none"] + [p.id for p in parts(model.cfg)]
    numbers = heldout_numbers()
    assert table["heldout"]["numbers"] == len(numbers)
    for r in table["rows"]:  # each row's scores are its per-number record, counted
        assert {k: r[k] for k in ("all", "with_und", "without_und")} == score(r["correct_bits"], numbers)


def test_the_table_is_recomputed_on_a_subset(model, table):
    """Every part on 24 held-out numbers: 16 evenly spread and, per part, up to 8 it gets wrong."""
    numbers = heldout_numbers()
    for r in table["rows"]:
        wrong = [i for i, b in enumerate(r["correct_bits"]) if b == "0"]
        idx = sorted(set(range(0, len(numbers), len(numbers) // 16)) | set(wrong[:: max(1, len(wrong) // 8)][:8]))
        names = [] if r["part"] == "none" else [r["part"]]
        got = correct(ablated(model, names), [numbers[i] for i in idx])
        assert got == "".join(r["correct_bits"][i] for i in idx), r["part"]


# ---- the API -------------------------------------------------------------------------------------------


def test_the_api_without_ablate_and_with_an_empty_ablate_sends_the_same_bytes(client):
    bodies = [
        client.get("/api/trace", params=p).content
        for p in ({"input": "42"}, {"input": "42", "ablate": ""}, {"input": "42", "ablate": " , "})
    ]
    assert bodies[0] == bodies[1] == bodies[2] and orjson.loads(bodies[0])["ablation"] == []


def test_the_api_traces_the_ablation_and_keeps_it_apart_in_cache_and_etag(client):
    svc = client.app.state.service
    plain = client.get("/api/trace", params={"input": "42"})
    off = client.get("/api/trace", params={"input": "42", "ablate": "enc.0.ffn,dec.1.cross.h3"})
    assert off.status_code == 200 and off.headers["etag"] != plain.headers["etag"]
    doc = off.json()
    assert doc["ablation"] == ["enc.0.ffn", "dec.1.cross.h3"]
    model = svc.translator.model
    reference = as_json(trace(model, 42, svc.params, svc.version, ablation=doc["ablation"]))
    assert {k: v for k, v in doc.items() if k not in ("model", "checkpoint", "weights_url")} == reference
    same = client.get("/api/trace", params={"input": "forty-two", "ablate": "dec.1.cross.h3, enc.0.ffn"})
    assert same.content == off.content  # any spelling and order: one cached trace
    stream = client.get("/api/trace/stream", params={"input": "42", "ablate": "enc.0.ffn,dec.1.cross.h3"})
    lines = [orjson.loads(x) for x in stream.text.splitlines() if x]
    assert lines[0]["ablation"] == doc["ablation"] and [n["id"] for n in lines[1:]] == [n["id"] for n in doc["nodes"]]


@pytest.mark.parametrize(
    "ablate, says",
    [
        ("dec.5.cross.h2", "2 layers"),
        ("dec.1.cross.h7", "4 heads"),
        ("enc.1.cross", "no cross"),
        ("enc.0.ffn.h0", "no heads"),
        ("dec.1.cross.h2;enc.0.ffn", "not a part"),
        ("x" * 3000, "at most"),
        ("<b>dec</b>", "not a part"),
    ],
)
@pytest.mark.parametrize("endpoint", ["/api/trace", "/api/trace/stream"])
def test_bad_ablations_get_422_naming_the_accepted_forms_and_change_nothing(client, endpoint, ablate, says):
    svc = client.app.state.service
    before = len(svc.traces)
    r = client.get(endpoint, params={"input": "42", "ablate": ablate})
    assert r.status_code == 422 and r.headers["content-type"].startswith("application/json")
    detail = r.json()["detail"]
    assert says in detail["message"] and detail["message"].startswith("ablate: ")
    assert "dec.L.cross.hH" in detail["accepted"] and "enc.L.ffn" in detail["accepted"]
    assert len(svc.traces) == before
    assert client.get(endpoint, params={"input": "42"}).status_code == 200


def test_the_page_keeps_the_ablation_in_its_live_numbers(client, table):
    """The page asked for a part switched off computes its numbers from the ablated trace: the article's
    German is the broken model's (the server renders the default input's and leaves the rest to the page)."""
    part = "dec.0.cross.h3"
    number = broken_number(table, part, und=True)
    page = client.get("/", params={"input": str(number), "ablate": part})
    computed = page_parts(client, [PageRequest(str(number), ablate=part)])[0]
    broken = computed["trace"]["input"]
    assert not broken["correct"] and computed["derived"]["german"] == broken["german"]
    assert page.status_code == 200 and 'class="article-page live-pending"' in page.text
    bad = client.get("/", params={"input": "42", "ablate": "dec.9.self"})
    assert bad.status_code == 200 and "cannot switch off" in bad.text


def test_step_29_says_what_the_table_says_about_heads_and_sublayers(table):
    """Each figure of step 29's last section (the shipped model) is read from the committed table and looked
    for in the text; heads are named as the reader counts them, from 1, with the node id beside."""
    text = " ".join((ROOT / "content" / "steps" / "29-research-followups.md").read_text().split())
    item = text[text.index("### Every part of the shipped model") :]
    rows = {r["part"]: r for r in table["rows"]}

    def pct(x: float) -> str:
        return f"{100 * x:.1f} %"

    last = [rows[f"dec.1.cross.h{i}"] for i in range(4)]
    # "no head of the last layer's cross-attention is essential"
    assert min(r["all"]["exact_match"] for r in last) > 0.9
    h3 = rows["dec.1.cross.h3"]
    assert h3["without_und"]["exact_match"] == 1.0 and "100 % of the others" in item
    assert (
        f"without decoder 2 · cross-attention · head 4 (`dec.1.cross.h3`), {pct(h3['with_und']['exact_match'])} "
        "of the numbers with *und*"
    ) in item
    assert min(r["all"]["exact_match"] for r in last[:3]) >= 0.999 and "99.9 % or more" in item
    first = rows["dec.0.cross.h3"]
    with_und, without_und = pct(first["with_und"]["exact_match"]), pct(first["without_und"]["exact_match"])
    assert f"({with_und} with *und*, {without_und} without)" in item
    assert first["all"]["exact_match"] < min(r["all"]["exact_match"] for r in last)
    heads = [r for r in table["rows"] if r["kind"] == "head"]
    worst = min(heads, key=lambda r: r["all"]["exact_match"])
    assert worst["part"] == "dec.1.self.h1" and "decoder 2 · masked self-attention · head 2 (`dec.1.self.h1`)" in item
    assert f"({pct(worst['all']['exact_match'])})" in item
    assert rows["dec.1.cross"]["all"]["exact_match"] == 0 and "nothing comes out right (0.0 %)" in item
    enc = [r for r in table["rows"] if r["kind"] == "sublayer" and r["part"].startswith("enc.")]
    lost = max(r["all"]["n"] - r["all"]["correct"] for r in enc)  # numbers lost, at most 0.1 points of 2 000
    assert len(enc) == 4 and lost * 1000 <= table["heldout"]["numbers"] and "at most 0.1 points" in item
    assert f"{table['model']['training_steps']:,}".replace(",", " ") + " steps" in item
    assert f"all {table['heldout']['numbers']:,}".replace(",", " ") + " held-out numbers" in item
