"""Today's recipe beside 2017's: the modern miniature, its trace, its parity with
torch's own modules, its place in the API and on the stage, and the article's comparison table.

The modern model (model/models.py "modern", model.transformer.MODERN) is pre-norm with RMSNorm,
rotary positions, a SwiGLU feed-forward, no biases and an untied output matrix; it is trained by
model/train.py and shipped in model/artifacts/modern/.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from statistics import mean

import numpy as np
import orjson
import pytest
import torch
import torch.nn.functional as F

from model import models
from model.ablation import ablated
from model.data import heldout_numbers
from model.decode import greedy
from model.train import exact_match, load
from model.transformer import Config, EncoderDecoder, count_parameters, rotate, sinusoid_angles
from model.vocab import VOCAB
from recorder import paper_layout, parameters, trace
from tests.in_page import PageRequest, page_parts
from tests.onnx_numpy import OPS, as_array, reexecute

torch.set_num_threads(2)
ROOT = Path(__file__).resolve().parents[2]
PAPER_COUNT = 61_472
# Operators of the ONNX standard (opset 23) that a trace may name; nothing else is allowed.
ONNX_OPS = {
    "Constant",
    "Gather",
    "Mul",
    "Add",
    "MatMul",
    "Gemm",
    "Transpose",
    "Slice",
    "Concat",
    "Where",
    "Softmax",
    "Relu",
    "LayerNormalization",
    "ArgMax",
    "RMSNormalization",
    "RotaryEmbedding",
    "Sigmoid",
}


@pytest.fixture(scope="module")
def modern() -> EncoderDecoder:
    return load(models.weights_path("modern"))


@pytest.fixture(scope="module")
def traced(modern) -> dict[int, dict]:
    """The modern model's traces as a client receives them (JSON, −∞ as null)."""
    params = parameters(modern)
    return {
        n: orjson.loads(orjson.dumps(trace(modern, n, params).to_json(), option=orjson.OPT_SERIALIZE_NUMPY))
        for n in (42, 731_015)
    }


def nodes_of(t: dict) -> dict[str, dict]:
    return {n["id"]: n for n in t["nodes"]}


# ---- the model ---------------------------------------------------------------------------------


def test_the_shipped_modern_model_is_todays_recipe_and_within_5_percent_of_the_papers_count(modern):
    c = modern.cfg
    assert (c.norm_first, c.norm, c.positional, c.ffn, c.bias, c.tie_output) == (
        True,
        "rms",
        "rotary",
        "swiglu",
        False,
        False,
    )
    assert c.to_dict() == models.config("modern").to_dict()
    n = modern.get_num_params()
    assert n == count_parameters(c) == 61_376
    assert abs(n - PAPER_COUNT) / PAPER_COUNT <= 0.05
    assert models.config("2017").to_dict() == Config().to_dict() and count_parameters(Config()) == PAPER_COUNT
    assert not any(name.endswith("bias") for name, _ in modern.named_parameters())
    assert modern.output is not None and modern.output.data_ptr() != modern.embedding.data_ptr()


def test_held_out_exact_match_of_the_modern_model_is_at_least_99_9_percent(modern):
    log = json.loads((models.DIRECTORIES["modern"] / "training_log.json").read_text())
    final = log["log"][-1]
    measured = exact_match(modern, heldout_numbers())
    assert measured == final["heldout_exact_match"]  # the shipped log says what the shipped weights do
    assert measured >= 0.999, f"held-out exact match {measured:.4%} is short of 99.9 %"


# ---- parity with torch's own modules ------------------------------------------------------------


def test_rms_normalization_nodes_equal_torch_nn_rmsnorm_to_1e_5(modern, traced):
    nodes = nodes_of(traced[731_015])
    params = parameters(modern)
    norms = [n for n in traced[731_015]["nodes"] if n["op"] == "RMSNormalization"]
    # a pre-norm per sub-layer, one after each stack, and the logit lens's after each decoder layer
    assert len(norms) == 2 * 2 + 3 * 2 + 2 + 2
    for node in norms:
        x = torch.from_numpy(as_array(nodes[node["inputs"][0]]))
        module = torch.nn.RMSNorm(x.shape[-1], eps=node["attrs"]["epsilon"])
        with torch.no_grad():
            module.weight.copy_(torch.from_numpy(params[node["inputs"][1]]))
            ours = module(x).numpy()
        assert np.abs(as_array(node) - ours).max() <= 1e-5, node["id"]
        assert np.abs(OPS["RMSNormalization"](x.numpy(), params[node["inputs"][1]]) - ours).max() <= 1e-5


