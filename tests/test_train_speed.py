"""The training speed-ups change nothing that training means: the padded softmax is the softmax (to
float rounding, values and gradients), Adam's foreach form updates the weights bit for bit as the
loop does, and the held-out evaluation in one batch of 2 000 counts what batches of 1 000 count."""

from __future__ import annotations

import pytest
import torch

from model.data import NumberSampler, heldout_numbers, make_batch
from model.decode import greedy
from model.train import exact_match, load, smoothed_loss
from model.transformer import Config, EncoderDecoder, softmax_rows
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


def test_adam_foreach_updates_the_weights_bit_for_bit_as_the_loop_does():
    weights = []
    for foreach in (False, True):
        torch.manual_seed(1)
        model = EncoderDecoder(Config())
        opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.98), eps=1e-9, foreach=foreach)
        sampler = NumberSampler(1, set())
        for _ in range(3):
            src, dec_in, tgt = make_batch(sampler.sample(32))
            loss = smoothed_loss(model(src, dec_in), tgt, 0.1, VOCAB.pad_id)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        weights.append([p.detach().clone() for p in model.parameters()])
    assert all(torch.equal(a, b) for a, b in zip(*weights, strict=True))
    assert not torch.equal(weights[0][0], EncoderDecoder(Config()).embedding)  # the steps moved them


@torch.no_grad()
def test_one_batch_of_2000_counts_what_batches_of_1000_count():
    model = load()
    held = heldout_numbers()
    assert exact_match(model, held) == exact_match(model, held, batch=1000) >= 0.999
    # and the batch's outputs are each input's own: a batch of one gives the same tokens
    some = held[::250]
    alone = [greedy(model, [VOCAB.ids(VOCAB.source_tokens(n))])[0] for n in some]
    assert alone == greedy(model, [VOCAB.ids(VOCAB.source_tokens(n)) for n in some])
