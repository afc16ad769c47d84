"""Training with the paper's recipe (§5.3–§5.4), sizes aside, and checkpoint averaging (§6.1)."""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import Tensor

from model.data import NumberSampler, heldout_numbers, make_batch
from model.decode import greedy
from model.transformer import Config, EncoderDecoder, count_parameters
from model.vocab import VOCAB

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"


@dataclass
class TrainConfig:
    steps: int = 4000  # optimiser updates
    batch_size: int = 128  # sentence pairs per batch
    warmup: int = 400  # warm-up steps of the learning-rate schedule (paper: 4 000 of 100 000)
    label_smoothing: float = 0.1  # ε_ls (paper §5.4)
    average_last: int = 5  # checkpoints averaged into the final weights (paper §6.1)
    checkpoint_every: int = 100  # steps between the checkpoints that may be averaged
    eval_every: int = 500  # steps between held-out exact-match evaluations
    log_every: int = 50  # steps between log records of loss and learning rate
    seed: int = 1
    max_words: int | None = None  # train only on numbers with at most this many English words
    heldout: list[int] = field(default_factory=heldout_numbers)
    keep: Callable[[int], bool] | None = None  # an extra filter on training numbers (research)


def learning_rate(step: int, d_model: int, warmup: int) -> float:
    """lrate = d_model^−0.5 · min(step^−0.5, step · warmup^−1.5)  (paper §5.3)."""
    step = max(step, 1)
    if warmup <= 0:
        return d_model**-0.5 * step**-0.5
    return d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


def smoothed_loss(
    logits: torch.Tensor, target: torch.Tensor, epsilon: float, pad_id: int, reduction: str = "mean"
) -> torch.Tensor:
    """Cross-entropy against (1 − ε)·one-hot + ε/V uniform over all V entries (paper §5.4, [17]).

    This is PyTorch's formulation; padding positions are ignored. `reduction="sum"`: the sum over the
    tokens, for a `Team` process whose share is divided by the whole batch's token count.
    """
    return F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]),
        target.reshape(-1),
        ignore_index=pad_id,
        label_smoothing=epsilon,
        reduction=reduction,
    )