@pytest.mark.parametrize("station", ["enc.0.self", "enc.1.self", "dec.0.self", "dec.1.self", "dec.0.cross"])
def test_each_attention_equals_torchs_scaled_dot_product_attention_to_1e_5(modern, traced, station):
    """The heads' outputs, concatenated, against F.scaled_dot_product_attention on the rotated Q and K
    (the causal mask in the decoder's self-attention); Q, K, V are the trace's own inputs to the heads."""
    t = traced[731_015]
    nodes, c = nodes_of(t), modern.cfg

    def heads(m: str) -> torch.Tensor:
        x = torch.from_numpy(as_array(nodes[f"{station}.{m}"]))
        return x.view(x.shape[0], c.n_heads, c.d_k).transpose(0, 1)  # (h, T, d_k)

    cross = station.endswith("cross")
    q, k, v = heads("q" if cross else "q.rot"), heads("k" if cross else "k.rot"), heads("v")
    causal = station.startswith("dec") and not cross
    ours = F.scaled_dot_product_attention(q, k, v, is_causal=causal)  # scale 1/√d_k by default
    ours = ours.transpose(0, 1).reshape(q.shape[1], c.n_heads * c.d_k).numpy()
    assert np.abs(as_array(nodes[f"{station}.concat"]) - ours).max() <= 1e-5


