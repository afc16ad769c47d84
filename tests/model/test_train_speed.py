"""The training speed-ups change nothing that training means: the padded softmax is the softmax (to
float rounding, values and gradients); Adam's fused form updates the weights as the loop does; a packed
batch (real tokens only) gives the padded batch's logits, loss and gradients; Q, K and V projected side
by side are the three products; two processes sharing each batch train the one process's model; and
the held-out evaluation in one batch of 2 000 counts what batches of 1 000 count."""

from __future__ import annotations

import pytest
import torch

from model.data import NumberSampler, heldout_numbers, make_batch
from model.decode import greedy
from model.train import TrainConfig, exact_match, load, smoothed_loss, train
from model.transformer import MODERN, Config, EncoderDecoder, side_by_side, softmax_rows
from model.vocab import VOCAB

torch.set_num_threads(1)


@pytest.mark.parametrize("width", [1, 2, 5, 12, 15, 16, 17, 40])
def test_the_padded_softmax_is_the_softmax_with_its_gradient(width):
    gen = torch.Generator().manual_seed(width)
    scores = (3 * torch.randn(64, 4, 7, width, generator=gen)).requires_grad_()
    masked = scores.masked_fill(torch.rand(7, width, generator=gen) < 0.3, float("-inf"))
    masked = masked.masked_fill(torch.arange(width) == 0, 1.0)  # every row keeps one legal column
    ours = softmax_rows(masked)
    theirs = masked.softmax(-1)
    assert ours.shape == theirs.shape
    assert torch.allclose(ours, theirs, atol=1e-6, rtol=0)
    assert torch.equal(ours == 0, theirs == 0)  # masked columns get exactly 0
    upstream = torch.randn(ours.shape, generator=gen)
    (g_ours,) = torch.autograd.grad((ours * upstream).sum(), scores, retain_graph=True)
    (g_theirs,) = torch.autograd.grad((theirs * upstream).sum(), scores)
    assert torch.allclose(g_ours, g_theirs, atol=1e-5, rtol=0)


def test_adam_fused_updates_the_weights_as_the_loop_does():
    weights = []
    for fused in (False, True):
        torch.manual_seed(1)
        model = EncoderDecoder(Config())
        opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.98), eps=1e-9, foreach=False, fused=fused)
        sampler = NumberSampler(1, set())
        for _ in range(3):
            src, dec_in, tgt = make_batch(sampler.sample(32))
            loss = smoothed_loss(model(src, dec_in), tgt, 0.1, VOCAB.pad_id)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        weights.append(model)
    assert_same_weights(*weights, atol=1e-6)
    assert not torch.equal(weights[0].embedding, EncoderDecoder(Config()).embedding)  # the steps moved them


def assert_same_weights(a: EncoderDecoder, b: EncoderDecoder, atol: float) -> None:
    """Every weight within atol, but W^K's biases: a key bias adds one amount to a whole row of scores,
    which softmax ignores, so its gradient is float noise of about 1e-9; Adam divides by √v + ε with
    ε = 1e-9 and turns the noise's last bits into differences near 1e-3. What the model computes does
    not move: its logits on held-out numbers are compared too."""
    compared = 0
    for (name, x), y in zip(a.state_dict().items(), b.state_dict().values(), strict=True):
        if not name.endswith("w_k.bias"):
            assert torch.allclose(x, y, atol=atol, rtol=0), name
            compared += 1
    assert compared > 40
    src, dec_in, _ = make_batch(heldout_numbers()[:64])
    with torch.no_grad():
        assert torch.allclose(a.eval()(src, dec_in), b.eval()(src, dec_in), atol=1e-4, rtol=0)


CONFIGS = {
    "paper": {},
    "modern": MODERN,
    "alibi": {"positional": "alibi"},
    "learned, pre-LN": {"positional": "learned", "norm_first": True},
    "d_k 16": {"d_k": 16},
    "no scaling": {"scale_scores": False},
}


@pytest.mark.parametrize("name", CONFIGS)
def test_a_packed_batch_gives_the_padded_batchs_logits_loss_and_gradients(name):
    torch.manual_seed(3)
    model = EncoderDecoder(Config(**CONFIGS[name])).eval()  # no dropout: the two must compute the same
    src, dec_in, tgt = make_batch(NumberSampler(3, set()).sample(48))
    real = dec_in != VOCAB.pad_id
    assert (tgt != VOCAB.pad_id).equal(real) and 0.2 < (~real).float().mean() < 0.8  # padding to skip
    padded, packed = model(src, dec_in), model(src, dec_in, packed=True)
    assert packed.shape == (int(real.sum()), Config().vocab_size)
    assert torch.allclose(packed, padded[real], atol=1e-5, rtol=0)
    loss_padded = smoothed_loss(padded, tgt, 0.1, VOCAB.pad_id)
    loss_packed = smoothed_loss(packed, tgt[real], 0.1, VOCAB.pad_id)
    assert abs(loss_padded.item() - loss_packed.item()) < 1e-6 * loss_padded.item()
    params = list(model.parameters())
    g_padded = torch.autograd.grad(loss_padded, params)
    g_packed = torch.autograd.grad(loss_packed, params)
    scale = max(g.abs().max().item() for g in g_padded)
    assert all(torch.allclose(a, b, atol=1e-5 * scale, rtol=0) for a, b in zip(g_padded, g_packed))


def test_q_k_and_v_side_by_side_are_the_three_products():
    torch.manual_seed(4)
    attn = EncoderDecoder(Config()).encoder_layers[0].self_attn
    x = torch.randn(5, 7, 32)
    q, k, v = side_by_side(x, attn.w_q, attn.w_k, attn.w_v)
    for got, linear in ((q, attn.w_q), (k, attn.w_k), (v, attn.w_v)):
        assert torch.allclose(got, linear(x), atol=1e-6, rtol=0)


def _short_run(processes: int):
    # no dropout, so that the one process and the team draw nothing at random after the initialisation
    tc = TrainConfig(
        steps=30, batch_size=32, checkpoint_every=10, log_every=10, eval_every=10**9, heldout=heldout_numbers()[:20]
    )
    return train(Config(dropout=0.0), tc, processes=processes)


def test_two_processes_sharing_each_batch_train_the_one_process_model():
    (one, log_one), (two, log_two) = _short_run(1), _short_run(2)
    losses = [(a["loss"], b["loss"]) for a, b in zip(log_one, log_two) if "loss" in a]
    assert len(losses) == 3 and all(abs(a - b) < 1e-5 for a, b in losses)
    assert_same_weights(one, two, atol=1e-5)
    assert log_one[-1]["heldout_exact_match"] == log_two[-1]["heldout_exact_match"]


@torch.no_grad()
def test_one_batch_of_2000_counts_what_batches_of_1000_count():
    model = load()
    held = heldout_numbers()
    assert exact_match(model, held) == exact_match(model, held, batch=1000) >= 0.999
    # and the batch's outputs are each input's own: a batch of one gives the same tokens
    some = held[::250]
    alone = [greedy(model, [VOCAB.ids(VOCAB.source_tokens(n))])[0] for n in some]
    assert alone == greedy(model, [VOCAB.ids(VOCAB.source_tokens(n)) for n in some])
