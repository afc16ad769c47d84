"""Training with the paper's recipe (§5.3–§5.4), sizes aside, and checkpoint averaging (§6.1)."""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
import torch.nn.functional as F

from model.data import NumberSampler, heldout_numbers, make_batch
from model.decode import greedy
from model.transformer import Config, EncoderDecoder
from model.vocab import VOCAB

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"


@dataclass
class TrainConfig:
    steps: int = 4000  # optimiser updates
    batch_size: int = 128  # sentence pairs per batch
    warmup: int = 400  # warm-up steps of the learning-rate schedule (paper: 4 000 of 100 000)
    label_smoothing: float = 0.1  # ε_ls (§5.4)
    average_last: int = 5  # checkpoints averaged into the final weights (§6.1)
    checkpoint_every: int = 100  # steps between the checkpoints that may be averaged
    eval_every: int = 500  # steps between held-out exact-match evaluations
    log_every: int = 50  # steps between log records of loss and learning rate
    seed: int = 1
    max_words: int | None = None  # train only on numbers with at most this many English words
    heldout: list[int] = field(default_factory=heldout_numbers)
    keep: Callable[[int], bool] | None = None  # an extra filter on training numbers (research)


def learning_rate(step: int, d_model: int, warmup: int) -> float:
    """lrate = d_model^−0.5 · min(step^−0.5, step · warmup^−1.5)  (§5.3)."""
    step = max(step, 1)
    if warmup <= 0:
        return d_model ** -0.5 * step ** -0.5
    return d_model ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)


def smoothed_loss(logits: torch.Tensor, target: torch.Tensor, epsilon: float, pad_id: int) -> torch.Tensor:
    """Cross-entropy against (1 − ε)·one-hot + ε/V uniform over all V entries (§5.4, [17]).

    This is PyTorch's formulation; padding positions are ignored.
    """
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1),
                           ignore_index=pad_id, label_smoothing=epsilon)


def average_state_dicts(states: list[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """Fresh tensors holding the mean of each entry (in-place sums would double-count tied weights)."""
    return {k: torch.stack([s[k].float() for s in states]).mean(0) for k in states[0]}


@torch.no_grad()
def exact_match(model: EncoderDecoder, numbers: list[int], batch: int = 2000) -> float:
    """The share of `numbers` whose greedy output is the reference, decoded `batch` at a time (the
    held-out 2 000 in one batch, with the key/value cache: model/decode.py)."""
    hits = 0
    for i in range(0, len(numbers), batch):
        chunk = numbers[i:i + batch]
        outs = greedy(model, [VOCAB.ids(VOCAB.source_tokens(n)) for n in chunk])
        hits += sum(o == VOCAB.ids(VOCAB.target_tokens(n))[:-1] for o, n in zip(outs, chunk))
    return hits / len(numbers)


@torch.no_grad()
def heldout_loss(model: EncoderDecoder, numbers: list[int]) -> float:
    """Mean per-token cross-entropy (no smoothing) under teacher forcing; exp of it is perplexity."""
    model.eval()
    src, dec_in, tgt = make_batch(numbers)
    logits = model(src, dec_in)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1), ignore_index=VOCAB.pad_id).item()


def train(cfg: Config, tc: TrainConfig, progress: bool = False,
          on_eval: Callable[[dict], None] | None = None,
          on_step: Callable[[int, EncoderDecoder, float | None], None] | None = None,
          ) -> tuple[EncoderDecoder, list[dict]]:
    """Train from scratch; returns the averaged model and the log (a list of records).

    `on_step(step, model, loss)` sees the initialisation (step 0, loss None) and the weights after
    every update; it must not change them (model/snapshots.py keeps copies at chosen steps).
    """
    torch.manual_seed(tc.seed)
    model = EncoderDecoder(cfg)
    if on_step:
        on_step(0, model, None)
    opt = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9, foreach=True)  # §5.3
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: learning_rate(i + 1, cfg.d_model, tc.warmup))
    sampler = NumberSampler(tc.seed, set(tc.heldout), tc.max_words, tc.keep)
    log: list[dict] = []
    checkpoints: list[dict[str, torch.Tensor]] = []
    running, t0 = 0.0, time.perf_counter()
    for step in range(1, tc.steps + 1):
        model.train()
        src, dec_in, tgt = make_batch(sampler.sample(tc.batch_size))
        loss = smoothed_loss(model(src, dec_in), tgt, tc.label_smoothing, VOCAB.pad_id)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        lr = opt.param_groups[0]["lr"]
        opt.step()
        sched.step()
        running += loss.item()
        if on_step:
            on_step(step, model, loss.item())
        if step % tc.checkpoint_every == 0 or step == tc.steps:
            snapshot = {k: v.detach().clone() for k, v in model.state_dict().items()}
            checkpoints = (checkpoints + [snapshot])[-tc.average_last:]
        if step % tc.log_every == 0 or step == tc.steps:
            steps_since = tc.log_every if step % tc.log_every == 0 else step % tc.log_every
            record = {"step": step, "loss": running / steps_since,
                      "lr": lr, "seconds": round(time.perf_counter() - t0, 2)}
            running = 0.0
            if step % tc.eval_every == 0 or step == tc.steps:
                record["heldout_exact_match"] = exact_match(model, tc.heldout)
                if on_eval:
                    on_eval(record)
            log.append(record)
            if progress:
                _progress(step, tc.steps, record)
    if progress:
        print(file=sys.stderr)
    final = EncoderDecoder(cfg)
    final.load_state_dict(average_state_dicts(checkpoints))
    final.eval()
    log.append({"step": tc.steps, "averaged": len(checkpoints), "heldout_exact_match": exact_match(final, tc.heldout),
                "heldout_loss": heldout_loss(final, tc.heldout), "seconds": round(time.perf_counter() - t0, 2)})
    return final, log


def _progress(step: int, total: int, record: dict) -> None:
    width = 30
    done = int(width * step / total)
    em = f" exact {record['heldout_exact_match']:.1%}" if "heldout_exact_match" in record else ""
    sys.stderr.write(f"\r[{'#' * done}{'.' * (width - done)}] {step}/{total} loss {record['loss']:.3f} "
                     f"lr {record['lr']:.2e}{em}   ")
    sys.stderr.flush()


def save(model: EncoderDecoder, log: list[dict], tc: TrainConfig, out: Path = ARTIFACTS) -> None:
    """Weights as safetensors (the tied E stored once), the log and the held-out list as JSON."""
    from safetensors.torch import save_file

    out.mkdir(parents=True, exist_ok=True)
    state = {k: v.contiguous() for k, v in model.state_dict().items()}
    save_file(state, out / "model.safetensors", metadata={"config": json.dumps(model.cfg.to_dict())})
    train_cfg = {k: v for k, v in asdict(tc).items() if k not in ("heldout", "keep")}
    (out / "training_log.json").write_text(json.dumps({"train_config": train_cfg, "log": log}, indent=1))
    (out / "heldout.json").write_text(json.dumps(tc.heldout))


def load(path: Path = ARTIFACTS / "model.safetensors") -> EncoderDecoder:
    from safetensors import safe_open
    from safetensors.torch import load_file

    with safe_open(str(path), "pt") as f:
        cfg = Config(**json.loads(f.metadata()["config"]))
    model = EncoderDecoder(cfg)
    model.load_state_dict(load_file(str(path)))
    model.eval()
    return model


def perplexity(loss: float) -> float:
    return math.exp(loss)
