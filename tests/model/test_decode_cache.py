"""Key/value-cached decoding computes what the uncached decoder computes: the same logits at every
step (to 1e-5), the same greedy tokens and the same beam search, for the shipped model and for every
option of Config; the encoder and the memory's key/value projections run once per decoding. Greedy
decoding that checks a draft (the trace's) gives greedy's tokens whatever the draft."""

from __future__ import annotations

import pytest
import torch

from model.data import heldout_numbers, pad_batch
from model.decode import EXTRA_LENGTH, Stepper, beam_search, greedy, greedy_checking
from model.train import load
from model.transformer import Config, DecoderCache, EncoderDecoder
from model.vocab import VOCAB

torch.set_num_threads(1)

EDGES = [0, 7, 10, 17, 42, 100, 101, 1000, 1234, 20_000, 100_001, 777_777, 999_999]
OPTIONS = {  # untrained models: long, erratic outputs that run to the maximum length
    "paper": {},
    "learned": {"positional": "learned"},
    "rotary": {"positional": "rotary"},
    "alibi": {"positional": "alibi"},
    "pre-LN": {"norm_first": True},
    "unscaled, d_k 5": {"scale_scores": False, "d_k": 5, "n_heads": 3},
}


@pytest.fixture(scope="module")
def shipped() -> EncoderDecoder:
    return load()


def sources(numbers: list[int]) -> list[list[int]]:
    return [VOCAB.ids(VOCAB.source_tokens(n)) for n in numbers]


def untrained(options: dict) -> EncoderDecoder:
    torch.manual_seed(3)
    return EncoderDecoder(Config(**options)).eval()


