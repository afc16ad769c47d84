"""Every configuration the research desk trains is traced right, or refused by name (only ALiBi is).

The variants come from research/experiments.py (the ablations, the positional encodings of the
extrapolation study, the warm-up × norm study and the d_k sweep), so there is one definition of them.
Each is a seeded, randomly initialised model in eval mode: the trace is checked against the model's
own forward pass and re-executed node by node by tests/onnx_numpy.py, without torch.
"""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import orjson
import pytest
import torch

import recorder.record as record_module
from model.ablation import ablated
from model.decode import EXTRA_LENGTH, greedy
from model.train import load
from model.transformer import Config, EncoderDecoder, count_parameters, parameter_breakdown
from model.vocab import VOCAB
from recorder import FOLLOWED_OPTIONS, check_traceable, parameters, trace
from research.experiments import ABLATIONS, DK_SWEEP, POSITIONALS, WARMUP_NORM
from tests.onnx_numpy import as_array, reexecute

torch.set_num_threads(2)

NUMBERS = (42, 777_777)  # every variant traces the first; the named variants (NAMED) the second too
NAMED = ["heads_1", "heads_8", "d_k_4", "depth_1", "depth_3", "learned_positions", "no_scaling"]


def research_variants() -> dict[str, dict]:
    """Each distinct model configuration the research desk trains, under its first experiment's name."""
    candidates = [(name, cfg) for name, _, cfg, _, _ in ABLATIONS]
    candidates += [(f"positional_{p}", {"positional": p}) for p in POSITIONALS]
    candidates += [(name, cfg) for name, cfg, _ in WARMUP_NORM]
    candidates += [
        (f"d_k_{d}_{'scaled' if s else 'unscaled'}", {"d_k": d, "scale_scores": s})
        for d in DK_SWEEP
        for s in (True, False)
    ]
    seen, out = set(), {}
    for name, overrides in candidates:
        key = tuple(sorted(Config(vocab_size=len(VOCAB), **overrides).to_dict().items()))
        if key not in seen:
            seen.add(key)
            out[name] = overrides
    return out


VARIANTS = research_variants()


def refused(overrides: dict) -> bool:
    """What the trace does not follow (stated here from the config, not asked of trace.py)."""
    return Config(**overrides).positional == "alibi"


TRACED = [name for name, o in VARIANTS.items() if not refused(o)]
REFUSED = [name for name, o in VARIANTS.items() if refused(o)]
CASES = [(name, NUMBERS[0]) for name in TRACED] + [(name, NUMBERS[1]) for name in NAMED]


def model_of(name: str) -> EncoderDecoder:
    torch.manual_seed(7)
    return EncoderDecoder(Config(vocab_size=len(VOCAB), **VARIANTS[name])).eval()


_cache: dict[tuple[str, int], tuple[EncoderDecoder, dict]] = {}


def traced(name: str, number: int) -> tuple[EncoderDecoder, dict]:
    """The model and its trace of `number` as a client receives it (JSON, −∞ as null), the logit lens
    recorded whatever the layout."""
    if (name, number) not in _cache:
        model = model_of(name)
        raw = orjson.dumps(trace(model, number, lens=True).to_json(), option=orjson.OPT_SERIALIZE_NUMPY)
        _cache[name, number] = model, orjson.loads(raw)
    return _cache[name, number]


def nodes_of(t: dict) -> dict[str, dict]:
    return {n["id"]: n for n in t["nodes"]}


def test_the_variants_include_every_shape_the_issue_names():
    cfgs = [Config(**o) for o in VARIANTS.values()]
    assert {c.n_heads for c in cfgs} >= {1, 4, 8} and {c.n_layers for c in cfgs} >= {1, 2, 3}
    assert any(c.d_k == 4 and c.n_heads * c.d_k != c.d_model for c in cfgs)
    assert any(c.positional == "learned" for c in cfgs) and any(not c.scale_scores for c in cfgs)
    assert set(NAMED) <= set(TRACED)


# ---- traced configurations -------------------------------------------------------------------


@pytest.mark.parametrize(("name", "number"), CASES)
def test_the_trace_logits_equal_the_models_teacher_forced_logits_to_1e_5(name, number):
    model, t = traced(name, number)
    with torch.no_grad():
        ours = model(torch.tensor([VOCAB.ids(t["source_tokens"])]), torch.tensor([VOCAB.ids(t["target_tokens"])]))[0]
    logits = as_array(nodes_of(t)["out.logits"])
    assert logits.shape == tuple(ours.shape)
    assert np.abs(logits - ours.numpy()).max() <= 1e-5