def average_state_dicts(states: list[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """Fresh tensors holding the mean of each entry (in-place sums would double-count tied weights)."""
    return {k: torch.stack([s[k].float() for s in states]).mean(0) for k in states[0]}


@torch.no_grad()
def exact_match(model: EncoderDecoder, numbers: list[int], batch: int = 2000) -> float:
    """The share of `numbers` whose greedy output is the reference, decoded `batch` at a time (the
    held-out 2 000 in one batch, with the key/value cache: model/decode.py)."""
    hits = 0
    for i in range(0, len(numbers), batch):
        chunk = numbers[i : i + batch]
        outs = greedy(model, [VOCAB.ids(VOCAB.source_tokens(n)) for n in chunk])
        hits += sum(o == VOCAB.ids(VOCAB.target_tokens(n))[:-1] for o, n in zip(outs, chunk))
    return hits / len(numbers)


@torch.no_grad()
def heldout_loss(model: EncoderDecoder, numbers: list[int]) -> float:
    """Mean per-token cross-entropy (no smoothing) under teacher forcing; exp of it is perplexity."""
    model.eval()
    src, dec_in, tgt = make_batch(numbers)
    logits = model(src, dec_in, packed=True)  # the real tokens' rows: no padding to ignore
    return F.cross_entropy(logits, tgt[tgt != VOCAB.pad_id]).item()


class Team:
    """Several processes training one model: each takes its share of every batch, and their gradients
    are added up before each update. Every process draws the whole batch from the same sampler and
    holds the same weights, so the updates are one process's on the whole batch, up to float rounding
    and dropout's random draws; only process 0 logs, evaluates and averages.

    The gradients meet in shared memory (`board`: a row per process, two boards used in turn so that
    nobody overwrites a board another is still reading), with a gloo barrier between writing and
    adding up: 0.6 ms a step, against 1.8 ms for gloo's all_reduce over loopback."""

    def __init__(self, rank: int = 0, size: int = 1, boards: Tensor | None = None):
        self.rank, self.size, self.boards, self.steps = rank, size, boards, 0

    @staticmethod
    def boards_for(cfg: Config, size: int) -> Tensor:
        """(2, size, parameters + 2) in shared memory: every gradient, the loss sum, the token count."""
        return torch.zeros(2, size, count_parameters(cfg) + 2).share_memory_()

    def share(self, numbers: list[int]) -> list[int]:
        return numbers[self.rank :: self.size]

    def backward(self, model: EncoderDecoder, logits: Tensor, target: Tensor, epsilon: float) -> float:
        """Back-propagate the smoothed loss's mean over the whole batch's real tokens; return that mean."""
        if self.size == 1:
            loss = smoothed_loss(logits, target, epsilon, VOCAB.pad_id)
            loss.backward()
            return loss.item()
        import torch.distributed as dist

        total = smoothed_loss(logits, target, epsilon, VOCAB.pad_id, reduction="sum")
        total.backward()
        params = list(model.parameters())
        board = self.boards[self.steps % 2]
        self.steps += 1
        torch.cat(
            [p.grad.flatten() for p in params] + [total.detach()[None], torch.tensor([target.numel()])],
            out=board[self.rank],
        )
        dist.barrier()
        flat = board.sum(0)
        tokens, offset = flat[-1], 0
        for p in params:
            p.grad.copy_(flat[offset : offset + p.numel()].view_as(p)).div_(tokens)
            offset += p.numel()
        return (flat[-2] / tokens).item()


ADAM_BETAS = (0.9, 0.98)  # the paper's §5.3: β1, β2 (the article's Adam figure reads them here)
TEAM_TIMEOUT = timedelta(seconds=120)  # a process that died leaves the others waiting this long, not 30 min


def _team_member(index: int, size: int, address: str, boards: Tensor, cfg: Config, tc: TrainConfig) -> None:
    """A helper process of `train(..., processes=size)`: the same steps on its share of each batch.
    Its rank is index + 1 (start_processes counts helpers from 0; process 0 is the caller)."""
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=address, rank=index + 1, world_size=size, timeout=TEAM_TIMEOUT)
    try:
        _train(cfg, tc, Team(index + 1, size, boards))
    finally:
        dist.destroy_process_group()


def train(
    cfg: Config,
    tc: TrainConfig,
    progress: bool = False,
    on_eval: Callable[[dict], None] | None = None,
    on_step: Callable[[int, EncoderDecoder, float | None], None] | None = None,
    processes: int = 1,
) -> tuple[EncoderDecoder, list[dict]]:
    """Train from scratch; returns the averaged model and the log (a list of records).

    `on_step(step, model, loss)` sees the initialisation (step 0, loss None) and the weights after
    every update; it must not change them (model/snapshots.py keeps copies at chosen steps).
    `processes` > 1 splits every batch between that many processes, one core each (`Team`).
    """
    if processes <= 1:
        return _train(cfg, tc, Team(), progress, on_eval, on_step)
    import tempfile

    import torch.distributed as dist
    import torch.multiprocessing as mp

    with tempfile.TemporaryDirectory() as tmp:
        address = f"file://{tmp}/rendezvous"
        boards = Team.boards_for(cfg, processes)
        helpers = mp.start_processes(
            _team_member,
            args=(processes, address, boards, cfg, tc),
            nprocs=processes - 1,
            join=False,
            start_method="spawn",
        )
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        dist.init_process_group("gloo", init_method=address, rank=0, world_size=processes, timeout=TEAM_TIMEOUT)
        try:
            result = _train(cfg, tc, Team(0, processes, boards), progress, on_eval, on_step, eval_threads=threads)
        finally:
            dist.destroy_process_group()
            torch.set_num_threads(threads)
        helpers.join()
    return result


def _averaged(
    cfg: Config, tc: TrainConfig, checkpoints: list[dict[str, torch.Tensor]], eval_threads: int | None
) -> tuple[EncoderDecoder, dict]:
    """The model the run ships (the last checkpoints averaged, as the paper's base models are) and its log
    record: the held-out exact match and loss."""
    final = EncoderDecoder(cfg)
    final.load_state_dict(average_state_dicts(checkpoints))
    final.eval()
    record = {
        "step": tc.steps,
        "averaged": len(checkpoints),
        "heldout_exact_match": _evaluate(final, tc.heldout, eval_threads),
        "heldout_loss": heldout_loss(final, tc.heldout),
    }
    return final, record


def _train(
    cfg: Config,
    tc: TrainConfig,
    team: Team,
    progress: bool = False,
    on_eval: Callable[[dict], None] | None = None,
    on_step: Callable[[int, EncoderDecoder, float | None], None] | None = None,
    eval_threads: int | None = None,
) -> tuple[EncoderDecoder, list[dict]] | None:
    torch.manual_seed(tc.seed)
    model = EncoderDecoder(cfg)
    if team.size > 1:
        torch.manual_seed(tc.seed * 1000 + team.rank)  # same weights everywhere, each its own dropout draws
    if on_step:
        on_step(0, model, None)
    opt = torch.optim.Adam(model.parameters(), lr=1.0, betas=ADAM_BETAS, eps=1e-9, fused=True)  # the paper's §5.3
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: learning_rate(i + 1, cfg.d_model, tc.warmup))
    sampler = NumberSampler(tc.seed, set(tc.heldout), tc.max_words, tc.keep)
    log: list[dict] = []
    checkpoints: list[dict[str, torch.Tensor]] = []
    running, t0 = 0.0, time.perf_counter()
    for step in range(1, tc.steps + 1):
        model.train()
        src, dec_in, tgt = make_batch(team.share(sampler.sample(tc.batch_size)))
        opt.zero_grad(set_to_none=True)
        # the real tokens only (about half of a padded batch): the same loss, computed on fewer rows
        loss = team.backward(model, model(src, dec_in, packed=True), tgt[tgt != VOCAB.pad_id], tc.label_smoothing)
        lr = opt.param_groups[0]["lr"]
        opt.step()
        sched.step()
        if team.rank:
            continue  # a helper: nothing to log, keep or evaluate
        running += loss
        if on_step:
            on_step(step, model, loss)
        if step % tc.checkpoint_every == 0 or step == tc.steps:
            snapshot = {k: v.detach().clone() for k, v in model.state_dict().items()}
            checkpoints = (checkpoints + [snapshot])[-tc.average_last :]
        if step % tc.log_every == 0 or step == tc.steps:
            steps_since = tc.log_every if step % tc.log_every == 0 else step % tc.log_every
            record = {
                "step": step,
                "loss": running / steps_since,
                "lr": lr,
                "seconds": round(time.perf_counter() - t0, 2),
            }
            running = 0.0
            if step % tc.eval_every == 0 or step == tc.steps:
                record["heldout_exact_match"] = _evaluate(model, tc.heldout, eval_threads)
                if on_eval:
                    on_eval(record)
            log.append(record)
            if progress:
                _progress(step, tc.steps, record)
    if team.rank:
        return None
    if progress:
        print(file=sys.stderr)
    final, record = _averaged(cfg, tc, checkpoints, eval_threads)
    return final, log + [{**record, "seconds": round(time.perf_counter() - t0, 2)}]


def _evaluate(model: EncoderDecoder, numbers: list[int], threads: int | None) -> float:
    """exact_match, on `threads` cores: the team's helpers wait for process 0 meanwhile."""
    if threads is None:
        return exact_match(model, numbers)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        return exact_match(model, numbers)
    finally:
        torch.set_num_threads(before)


def _progress(step: int, total: int, record: dict) -> None:
    width = 30
    done = int(width * step / total)
    em = f" exact {record['heldout_exact_match']:.1%}" if "heldout_exact_match" in record else ""
    sys.stderr.write(
        f"\r[{'#' * done}{'.' * (width - done)}] {step}/{total} loss {record['loss']:.3f} lr {record['lr']:.2e}{em}   "
    )
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