def test_rotary_nodes_equal_the_models_rotation_and_a_complex_rotation_to_1e_5(modern, traced):
    nodes, c = nodes_of(traced[731_015]), modern.cfg
    rot = [n for n in traced[731_015]["nodes"] if n["op"] == "RotaryEmbedding"]
    assert len(rot) == 2 * 2 + 2 * 2  # Q and K of every self-attention; never cross-attention
    assert all(".cross." not in n["id"] for n in rot)
    for node in rot:
        x = as_array(nodes[node["inputs"][0]]).astype(np.float64)
        t = x.shape[0]
        # (x_2i + i·x_2i+1) · e^{i·pos·θ_i}, θ_i = 10000^(−2i/d_k), in each head: written apart from both
        theta = 10000.0 ** (-np.arange(0, c.d_k, 2) / c.d_k)
        z = x.reshape(t, c.n_heads, c.d_k // 2, 2)
        z = (z[..., 0] + 1j * z[..., 1]) * np.exp(1j * np.arange(t)[:, None, None] * theta)
        expected = np.stack((z.real, z.imag), -1).reshape(t, -1)
        assert np.abs(as_array(node) - expected).max() <= 1e-5, node["id"]
        model_side = rotate(torch.from_numpy(x).float().view(t, c.n_heads, c.d_k).transpose(0, 1)[None])
        assert np.abs(model_side[0].transpose(0, 1).reshape(t, -1).numpy() - as_array(node)).max() <= 1e-5
    cos = as_array(nodes["src.rope.cos"])
    assert np.allclose(cos, sinusoid_angles(cos.shape[0], c.d_k, torch.device("cpu")).cos().numpy())


def test_swiglu_equals_torchs_silu_gate_to_1e_5(modern, traced):
    nodes, params = nodes_of(traced[42]), parameters(modern)
    for p in ("enc.0.ffn", "dec.1.ffn"):
        x = torch.from_numpy(as_array(nodes[f"{p}.norm"]))
        w1, w3, w2 = (torch.from_numpy(params[f"{p}.W_{i}"]) for i in (1, 3, 2))
        ours = (F.silu(x @ w1) * (x @ w3)) @ w2
        assert np.abs(as_array(nodes[f"{p}.out"]) - ours.numpy()).max() <= 1e-5
        layer = modern.encoder_layers[0] if p == "enc.0.ffn" else modern.decoder_layers[1]
        with torch.no_grad():
            assert np.abs(layer.feed_forward(x).numpy() - ours.numpy()).max() <= 1e-5


# ---- the trace -----------------------------------------------------------------------------------


@pytest.mark.parametrize("number", [42, 731_015])
def test_the_modern_trace_re_executes_node_by_node_and_equals_the_models_logits(modern, traced, number):
    t = traced[number]
    assert reexecute(t["nodes"], dict(parameters(modern))) > 200
    with torch.no_grad():
        logits = modern(torch.tensor([VOCAB.ids(t["source_tokens"])]), torch.tensor([VOCAB.ids(t["target_tokens"])]))[0]
    assert np.abs(as_array(nodes_of(t)["out.logits"]) - logits.numpy()).max() <= 1e-5
    assert t["input"]["correct"]


def test_the_modern_trace_names_only_standard_onnx_operators(traced):
    ops = {n["op"] for t in traced.values() for n in t["nodes"]}
    assert ops <= ONNX_OPS, ops - ONNX_OPS
    assert {"RMSNormalization", "RotaryEmbedding", "Sigmoid"} <= ops and "LayerNormalization" not in ops
    assert "Relu" not in ops and "Gemm" in ops  # Gemm: the heads' scores only, every projection a MatMul


def test_the_modern_trace_has_no_bias_no_beta_and_an_untied_output(modern, traced):
    t = traced[42]
    assert not [p for p in t["parameters"] if ".b_" in p or p.endswith(".beta")]
    assert "out.W_U" in t["parameters"] and "out.ET" not in nodes_of(t)
    assert nodes_of(t)["out.logits"]["inputs"] == ["dec.norm", "out.W_U"]
    assert t["memory"] == "enc.norm"
    assert sum(v.size for v in parameters(modern).values()) == modern.get_num_params()


def test_the_2017_model_keeps_the_papers_layout_and_trace():
    model = load()
    assert paper_layout(model.cfg)
    t = trace(model, 42)
    ops = {n.op for n in t.nodes}
    assert not ops & {"RMSNormalization", "RotaryEmbedding", "Sigmoid"}
    assert t.memory == "enc.1.ffn.ln" and "out.ET" in [n.id for n in t.nodes]


def test_switching_parts_off_in_the_modern_model_gates_its_graph_and_its_decoding(client, modern):
    """The one recording gates any layout: the API answers, the graph multiplies each part's output by its
    zero `part.gate` (pre-norm: the branch leaves x + branch), the rows read greedy's output without the
    parts, and every node, the gates included, is recomputed from its inputs without torch."""
    r = client.get("/api/trace", params={"input": "42", "ablate": "dec.1.cross.h1,enc.1.self", "model": "modern"})
    assert r.status_code == 200, r.text
    t = r.json()
    nodes = nodes_of(t)
    assert t["ablation"] == ["enc.1.self", "dec.1.cross.h1"]  # the model's order
    for part in t["ablation"]:
        assert nodes[f"{part}.gate"]["op"] == "Constant" and nodes[f"{part}.gate"]["attrs"] == {"ablation": part}
        assert nodes[f"{part}.gate"]["data"] == [0.0] and nodes[f"{part}.off"]["op"] == "Mul"
    assert nodes["enc.1.self.sum"]["inputs"] == ["enc.0.ffn.sum", "enc.1.self.off"]
    assert "dec.1.cross.h1.off" in nodes["dec.1.cross.concat"]["inputs"]
    broken = greedy(ablated(modern, t["ablation"]), [VOCAB.ids(VOCAB.source_tokens(42))])[0]
    assert t["target_tokens"] == ["<s>"] + VOCAB.tokens_of(broken) and t["input"]["german"] == "zwei"
    assert reexecute(t["nodes"], dict(parameters(modern))) > 0
    assert t["output_tokens"] == VOCAB.tokens_of(as_array(nodes["out.tokens"]).tolist())
    (page,) = page_parts(client, [PageRequest("42", model="modern", ablate="dec.1.cross.h1,enc.1.self")])
    assert page["derived"]["german"] == "zwei" and not t["input"]["correct"]  # the page's figure: greedy's output


def test_the_logit_lens_of_a_pre_norm_model_reads_the_final_norm_then_w_u(modern):
    """The lens after each decoder layer is the model's own output layer on that layer's output: the final
    RMSNorm's γ, then the untied W_U; the last layer's lens is the output itself; it adds side nodes only."""
    params = parameters(modern)
    t = trace(modern, 42, params, lens=True)
    nodes = {n.id: n for n in t.nodes}
    last = modern.cfg.n_layers - 1
    for layer in range(modern.cfg.n_layers):
        p = f"lens.dec.{layer}"
        assert nodes[f"{p}.norm"].op == "RMSNormalization"
        assert nodes[f"{p}.norm"].inputs == [f"dec.{layer}.ffn.sum", "dec.norm.gamma"]
        assert nodes[f"{p}.logits"].inputs == [f"{p}.norm", "out.W_U"]
        assert [la.reads for la in t.lens][layer] == f"dec.{layer}.ffn.sum"
    assert np.array_equal(nodes[f"lens.dec.{last}.probs"].value, nodes["out.probs"].value)
    unlensed = trace(modern, 42, params, lens=False)
    assert [n.id for n in t.nodes if not n.id.startswith("lens.")] == [n.id for n in unlensed.nodes]
    doc = orjson.loads(orjson.dumps(t.to_json(), option=orjson.OPT_SERIALIZE_NUMPY))
    assert reexecute(doc["nodes"], dict(params)) > 0


# ---- the stage ------------------------------------------------------------------------------------


def test_the_stage_draws_rmsnorm_with_gamma_only_and_swiglus_three_matrices(client, modern):
    (page,) = page_parts(client, [PageRequest("42", model="modern")])  # the scene the page builds
    scene = page["scene"]
    block = {b["id"]: b for b in scene["blocks"]}
    stations = {s["id"] for s in scene["stations"]}
    assert {"enc.norm", "dec.norm"} <= stations
    for p in ("enc.0.ffn", "dec.1.ffn"):
        assert {f"{p}.W_1", f"{p}.W_3", f"{p}.W_2"} <= set(block) and not {f"{p}.b_1", f"{p}.b_2"} & set(block)
        assert block[f"{p}.W_2"]["transposed"] and block[f"{p}.norm.gamma"]["label"] == "γ"
    assert not [i for i in block if i.endswith((".beta", ".b_q", ".b_o"))]
    assert all(b["station"] for b in scene["blocks"]) and not [b["id"] for b in scene["blocks"] if b["y"] < -60]
    assert block["enc.0.self.W_q"]["gap_every"] == modern.cfg.d_k  # head slices, through the rotation
    arcs = next(c for c in scene["connectors"] if c["kind"] == "arc")
    assert len(arcs["lines"]) == 2 * modern.cfg.n_layers  # memory to every cross-attention's W^K and W^V
    # a head's output is worded as a head's, not as the SwiGLU feed-forward's output (both have the role `out`)
    assert block["dec.1.cross.h3.out"]["label"] == "head 4"
    assert block["dec.1.cross.h3.out"]["description"] == "head 4 output = weights·V"
    assert block["dec.1.ffn.out"]["label"] == "FFN(x) = hidden·W_{2}"


# ---- the API ---------------------------------------------------------------------------------------


def test_api_serves_the_modern_model_when_asked_and_2017_by_default(client):
    card = client.get("/api/model?model=modern").json()
    assert card["config"]["norm"] == "rms" and card["parameter_count"] == 61_376
    assert card["training"]["heldout_exact_match"] >= 0.999
    default = client.get("/api/model").json()
    assert default == client.get("/api/model?model=2017").json() and default["parameter_count"] == PAPER_COUNT
    weights = client.get("/api/weights?model=modern").json()
    assert "out.W_U" in [p["id"] for p in weights["parameters"]]
    t = client.get("/api/trace?input=42&model=modern").json()
    assert t["weights_version"] == card["weights_version"] != default["weights_version"]
    assert "RMSNormalization" in {n["op"] for n in t["nodes"]}
    assert {n["op"] for n in client.get("/api/trace?input=42").json()["nodes"]} >= {"LayerNormalization"}
    stream = client.get("/api/trace/stream?input=42&model=modern").text.splitlines()
    assert len(stream) == 1 + len(t["nodes"])
    beam = client.get("/api/beam?input=42&model=modern").json()
    assert beam["german_pieces"] == ["zwei", "und", "vierzig"] and beam["weights_version"] == card["weights_version"]


def test_a_modern_trace_names_the_modern_weights(client):
    """The header's weights_url is where the weights the trace read are sent: for ?model=modern the
    modern model's (the stage fetches what it names), in the JSON trace and the stream's header alike."""
    query = {"input": "42", "model": "modern"}
    t = client.get("/api/trace", params=query).json()
    head = orjson.loads(client.get("/api/trace/stream", params=query).text.split("\n")[0])
    assert t["weights_url"] == head["weights_url"] == "/api/weights?model=modern"
    weights = client.get(t["weights_url"]).json()
    assert weights["weights_version"] == t["weights_version"] != client.get("/api/weights").json()["weights_version"]
    assert client.get("/api/trace", params={"input": "42"}).json()["weights_url"] == "/api/weights"


@pytest.mark.parametrize(
    "path", ["/api/trace?input=42", "/api/trace/stream?input=42", "/api/weights", "/api/model", "/api/beam?input=42"]
)
@pytest.mark.parametrize("bad", ["gpt", "2018", "MODERN", "modern ", "x" * 500])
def test_unknown_model_names_get_422_naming_the_accepted_ones(client, path, bad):
    sep = "&" if "?" in path else "?"
    r = client.get(f"{path}{sep}model={bad}")
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert "unknown model" in detail["message"] and all(n in detail["accepted"] for n in models.NAMES)
    assert len(detail["message"]) < 200


def test_the_page_draws_the_modern_model_on_request_and_says_what_the_article_describes(client):
    page = client.get("/?model=modern").text
    assert 'data-model="modern"' in page and 'id="model-note"' in page and 'class="model-badge"' in page
    plain = client.get("/").text
    assert "data-model=" not in plain and 'id="model-note"' not in plain
    bad = client.get("/?model=gpt")
    assert bad.status_code == 200 and "unknown model" in bad.text and "data-model=" not in bad.text


# ---- the article's comparison, read from the committed results ------------------------------------


def _runs(experiment: str, variant: str) -> list[dict]:
    data = json.loads((ROOT / "research" / "results" / f"{experiment}.json").read_text())
    return sorted([r for r in data["runs"] if r["variant"] == variant], key=lambda r: r["seed"])


def _extras_table() -> dict[str, tuple[str, str]]:
    text = (ROOT / "content" / "extras.md").read_text()
    section = text.split("<!-- modern-table -->")[1]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and not set(cells[1]) <= set("-: "):
            rows[cells[0]] = (cells[1], cells[2])
    return rows


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def test_the_articles_what_changed_table_reads_the_committed_results():
    rows = _extras_table()
    # thousands grouped with a thin space, as article/format.py writes every count on the page
    assert rows["Parameters"] == (f"{PAPER_COUNT:,}".replace(",", "\u2009"), f"{61_376:,}".replace(",", "\u2009"))
    for name, folder in (("2017", models.DIRECTORIES["2017"]), ("modern", models.DIRECTORIES["modern"])):
        final = json.loads((folder / "training_log.json").read_text())["log"][-1]
        col = 0 if name == "2017" else 1
        assert rows["Shipped model: held-out exact match"][col] == _pct(final["heldout_exact_match"])
        assert rows["Shipped model: held-out loss"][col] == f"{final['heldout_loss']:.4f}"
        log = json.loads((folder / "training_log.json").read_text())["log"]
        first = next(r["step"] for r in log if r.get("heldout_exact_match", 0) >= 0.99)
        assert rows["Shipped model: steps to 99 %"][col] == f"{first:,}".replace(",", " ")
    seeds = {r["seed"] for r in _runs("modern", "modern")}  # the 2017 runs of the same seeds
    desk = {
        "2017": [r for r in _runs("ablations", "baseline") if r["seed"] in seeds],
        "modern": _runs("modern", "modern"),
    }
    assert seeds and len(desk["2017"]) == len(seeds)
    for col, name in enumerate(("2017", "modern")):
        rs = desk[name]
        assert rows["Desk: steps to 99 %"][col] == ", ".join(str(r["steps_to_99"]) for r in rs)
        assert rows["Desk: held-out exact match"][col] == _pct(mean(r["heldout_exact_match"] for r in rs))
        assert rows["Desk: held-out loss"][col] == f"{mean(r['heldout_loss'] for r in rs):.4f}"
    extra = {"2017": _runs("extrapolation", "sinusoidal"), "modern": _runs("modern_extrapolation", "modern")}
    for col, name in enumerate(("2017", "modern")):
        rs = extra[name]
        for words in (7, 8, 9):
            cell = rows[f"Extrapolation: {words} words"][col]
            assert cell == _pct(mean(r["exact_match_by_length"][str(words)]["exact_match"] for r in rs))
        pooled = [
            sum(c["correct"] for k, c in r["exact_match_by_length"].items() if int(k) >= 7)
            / sum(c["n"] for k, c in r["exact_match_by_length"].items() if int(k) >= 7)
            for r in rs
        ]
        assert rows["Extrapolation: 7–9 words"][col] == _pct(mean(pooled))
        assert len(rs) == 3


def test_the_table_says_how_the_desk_and_the_extrapolation_runs_were_trained():
    text = re.sub(r"\s+", " ", (ROOT / "content" / "extras.md").read_text())
    seeds = sorted(r["seed"] for r in _runs("modern", "modern"))
    said = "seed 1 only" if seeds == [1] else f"{len(seeds)} seeds"
    assert said in text.split("<!-- modern-table -->")[0]
    steps = {r["steps"] for r in _runs("modern", "modern") + _runs("ablations", "baseline")}
    assert steps == {2500} and "2 500 steps" in text
    assert len(_runs("modern_extrapolation", "modern")) == 3 and "3 seeds" in text


# ---- in the browser: the stage draws the modern model, and explains its new operators -------------


def test_the_stage_draws_the_modern_model_and_explains_every_op_kind(browser, live_server):
    """?model=modern: the stage fetches the modern trace and weights, draws its scene, and the page's
    evaluators (static/stage/explain.js) recompute a sample of every op kind's cells — RMSNormalization,
    RotaryEmbedding and Sigmoid included — to 1e-5, naming tests/onnx_deps.py's dependency set."""
    import httpx

    from tests.browser import has_chromium, open_stage_page
    from tests.onnx_deps import deps
    from tests.stage.test_explain import EXPLAIN_MANY, exact, index_of, num, sample_cells, values_of

    if not has_chromium():
        pytest.skip("Debian chromium is not installed")
    page = open_stage_page(browser, f"{live_server}/?model=modern&input=731015", {"width": 1200, "height": 760})
    try:
        t = httpx.get(f"{live_server}/api/trace", params={"input": "731015", "model": "modern"}, timeout=60).json()
        w = httpx.get(f"{live_server}/api/weights", params={"model": "modern"}, timeout=60).json()
        weights = {p["id"]: exact(p) for p in w["parameters"]}
        assert page.evaluate("anatomyStage.input.number") == 731015
        known = page.evaluate(
            "ids => ids.map(i => !anatomyStage.explain(i, 0, 0).error)",
            ["out.W_U", "enc.0.ffn.W_3", "enc.0.self.q.rot", "enc.0.self.ln", "out.ET"],
        )
        assert known == [True, True, True, False, False]
        values, nodes = values_of(t, weights), {n["id"]: n for n in t["nodes"]}
        cells = sample_cells(t, weights, 4, seed=11)
        ops = set()
        for (nid, r, c), got in zip(cells, page.evaluate(EXPLAIN_MANY, cells)):
            assert "error" not in got, (nid, r, c, got)
            idx = index_of(list(np.shape(values[nid])), r, c)
            want, rec = float(values[nid][idx]), num(got["recomputed"])
            assert rec == want or abs(rec - want) <= 1e-5 * max(1.0, abs(want)), (nid, idx, rec, want)
            node = nodes.get(nid)
            expected = deps(node, values, idx) if node else set()
            assert {(i, tuple(at)) for i, at, *_ in got["inputs"]} == expected, (nid, idx)
            ops.add(got["op"])
        assert {"RMSNormalization", "RotaryEmbedding", "Sigmoid", "MatMul"} <= ops
        # the new operators' formulas reach KaTeX intact: in a JS template literal "\frac" would be a form
        # feed and "rac" (ESLint's no-useless-escape found six such lines), which no value check sees
        for nid in ("enc.0.self.norm", "enc.0.self.q.rot", "enc.0.ffn.sigmoid"):
            tex = page.evaluate("i => anatomyStage.explain(i, 0, 1).formula || ''", nid)
            assert tex and not any(ord(ch) < 32 for ch in tex), (nid, tex)
            assert "\\frac" in tex or "\\sin" in tex or "\\cos" in tex, (nid, tex)
        (ROOT / "test-artifacts").mkdir(exist_ok=True)
        page.screenshot(path=str(ROOT / "test-artifacts" / "stage-modern.png"))
        assert page.errors == []
    finally:
        page.context.close()