def stepwise_logits(model: EncoderDecoder, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
    """(B, T, V): row t computed from tgt[:, t] alone, with the keys and values of rows < t cached."""
    memory, cache = model.encode(src), DecoderCache()
    return torch.cat([model.decode(memory, src, tgt[:, t : t + 1], cache) for t in range(tgt.shape[1])], dim=1)


@torch.no_grad()
@pytest.mark.parametrize("name", list(OPTIONS))
def test_cached_logits_equal_the_whole_decoders_at_every_position(name, shipped):
    model = shipped if name == "paper" else untrained(OPTIONS[name])
    numbers = EDGES + heldout_numbers()[:40]
    src = pad_batch(sources(numbers), VOCAB.pad_id)
    # teacher forcing on the references, padded: rows of different lengths, <pad> keys masked
    tgt = pad_batch([[VOCAB.bos_id] + VOCAB.ids(VOCAB.target_tokens(n)) for n in numbers], VOCAB.pad_id)
    whole = model.decode(model.encode(src), src, tgt)
    cached = stepwise_logits(model, src, tgt)
    real = tgt != VOCAB.pad_id  # rows at padding positions are never read
    assert whole.shape == cached.shape
    assert torch.allclose(cached[real], whole[real], atol=1e-5, rtol=0)


@torch.no_grad()
def test_cached_greedy_gives_the_uncached_tokens_for_the_shipped_model(shipped):
    srcs = sources(EDGES + heldout_numbers()[::10])  # 213 inputs in one batch
    cached = greedy(shipped, srcs)  # the default
    assert cached == greedy(shipped, srcs, cached=False)
    assert cached[EDGES.index(42)] == VOCAB.ids(VOCAB.target_tokens(42))[:-1]


@torch.no_grad()
@pytest.mark.parametrize("name", [n for n in OPTIONS if n != "paper"])
def test_cached_greedy_gives_the_uncached_tokens_for_every_option(name):
    model = untrained(OPTIONS[name])
    srcs = sources(EDGES)
    assert greedy(model, srcs, cached=True) == greedy(model, srcs, cached=False)


def same_beams(a, b) -> None:
    assert len(a.steps) == len(b.steps)
    for x, y in zip(a.steps, b.steps, strict=True):
        for kind in ("alive", "finished"):
            assert [h["tokens"] for h in x[kind]] == [h["tokens"] for h in y[kind]]
            # summed over up to 60 steps: 1e-5, or 1e-6 of the sum (its float32 rounding) when it is large
            assert [h["log_prob"] for h in x[kind]] == pytest.approx(
                [h["log_prob"] for h in y[kind]], abs=1e-5, rel=1e-6
            )
    assert a.best.tokens == b.best.tokens
    assert a.best.score == pytest.approx(b.best.score, abs=1e-5, rel=1e-6)


@torch.no_grad()
@pytest.mark.parametrize("number", [0, 42, 1234, 777_777, 999_999])
def test_cached_beam_search_follows_the_uncached_one_step_by_step(number, shipped):
    src = VOCAB.ids(VOCAB.source_tokens(number))
    same_beams(beam_search(shipped, src, cached=True), beam_search(shipped, src, cached=False))


@torch.no_grad()
@pytest.mark.parametrize("name", ["rotary", "alibi", "pre-LN"])
def test_cached_beam_search_follows_the_uncached_one_for_other_options(name):
    model, src = untrained(OPTIONS[name]), VOCAB.ids(VOCAB.source_tokens(1234))
    result = beam_search(model, src, cached=True)
    assert len(result.steps) > 3  # an untrained model keeps hypotheses alive: the cache is reordered
    same_beams(result, beam_search(model, src, cached=False))


@torch.no_grad()
def test_the_encoder_and_the_memorys_keys_and_values_run_once(shipped, monkeypatch):
    import model.transformer as transformer

    calls = {"encoder": 0, "memory keys": 0, "self keys": 0}
    layer = shipped.decoder_layers[0]
    projections = transformer.side_by_side  # K (with Q and V, or with V) is projected here

    def counting(x, *maps):
        calls["memory keys"] += layer.src_attn.w_k in maps
        calls["self keys"] += layer.self_attn.w_k in maps
        return projections(x, *maps)

    def count_encoder(*_):
        calls["encoder"] += 1

    monkeypatch.setattr(transformer, "side_by_side", counting)
    hook = shipped.encoder_layers[0].register_forward_hook(count_encoder)
    try:
        out = greedy(shipped, sources([777_777]))[0]
        # one self-attention key per step: one step per output piece, and the step that gives </s>
        assert calls == {"encoder": 1, "memory keys": 1, "self keys": len(out) + 1}
        for k in calls:
            calls[k] = 0
        greedy(shipped, sources([777_777]), cached=False)
        assert calls["encoder"] == 1 and calls["memory keys"] == len(out) + 1  # recomputed every step
    finally:
        hook.remove()


def test_a_stand_in_without_decoder_layers_decodes_uncached():
    class Echo(torch.nn.Module):  # encode/decode only, as tests/model/test_model.py's scripted models
        def encode(self, src):
            return torch.zeros(src.shape[0], src.shape[1], 1)

        def decode(self, memory, src, ys):
            logits = torch.full((ys.shape[0], ys.shape[1], len(VOCAB)), -9.0)
            logits[:, :, VOCAB.eos_id if ys.shape[1] > 2 else 5] = 0.0
            return logits

    step = Stepper(Echo(), torch.tensor([[5, 2]]))
    assert step.cache is None
    assert greedy(Echo(), [[5, 2]]) == [[5, 5]]


def drafts(right: list[int], max_len: int) -> dict[str, list[int]]:
    """Guesses at an output `right` (without </s>): right, and wrong in each way a guess can be."""
    wrong_token = VOCAB.ids(["drei"])[0]
    out = {
        "right": right,
        "empty": [],
        "one short": right[:-1],
        "one long": right + right[-1:],
        "far too long": right * 9,
        "longer than greedy may write": [wrong_token] * (max_len + 5),
    }
    for i in range(len(right)):  # wrong at each position in turn
        out[f"wrong at {i}"] = right[:i] + [wrong_token if right[i] != wrong_token else right[0]] + right[i + 1 :]
    return out


@torch.no_grad()
def test_checking_a_draft_gives_greedys_tokens_for_the_shipped_model(shipped):
    for n in EDGES + heldout_numbers()[:60]:
        src = VOCAB.ids(VOCAB.source_tokens(n))
        expected = greedy(shipped, [src])[0]
        assert expected == VOCAB.ids(VOCAB.target_tokens(n))[:-1]  # the shipped model is right on these
        for name, draft in drafts(expected, len(src) + EXTRA_LENGTH).items():
            assert greedy_checking(shipped, src, draft) == expected, (n, name)


@torch.no_grad()
@pytest.mark.parametrize("name", list(OPTIONS))
def test_checking_a_draft_gives_greedys_tokens_for_untrained_models(name):
    """Untrained models write to the maximum length: the draft may be agreed to the end, or cut there."""
    model = untrained(OPTIONS[name])
    for n in (7, 1234, 777_777):
        src = VOCAB.ids(VOCAB.source_tokens(n))
        expected = greedy(model, [src])[0]
        cases = drafts(expected, len(src) + EXTRA_LENGTH)
        cases["the correct German"] = VOCAB.ids(VOCAB.target_tokens(n))[:-1]
        for case, draft in cases.items():
            assert greedy_checking(model, src, draft) == expected, (n, case)


@torch.no_grad()
def test_a_right_draft_costs_one_decoder_pass_and_a_wrong_one_continues_from_the_disagreement(shipped):
    calls = []
    hook = shipped.decoder_layers[0].register_forward_hook(lambda m, i, o: calls.append(o.shape[1]))
    try:
        src = VOCAB.ids(VOCAB.source_tokens(777_777))
        right = greedy(shipped, [src])[0]
        calls.clear()
        greedy_checking(shipped, src, right)
        assert calls == [len(right) + 1]  # <s> and the draft, in one pass
        calls.clear()
        greedy_checking(shipped, src, right[:4] + [right[0]] * 3)  # wrong from position 4
        # the pass over the draft, then one row per token after the model's choice at position 4
        assert calls == [8] + [1] * (len(right) - 4)
    finally:
        hook.remove()