def decoder_rows(out: list[str], number: int) -> list[str]:
    """<s> and greedy's output but its last piece where greedy stopped at the length limit (an untrained
    model): each row predicts the next piece, and none may predict past what greedy wrote."""
    cut = len(out) == len(VOCAB.source_tokens(number)) + EXTRA_LENGTH
    return ["<s>"] + (out[:-1] if cut else out)


@pytest.mark.parametrize(("name", "number"), CASES)
def test_the_trace_reads_greedys_output_and_predicts_its_tokens(name, number):
    model, t = traced(name, number)
    out = VOCAB.tokens_of(greedy(model, [VOCAB.ids(VOCAB.source_tokens(number))])[0])
    assert t["target_tokens"] == decoder_rows(out, number)
    assert t["output_tokens"][: len(out)] == out  # row i predicts greedy's token i
    assert VOCAB.tokens_of(as_array(nodes_of(t)["out.tokens"]).tolist()) == t["output_tokens"]


@pytest.mark.parametrize(("name", "number"), CASES)
def test_every_node_is_recomputed_from_its_inputs_by_the_numpy_onnx_evaluator_to_1e_5(name, number):
    model, t = traced(name, number)
    values = dict(parameters(model))
    assert t["parameters"] == list(values)
    assert reexecute(t["nodes"], values) > 0


@pytest.mark.parametrize("name", TRACED)
def test_an_ablated_trace_of_any_layout_gates_its_parts_and_is_recomputed_by_numpy(name):
    model = model_of(name)
    last = model.cfg.n_layers - 1
    off = ["enc.0.ffn", f"dec.{last}.cross.h0"]
    raw = orjson.dumps(trace(model, NUMBERS[0], ablation=off).to_json(), option=orjson.OPT_SERIALIZE_NUMPY)
    t = orjson.loads(raw)
    nodes = nodes_of(t)
    assert t["ablation"] == off and all(nodes[f"{p}.gate"]["attrs"] == {"ablation": p} for p in off)
    assert nodes["enc.0.ffn.sum"]["inputs"][1] == "enc.0.ffn.off"
    out = VOCAB.tokens_of(greedy(ablated(model, off), [VOCAB.ids(VOCAB.source_tokens(NUMBERS[0]))])[0])
    assert t["target_tokens"] == decoder_rows(out, NUMBERS[0])
    assert reexecute(t["nodes"], dict(parameters(model))) > 0


@pytest.mark.parametrize("name", TRACED)
def test_the_logit_lens_of_any_layout_ends_in_the_output(name):
    model, t = traced(name, NUMBERS[0])
    nodes, last = nodes_of(t), model.cfg.n_layers - 1
    assert [la["layer"] for la in t["lens"]] == list(range(model.cfg.n_layers))
    assert as_array(nodes[f"lens.dec.{last}.probs"]).tolist() == as_array(nodes["out.probs"]).tolist()
    assert (f"lens.dec.{last}.norm" in nodes) == model.cfg.norm_first


@pytest.mark.parametrize("name", TRACED)
def test_head_slices_concat_and_w_o_have_the_shapes_of_h_and_d_k(name):
    model, t = traced(name, NUMBERS[0])
    c, nodes, params = model.cfg, nodes_of(t), parameters(model)
    n, inner = len(t["source_tokens"]), c.n_heads * c.d_k
    for layer in range(c.n_layers):
        p = f"enc.{layer}.self"
        assert nodes[f"{p}.q"]["shape"] == [n, inner] and nodes[f"{p}.concat"]["shape"] == [n, inner]
        assert [nodes[f"{p}.k.h{i}"]["shape"] for i in range(c.n_heads)] == [[n, c.d_k]] * c.n_heads
        assert f"{p}.q.h{c.n_heads}" not in nodes
        assert params[f"{p}.W_q"].shape == (c.d_model, inner) and params[f"{p}.W_o"].shape == (inner, c.d_model)
    assert f"enc.{c.n_layers}.self.q" not in nodes and f"dec.{c.n_layers - 1}.cross.proj" in nodes


@pytest.mark.parametrize("name", [n for n in TRACED if n.endswith("unscaled") or n == "no_scaling"])
def test_without_scaling_the_scores_are_an_alpha_1_gemm_of_unscaled_qkt(name):
    _, t = traced(name, NUMBERS[0])
    nodes = nodes_of(t)
    scores = nodes["enc.0.self.h0.scores"]
    assert scores["op"] == "Gemm" and scores["attrs"] == {"alpha": 1.0, "transB": 1}
    q, k = as_array(nodes["enc.0.self.q.h0"]), as_array(nodes["enc.0.self.k.h0"])
    assert np.allclose(as_array(scores), q @ k.T, atol=1e-5)


