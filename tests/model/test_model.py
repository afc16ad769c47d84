"""The miniature: its size, its agreement with PyTorch's reference, the trace, decoding, the numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from model.data import heldout_numbers, make_batch, pad_batch
from model.decode import beam_search, greedy, strip_eos
from model.train import TrainConfig, exact_match, learning_rate, train
from model.transformer import Config, EncoderDecoder, count_parameters, sinusoid_table
from model.vocab import VOCAB
from tests.onnx_numpy import as_array, reexecute

torch.set_num_threads(2)


@pytest.fixture(scope="module")
def trained() -> EncoderDecoder:
    from model.train import load

    return load()


@pytest.fixture(scope="module")
def trace_json(trained):
    """The trace of a number as a client receives it: through JSON (orjson, −∞ as null)."""
    import orjson

    from recorder import trace

    cache: dict[int, dict] = {}

    def get(number: int) -> dict:
        if number not in cache:
            raw = orjson.dumps(trace(trained, number).to_json(), option=orjson.OPT_SERIALIZE_NUMPY)
            cache[number] = orjson.loads(raw)
        return cache[number]

    return get


# ---- size ---------------------------------------------------------------------------------------


def test_the_miniature_has_61472_parameters_at_a_vocabulary_of_65():
    model = EncoderDecoder(Config(vocab_size=len(VOCAB)))
    assert len(VOCAB) == 65
    assert model.get_num_params() == 61_472
    assert count_parameters(Config(vocab_size=65, d_model=32, n_heads=4, d_ff=128, n_layers=2)) == 61_472


def test_the_same_formula_gives_63_08M_base_and_214_25M_big_at_37000_entries():
    assert count_parameters(Config(vocab_size=37_000, d_model=512, n_heads=8, d_ff=2048, n_layers=6)) == 63_082_496
    assert count_parameters(Config(vocab_size=37_000, d_model=1024, n_heads=16, d_ff=4096, n_layers=6)) == 214_245_376


@pytest.mark.parametrize(
    "cfg", [Config(vocab_size=40, d_model=16, n_heads=2, d_ff=64, n_layers=3), Config(vocab_size=65, n_heads=4, d_k=4)]
)
def test_the_parameter_formula_matches_the_module_at_other_shapes(cfg):
    assert EncoderDecoder(cfg).get_num_params() == count_parameters(cfg)


# ---- parity with torch.nn.Transformer -----------------------------------------------------------


def reference_transformer(model: EncoderDecoder) -> nn.Transformer:
    """torch.nn.Transformer, post-LN, no final stack norms, with our weights copied in."""
    c = model.cfg
    ref = nn.Transformer(
        c.d_model, c.n_heads, c.n_layers, c.n_layers, c.d_ff, dropout=0.0, batch_first=True, norm_first=False
    )
    ref.encoder.norm = ref.decoder.norm = None

    def attn(dst: nn.MultiheadAttention, src) -> None:
        dst.in_proj_weight.data = torch.cat([src.w_q.weight, src.w_k.weight, src.w_v.weight])
        dst.in_proj_bias.data = torch.cat([src.w_q.bias, src.w_k.bias, src.w_v.bias])
        dst.out_proj.weight.data, dst.out_proj.bias.data = src.w_o.weight.data, src.w_o.bias.data

    def ffn_norms(dst, src, norms) -> None:
        dst.linear1.load_state_dict(src.feed_forward.w_1.state_dict())
        dst.linear2.load_state_dict(src.feed_forward.w_2.state_dict())
        for i, name in enumerate(norms):
            getattr(dst, name).load_state_dict(src.sublayer[i].norm.state_dict())

    for dst, src in zip(ref.encoder.layers, model.encoder_layers):
        attn(dst.self_attn, src.self_attn)
        ffn_norms(dst, src, ["norm1", "norm2"])
    for dst, src in zip(ref.decoder.layers, model.decoder_layers):
        attn(dst.self_attn, src.self_attn)
        attn(dst.multihead_attn, src.src_attn)
        ffn_norms(dst, src, ["norm1", "norm2", "norm3"])
    return ref.eval()


@torch.no_grad()
def reference_logits(model: EncoderDecoder, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
    ref = reference_transformer(model)
    pad = model.cfg.pad_id
    causal = nn.Transformer.generate_square_subsequent_mask(tgt.shape[1])
    h = ref(
        model.embed(src),
        model.embed(tgt),
        tgt_mask=causal,
        src_key_padding_mask=src == pad,
        tgt_key_padding_mask=tgt == pad,
        memory_key_padding_mask=src == pad,
    )
    return h @ model.embedding.T


@pytest.mark.parametrize("source", ["random", "trained"])
def test_logits_agree_with_torch_nn_transformer_to_1e_5(source, trained):
    model = trained if source == "trained" else EncoderDecoder(Config()).eval()
    gen = torch.Generator().manual_seed(0)
    src = torch.randint(3, 65, (6, 9), generator=gen)
    tgt = torch.randint(3, 65, (6, 7), generator=gen)
    src[0, 5:] = tgt[1, 4:] = 0  # padding in both
    ours = model(src, tgt)
    theirs = reference_logits(model, src, tgt)
    real = tgt != 0
    assert torch.allclose(ours[real], theirs[real], atol=1e-5), (ours[real] - theirs[real]).abs().max()


# ---- the trace -----------------------------------------------------------------------------------


@pytest.mark.parametrize("number", [42, 731_015, 0])
def test_every_trace_tensor_is_recomputed_from_its_inputs_by_a_numpy_onnx_evaluator(number, trained, trace_json):
    t = trace_json(number)
    values = {}
    from recorder import parameters

    for pid, arr in parameters(trained).items():
        values[pid] = arr
    assert t["parameters"] == list(values)
    assert reexecute(t["nodes"], values) > 200
    # the constants are what they claim to be
    assert np.allclose(values["src.pe"], sinusoid_table(len(t["source_tokens"]), 32).numpy())
    assert np.array_equal(values["dec.mask"], np.tril(np.ones_like(values["dec.mask"])))


@pytest.mark.parametrize("number", [42, 999_999, 17])
def test_the_trace_reads_the_greedy_output_and_its_logits_are_the_models(number, trained, trace_json):
    t = trace_json(number)
    src = VOCAB.ids(VOCAB.source_tokens(number))
    out = greedy(trained, [src])[0]
    assert t["target_tokens"] == ["<s>"] + VOCAB.tokens_of(out)
    assert t["output_tokens"] == VOCAB.tokens_of(out) + ["</s>"]
    logits = next(n for n in t["nodes"] if n["id"] == "out.logits")
    with torch.no_grad():
        ours = trained(torch.tensor([src]), torch.tensor([VOCAB.ids(t["target_tokens"])]))[0]
    assert np.allclose(as_array(logits), ours.numpy(), atol=1e-5)


def test_the_trace_marks_masked_scores_as_minus_infinity_encoded_as_null(trace_json):
    t = trace_json(42)
    masked = next(n for n in t["nodes"] if n["id"] == "dec.0.self.h0.masked")
    m = masked["shape"][0]
    grid = np.array(masked["data"], dtype=object).reshape(m, m)
    assert all(grid[i, j] is None for i in range(m) for j in range(m) if j > i)
    assert all(grid[i, j] is not None for i in range(m) for j in range(m) if j <= i)


def test_derived_figures_are_computed_from_the_trace_tensors(client):
    from tests.in_page import page_parts

    (page,) = page_parts(client, ["731015"])  # the page's figures over the served trace
    t, d = page["trace"], page["derived"]
    nodes = {n["id"]: n for n in t["nodes"]}
    first = as_array(nodes["enc.0.self.sum"])[0]
    assert d["first_token_mean"] == pytest.approx(first.mean(), abs=1e-6)
    assert d["first_token_std"] == pytest.approx(first.std(), abs=1e-6)
    hidden = as_array(nodes["enc.0.ffn.hidden"])
    assert d["ffn_zero_fraction"] == pytest.approx((hidden == 0).mean())
    assert 0 < d["ffn_zero_fraction"] < 1
    probs, chosen = as_array(nodes["out.probs"]), as_array(nodes["out.tokens"])
    assert d["least_certain_prob"] == pytest.approx(probs[np.arange(len(chosen)), chosen].min(), abs=1e-6)
    assert d["german"] == "siebenhunderteinunddreißigtausendfünfzehn"


# ---- the causal mask -----------------------------------------------------------------------------


@torch.no_grad()
def test_changing_a_later_decoder_input_leaves_earlier_outputs_unchanged(trained):
    src = torch.tensor([VOCAB.ids(VOCAB.source_tokens(4242))])
    tgt = torch.tensor([VOCAB.ids(["<s>", "vier", "tausend", "zwei", "hundert", "zwei"])])
    changed = tgt.clone()
    changed[0, 4] = VOCAB.ids(["neun"])[0]
    a, b = trained(src, tgt)[0], trained(src, changed)[0]
    assert torch.equal(a[:4], b[:4]) or torch.allclose(a[:4], b[:4], atol=1e-6)
    assert not torch.allclose(a[4:], b[4:], atol=1e-3)  # and the change does reach later positions


# ---- the paper's numbers recomputed -------------------------------------------------------------


@pytest.mark.parametrize("k", [1, 3, 17])
def test_pe_at_pos_plus_k_is_a_fixed_rotation_of_pe_at_pos(k):
    d = 32
    pe = sinusoid_table(80, d).double().numpy()
    freqs = np.exp(-math.log(10000.0) * np.arange(0, d, 2) / d)
    rotation = np.zeros((d, d))
    for i, w in enumerate(freqs):  # one 2×2 rotation per (sin, cos) pair, depending on k alone
        c, s = math.cos(w * k), math.sin(w * k)
        rotation[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [[c, s], [-s, c]]
    for pos in (0, 5, 40, 62):
        assert np.allclose(rotation @ pe[pos], pe[pos + k], atol=1e-5)


def test_wavelengths_form_a_geometric_progression_from_2pi_towards_10000_times_2pi():
    d = 512
    wavelengths = 2 * math.pi / np.exp(-math.log(10000.0) * np.arange(0, d, 2) / d)
    ratios = wavelengths[1:] / wavelengths[:-1]
    assert wavelengths[0] == pytest.approx(2 * math.pi)
    assert np.allclose(ratios, 10000 ** (2 / d))  # geometric
    assert wavelengths[-1] * ratios[0] == pytest.approx(10000 * 2 * math.pi)  # the limit, at 2i = d


@pytest.mark.parametrize("d_k", [8, 64, 512])
def test_q_dot_k_of_unit_variance_components_has_variance_d_k(d_k):
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((2, 200_000, d_k))
    dots = (q * k).sum(-1)
    assert abs(dots.mean()) < 0.05 * math.sqrt(d_k)
    assert dots.var() == pytest.approx(d_k, rel=0.03)


def test_the_learning_rate_peaks_at_7e_4_at_step_4000_for_d_512():
    rates = [learning_rate(s, 512, 4000) for s in range(1, 20_000)]
    assert int(np.argmax(rates)) + 1 == 4000
    assert max(rates) == pytest.approx(6.99e-4, abs=0.01e-4)


# ---- decoding ------------------------------------------------------------------------------------


class ScriptedModel(nn.Module):
    """A stand-in whose next-token distribution depends only on the last token read."""

    def __init__(self, table: dict[int, dict[int, float]]):
        super().__init__()
        self.table, self.cfg = table, Config()

    def encode(self, src):
        return torch.zeros(src.shape[0], src.shape[1], 1)

    def decode(self, memory, src, ys):
        logits = torch.full((ys.shape[0], ys.shape[1], 65), -30.0)
        for b, last in enumerate(ys[:, -1].tolist()):
            for tok, p in self.table.get(last, {2: 1.0}).items():
                logits[b, -1, tok] = math.log(p)
        return logits


A, B, X, EOS, BOS = 3, 4, 5, 2, 1


def scripted(p_eos_after_b: float) -> ScriptedModel:
    never_ends = {EOS: 1e-9, 9: 1 - 1e-9}  # a continuation that cannot win at any α used here
    return ScriptedModel(
        {
            BOS: {A: 0.5, B: 0.4, 6: 0.1},
            A: {X: 0.35, EOS: 0.31, 7: 0.34},
            X: {EOS: 0.99},
            B: {EOS: p_eos_after_b, 8: 1 - p_eos_after_b},
            7: {EOS: 0.5, 9: 0.5},
            8: never_ends,
            9: never_ends,
        }
    )


def test_beam_search_finds_a_better_sequence_than_greedy():
    model = scripted(0.9)
    assert greedy(model, [[10, 2]]) == [[A, X]]  # 0.5 · 0.35 · 0.99 = 0.173
    best = beam_search(model, [10, 2], beam=4, alpha=0.6).best
    assert best.tokens == [B, EOS]  # 0.4 · 0.9 = 0.36
    assert best.score == pytest.approx(math.log(0.36) / ((5 + 2) / 6) ** 0.6, rel=1e-4)


def test_the_length_penalty_can_turn_the_choice_to_the_longer_hypothesis():
    model = scripted(0.5)  # short: B EOS = 0.20; long: A X EOS = 0.173
    assert beam_search(model, [10, 2], alpha=0.0).best.tokens == [B, EOS]  # raw log p: short wins
    assert beam_search(model, [10, 2], alpha=1.0).best.tokens == [A, X, EOS]  # −1.753/(8/6) > −1.609/(7/6)


def test_beam_search_reports_every_step_and_stops_when_no_alive_beam_can_win():
    result = beam_search(scripted(0.9), [10, 2], alpha=0.0)  # at α = 0 the bound is log p itself
    assert [s["step"] for s in result.steps] == list(range(1, len(result.steps) + 1))
    assert len(result.steps) < 10  # far below the maximum of input length + 50
    assert all(len(s["alive"]) <= 4 for s in result.steps)


# ---- the shipped model ---------------------------------------------------------------------------


def test_held_out_exact_match_is_at_least_99_9_percent_greedy(trained):
    assert exact_match(trained, heldout_numbers()) >= 0.999


def test_held_out_exact_match_is_at_least_99_9_percent_with_beam_4(trained):
    numbers = heldout_numbers()[::5]  # 400 of the 2 000: beam search runs one input at a time
    hits = sum(
        strip_eos(beam_search(trained, VOCAB.ids(VOCAB.source_tokens(n))).best.tokens)
        == VOCAB.ids(VOCAB.target_tokens(n))[:-1]
        for n in numbers
    )
    assert hits / len(numbers) >= 0.999


def test_held_out_numbers_are_never_trained_on():
    from model.data import NumberSampler

    held = set(heldout_numbers())
    assert len(held) == 2000
    assert not held & set(NumberSampler(3, held).sample(50_000))


# ---- reproducibility -----------------------------------------------------------------------------


def test_a_short_training_run_twice_gives_identical_weights():
    tc = TrainConfig(
        steps=12, batch_size=16, checkpoint_every=4, eval_every=10_000, log_every=4, heldout=heldout_numbers()[:5]
    )
    a, _ = train(Config(), tc)
    b, _ = train(Config(), tc)
    for (ka, va), (kb, vb) in zip(a.state_dict().items(), b.state_dict().items()):
        assert ka == kb and torch.equal(va, vb), ka


def test_checkpoint_averaging_builds_fresh_tensors_and_keeps_the_tie():
    from model.train import average_state_dicts

    m = EncoderDecoder(Config())
    s1 = {k: v.clone() for k, v in m.state_dict().items()}
    s2 = {k: v + 1 for k, v in s1.items()}
    avg = average_state_dicts([s1, s2])
    assert torch.allclose(avg["embedding"], s1["embedding"] + 0.5)
    assert torch.equal(s1["embedding"], m.state_dict()["embedding"])  # inputs untouched


def test_batches_shift_the_target_right_behind_bos():
    src, dec_in, tgt = make_batch([42])
    assert VOCAB.tokens_of(src[0].tolist()) == ["forty", "two", "</s>"]
    assert VOCAB.tokens_of(dec_in[0].tolist()) == ["<s>", "zwei", "und", "vierzig"]
    assert VOCAB.tokens_of(tgt[0].tolist()) == ["zwei", "und", "vierzig", "</s>"]
    assert pad_batch([[5], [5, 6]], 0).tolist() == [[5, 0], [5, 6]]


@pytest.mark.parametrize("decode", ["greedy", "beam"])
def test_decoding_records_no_graph_so_the_model_can_be_copied_for_switching_parts_off(decode):
    """Decoding runs without autograd: an attention layer keeps its last weights on itself, and one kept with a
    graph behind it makes copy.deepcopy refuse the model, so every later request with a part switched off would
    fail (the server answered 500 once beam search lost its no_grad)."""
    import copy

    from model.ablation import ablated
    from model.train import load

    model = load()  # its own copy: the module's fixture is shared with tests that only read it
    source = VOCAB.ids(VOCAB.source_tokens(713))
    if decode == "beam":
        beam_search(model, source)
    else:
        greedy(model, [source])
    kept = [t for m in model.modules() for t in vars(m).values() if isinstance(t, torch.Tensor)]
    assert kept and not any(t.requires_grad for t in kept), "a tensor kept on the model carries a graph"
    copy.deepcopy(model)
    ablated(model, ["dec.0.cross.h0"])
