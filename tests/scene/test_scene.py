"""The scene (scene/): one description of what the stage draws, its structure computed in Python from the
trace's graph, the config and the tour (scene/build.py structure_of), the input's own parts (axes' words,
threads, token labels) by the page (static/compute/scene.js, as tests/in_page.py runs it). For the shipped model
and every research variant: every trace node and every parameter is exactly one block (a head slice is drawn
inside the block it cuts), no two blocks overlap, the cells add up; kinds come from ops; the tour resolves;
the colours are the published maps with legible ends; the page's parts name the trace's own tokens."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

from article.tour import load_tour
from model.ablation import parts
from model.transformer import Config, EncoderDecoder
from model.vocab import VOCAB
from recorder import parameters, trace
from scene.build import structure_of
from scene.document import scene_from_json
from scene.gates import every_part_off
from scene.kinds import kind_of
from scene.palette import PALETTES, read_palette
from scene.tensors import tensors_of
from scene.views import expand, fit_distance
from tests.in_page import page_parts
from tests.recorder.test_trace_configs import NAMED, VARIANTS

TOUR = load_tour()


@pytest.fixture(scope="module")
def shipped():
    from model.translate import Translator

    model = Translator.load().model
    params = parameters(model)
    return {n: (trace(model, n, params), model.cfg, params) for n in (0, 42, 777_777)}


@pytest.fixture(scope="module")
def page(client):
    """The served trace (JSON form) and the scene the page computes, for inputs of the shipped model."""
    numbers = (0, 21, 31, 42, 777_777)
    return {
        n: (p["trace"], scene_from_json(p["scene"]))
        for n, p in zip(numbers, page_parts(client, [str(n) for n in numbers]), strict=True)
    }


def variant(name: str):
    torch.manual_seed(7)
    model = EncoderDecoder(Config(vocab_size=len(VOCAB), **VARIANTS[name])).eval()
    params = parameters(model)
    return trace(model, 42, params), model.cfg, params


def check_scene(t, cfg, params):
    scene = structure_of(t, cfg, params, TOUR)
    ids = [b.id for b in scene.blocks]
    nodes = {n.id: n for n in t.nodes}
    drawn = [i for i, n in nodes.items() if n.op != "Slice"] + list(params)
    gates = {b.id: b.part for b in scene.blocks if b.part}  # every part's gate has its place (scene/gates.py)
    assert gates == {f"{p.id}.{k}": p.id for p in parts(cfg) for k in ("gate", "off")}
    assert sorted(i for i in ids if i not in gates) == sorted(drawn), (
        "every node but a Slice, and every parameter, is exactly one block"
    )
    for s in scene.slices:  # a Slice is drawn inside the block it cuts, at its columns
        node = nodes[s.id]
        assert node.op == "Slice" and s.of in ids and s.col_offset == node.attrs["starts"][0]
        assert np.array_equal(node.value, nodes[s.of].value[:, s.col_offset : s.col_offset + s.cols])
    elements = sum(n.value.size for n in t.nodes if n.op != "Slice") + sum(v.size for v in params.values())
    assert scene.cells == sum(b.rows * b.cols for b in scene.blocks)
    assert elements == sum(b.rows * b.cols for b in scene.blocks if b.id not in gates)
    rects = [(b.id, b.x, b.x + b.w, b.y - b.rows, b.y) for b in scene.blocks]
    overlaps = [
        (a[0], b[0])
        for a, b in itertools.combinations(rects, 2)
        if a[1] < b[2] and b[1] < a[2] and a[3] < b[4] and b[3] < a[4]
    ]
    assert overlaps == []
    assert all(b.station for b in scene.blocks) and not [
        b.id for b in scene.blocks if b.station == "shared" and b.id not in ("E", "P")
    ], "every block has its station"
    return scene


@pytest.mark.parametrize("number", [0, 42, 777_777])
def test_every_node_and_parameter_of_the_shipped_model_is_one_block_and_none_overlap(shipped, number):
    scene = check_scene(*shipped[number])
    assert len(scene.steps) == 29 and [s.step for s in scene.steps] == list(range(1, 30))


@pytest.mark.parametrize("name", sorted(set(NAMED) | {n for n in VARIANTS if "d_k" in n and "unscaled" in n}))
def test_every_research_variant_gets_a_valid_scene(name):
    t, cfg, params = variant(name)
    scene = check_scene(t, cfg, params)
    stations = {s.id for s in scene.stations}
    assert {f"enc.{i}.self" for i in range(cfg.n_layers)} <= stations
    assert {f"dec.{i}.cross" for i in range(cfg.n_layers)} <= stations
    heads = [b for b in scene.blocks if b.id.endswith(".h0.weights")]
    # every head's weights, the output's probabilities, and the logit lens's per decoder layer
    softmax = [b for b in scene.blocks if b.op == "Softmax"]
    assert heads and len(softmax) == 3 * cfg.n_layers * cfg.n_heads + 1 + cfg.n_layers
    q = scene.block("enc.0.self.q")
    assert q.gap_every == (cfg.d_k if cfg.n_heads > 1 else 0)
    if cfg.positional == "learned":
        assert scene.block("P").param and scene.block("src.pe").op == "Gather"
    for s in scene.steps:
        assert all(math.isfinite(v) for v in s.view.box + s.view.target)


def test_the_scores_label_says_whether_they_are_scaled():
    t, cfg, params = variant("no_scaling")
    assert structure_of(t, cfg, params, TOUR).block("enc.0.self.h0.scores").label == "QKᵀ"
    t, cfg, params = variant("d_k_4")
    assert structure_of(t, cfg, params, TOUR).block("enc.0.self.h0.scores").label == "QKᵀ/√4"


def test_kinds_come_from_the_op_and_dtype(shipped):
    t, cfg, params = shipped[42]
    scene = structure_of(t, cfg, params, TOUR)
    tensors = tensors_of(every_part_off(t, cfg, params), params)  # the gates' nodes too
    for b in scene.blocks:
        assert b.kind == kind_of(tensors[b.id])
    by_kind = {k: {b.op for b in scene.blocks if b.kind == k} for k in ("bar", "masked", "relu", "bool", "ids")}
    assert by_kind == {
        "bar": {"Softmax"},
        "masked": {"Where"},
        "relu": {"Relu"},
        "bool": {"Constant"},
        "ids": {"Constant", "ArgMax"},
    }


def test_the_ffns_second_weight_is_drawn_transposed_under_the_hidden_units(shipped):
    t, cfg, params = shipped[42]
    scene = structure_of(t, cfg, params, TOUR)
    transposed = sorted(b.id for b in scene.blocks if b.transposed)
    assert transposed == sorted(f"{s}.{i}.ffn.W_2" for s in ("enc", "dec") for i in range(cfg.n_layers))
    w2, hidden = scene.block("enc.0.ffn.W_2"), scene.block("enc.0.ffn.hidden")
    assert (w2.rows, w2.cols) == (cfg.d_model, cfg.d_ff) and w2.x == hidden.x and w2.cols == hidden.cols


def test_rows_and_columns_know_their_tokens(page):
    t, scene = page[42]
    assert (scene.block("enc.0.self.h1.weights").row_axis, scene.block("enc.0.self.h1.weights").col_axis) == (
        "source",
        "source",
    )
    assert (scene.block("dec.1.cross.h0.weights").row_axis, scene.block("dec.1.cross.h0.weights").col_axis) == (
        "target",
        "source",
    )
    assert (scene.block("out.probs").row_axis, scene.block("out.probs").col_axis) == ("target", "vocab")
    assert scene.block("E").row_axis == "vocab" and scene.block("out.tokens").value_axis == "vocab"
    assert scene.axes["source"] == t["source_tokens"] and scene.axes["target"] == t["target_tokens"]
    assert scene.axes["vocab"] == list(VOCAB.tokens)


def test_each_steps_subject_is_lit_and_framed_by_its_view(shipped, page):
    cfg, scene = shipped[777_777][1], page[777_777][1]  # the page's: steps 6–9 moved to the worked head
    by_id = {b.id: b for b in scene.blocks}
    for s, entry in zip(scene.steps, TOUR):
        assert set(s.subject) <= set(s.lit)
        for glob in entry.subject + entry.also:  # no glob in the front matter names nothing
            assert expand([glob], scene, cfg) or glob == "P", (s.step, glob)  # P: learned positions only
        if entry.view == "overview":
            assert s.view == scene.overview
            continue
        for i in s.subject:
            b = by_id[i]
            assert s.view.box[0] <= b.x and b.x + b.w <= s.view.box[1]
            assert s.view.box[2] <= b.y - b.rows and b.y <= s.view.box[3]


def test_the_overview_frames_the_whole_machine(shipped):
    t, cfg, params = shipped[42]
    scene = structure_of(t, cfg, params, TOUR)
    assert scene.overview.box == scene.bounds
    d = fit_distance(scene.overview, 30, 1.0)
    assert d > fit_distance(scene.steps[6].view, 30, 1.0) * 5  # far further out than a step's view


def test_animations_name_blocks_that_exist(shipped):
    t, cfg, params = shipped[42]
    scene = structure_of(t, cfg, params, TOUR)
    ids = {b.id for b in scene.blocks}
    named = {s.animation["name"] for s in scene.steps}
    assert named >= {"one-cell", "sweep", "residual", "mask", "arcs", "loop", "dropout", "parameters"}
    for s in scene.steps:
        a = s.animation
        refs = [v for k, v in a.items() if k in ("x", "w", "b", "out", "sum", "ln", "block")]
        refs += a.get("blocks", []) + [i for pair in a.get("pairs", []) for i in pair]
        assert set(refs) <= ids, (s.step, set(refs) - ids)
    one = next(s for s in scene.steps if s.animation["name"] == "one-cell").animation
    q = next(n for n in t.nodes if n.id == one["out"])
    assert q.op == "Gemm" and q.inputs == [one["x"], one["w"], one["b"]]


@pytest.mark.parametrize("number", [0, 42, 777_777])
def test_the_connectors_join_what_they_say(shipped, page, number):
    cfg, (t, scene) = shipped[number][1], page[number]
    kinds = {c.kind: c for c in scene.connectors}
    assert set(kinds) == {"thread", "rail", "arc", "tie", "loop"}
    assert len(kinds["thread"].lines) == len(t["source_tokens"]) + len(t["target_tokens"])  # one per token
    assert len(kinds["arc"].lines) == 2 * cfg.n_layers  # memory → W^K and W^V of every cross-attention
    assert len(kinds["rail"].lines) == cfg.n_layers * 5  # one per sub-layer: 2 per encoder, 3 per decoder layer
    e = scene.block("E")
    # from the token's own row of E: the source's from its left side, the decoder's from its right
    want = [[e.x, e.y - r - 0.5] for r in VOCAB.ids(t["source_tokens"])]
    want += [[e.x + e.w, e.y - r - 0.5] for r in VOCAB.ids(t["target_tokens"])]
    assert [line[0][:2] for line in kinds["thread"].lines] == want


def relative_luminance(hex_color: str) -> float:
    rgb = [int(hex_color[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str) -> float:
    la, lb = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def test_the_colours_are_the_published_maps_with_ends_legible_on_the_stage(shipped):
    t, cfg, params = shipped[42]
    p = structure_of(t, cfg, params, TOUR).palette
    cbd1, batlow = read_palette("cet-cbd1"), read_palette("batlow")
    assert cbd1.shape == batlow.shape == (256, 3)
    assert (PALETTES / "README.md").read_text().count("CET-CBD1") >= 1
    for stops, table in ((p["diverging"], cbd1), (p["sequential"], batlow)):
        idx = np.round(np.linspace(0, 255, len(stops))).astype(int)
        assert [s for s in stops] == ["#" + "".join(f"{round(v * 255):02x}" for v in table[i]) for i in idx]
    assert len(p["diverging"]) % 2 == 1  # the centre stop is 0
    for end in (p["diverging"][0], p["diverging"][-1]):
        assert contrast(end, p["background"]) >= 3.0
    assert contrast(p["diverging"][len(p["diverging"]) // 2], p["background"]) >= 3.0  # zero is seen too


def test_inputs_that_share_a_graph_share_its_structure_and_keep_their_own_tokens(page):
    """The structure (blocks, stations, views, rails…) is the graph's, the same for every input with it; the
    tokens' parts (axes, row names, token labels, threads) are each input's, by the page."""
    (first, one), (second, other) = page[21], page[31]  # twenty-one, thirty-one: one graph
    assert [n["shape"] for n in first["nodes"]] == [n["shape"] for n in second["nodes"]]
    assert first["source_tokens"] != second["source_tokens"]
    assert (one.blocks, one.stations, one.overview) == (other.blocks, other.stations, other.overview)
    assert [c for c in one.connectors if c.kind != "thread"] == [c for c in other.connectors if c.kind != "thread"]
    assert other.axes["source"] == second["source_tokens"] and one.axes["source"] == first["source_tokens"]
    token_words = {label.text for label in other.labels if label.role == "token"}
    assert "thirty" in token_words and "twenty" not in token_words
    assert "twenty" in {label.text for label in one.labels if label.role == "token"}
    threads = {c.kind: c.lines for c in one.connectors}["thread"]
    assert threads != {c.kind: c.lines for c in other.connectors}["thread"]  # E's rows of other tokens
    assert one.row_names != other.row_names