def test_learned_positions_are_rows_of_p_gathered_at_their_indices():
    model, t = traced("learned_positions", NUMBERS[0])
    nodes, params, c = nodes_of(t), parameters(model), model.cfg
    assert "P" in t["parameters"] and params["P"].shape == (c.max_len, c.d_model)
    assert np.array_equal(params["P"], model.positions.detach().numpy())
    for side, tokens in (("src", t["source_tokens"]), ("tgt", t["target_tokens"])):
        positions, pe = nodes[f"{side}.positions"], nodes[f"{side}.pe"]
        assert positions["op"] == "Constant" and positions["dtype"] == "int64"
        assert as_array(positions).tolist() == list(range(len(tokens)))
        assert (pe["op"], pe["inputs"], pe["attrs"]) == ("Gather", ["P", f"{side}.positions"], {"axis": 0})
        assert nodes[f"{side}.x0"]["inputs"] == [f"{side}.scaled", f"{side}.pe"]


def test_sinusoidal_positions_stay_a_constant_and_add_no_parameter():
    _, t = traced("baseline", NUMBERS[0])
    assert nodes_of(t)["src.pe"]["op"] == "Constant" and "src.positions" not in nodes_of(t)
    assert "P" not in t["parameters"]


@pytest.mark.parametrize("name", ["depth_1", "baseline", "depth_3"])
def test_the_memory_field_names_the_last_encoder_layers_output(name):
    model, t = traced(name, NUMBERS[0])
    last = f"enc.{model.cfg.n_layers - 1}.ffn.ln"
    assert t["memory"] == last
    assert all(n["inputs"][0] == last for n in t["nodes"] if n["id"].endswith(("cross.k", "cross.v")))


# ---- refused configurations ------------------------------------------------------------------


@pytest.mark.parametrize("name", REFUSED)
def test_trace_refuses_alibi_with_a_value_error_naming_the_option(name):
    with pytest.raises(ValueError, match="positional='alibi'"):
        trace(model_of(name), NUMBERS[0])


def test_every_config_field_is_followed_or_refused_by_the_trace():
    assert {f.name for f in dataclasses.fields(Config)} == FOLLOWED_OPTIONS

    @dataclasses.dataclass
    class Wider(Config):
        gated_ffn: bool = False  # an option the trace has not learned

    with pytest.raises(ValueError, match="gated_ffn"):
        check_traceable(Wider())


# ---- figures derived from the config ---------------------------------------------------------


@pytest.mark.parametrize("name", list(VARIANTS))
def test_the_parameter_count_by_hand_equals_get_num_params(name):
    model = model_of(name)
    assert count_parameters(model.cfg) == model.get_num_params()
    parts = parameter_breakdown(model.cfg)
    assert parts["encoder_layer"] == sum(p.numel() for p in model.encoder_layers[0].parameters())
    assert parts["decoder_layer"] == sum(p.numel() for p in model.decoder_layers[0].parameters())


@pytest.mark.parametrize("name", list(VARIANTS))
def test_the_pages_worked_parameter_count_equals_get_num_params(name):
    from article.figures import parameter_count

    model = model_of(name)
    figure = parameter_count(model)
    assert figure["total"] == figure["model_count"] == model.get_num_params()
    assert figure["rows"][-1] == {**figure["rows"][-1], "part": "total", "count": model.get_num_params()}


def test_the_count_by_hand_is_48_896_at_d_k_4():
    assert count_parameters(Config(vocab_size=len(VOCAB), d_k=4)) == 48_896 == model_of("d_k_4").get_num_params()


def test_a_model_that_writes_the_german_is_recorded_once_on_it_and_reads_greedys_rows(monkeypatch):
    """The shipped model writes the correct German: its trace is one recording over it, checked by its own
    choices (no greedy pass first), and its rows are greedy's. An untrained model writes something else: greedy
    goes first, and its rows are greedy's too."""
    decoded = []
    checking = record_module.greedy_checking
    monkeypatch.setattr(record_module, "greedy_checking", lambda *a: decoded.append(a) or checking(*a))
    numbers = [0, 7, 100_000, 999_999, *random.Random(4).sample(range(1_000_000), 24)]
    for model, first in ((load(), 0), (model_of("heads_1"), len(numbers))):
        for number in numbers:
            out = VOCAB.tokens_of(greedy(model, [VOCAB.ids(VOCAB.source_tokens(number))])[0])
            assert trace(model, number, lens=False).target_tokens == decoder_rows(out, number), number
        assert len(decoded) == first  # greedy went first for each of the untrained model's inputs only
