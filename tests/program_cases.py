"""The models, programs and traces the program's tests share (tests/recorder/test_program.py,
tests/page/test_engine.py): both shipped miniatures, training snapshots of the 2017 run, and traces of inputs of
many lengths under several ablations, each as a client receives it (JSON: −∞ as null)."""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass

import numpy as np
import orjson
import torch

from model import models
from model.ablation import parts
from model.snapshots import load_snapshot
from model.train import load
from model.transformer import EncoderDecoder
from recorder import parameters, trace
from recorder.program import build_program

# one thread per trace, as the service runs them (app/service/model_service.py): the matrices are 32 wide, and torch's
# intra-op threads cost more than they gain, many times more on a busy machine
torch.set_num_threads(1)

# Parity of a value computed afresh with the server's float32 one: np.allclose's 1e-5 (absolute and
# relative), widened by 1e-6 of the tensor's largest magnitude. The trace is float32 and its residual
# stream reaches ±120 in the modern model, where float32's spacing is 8e-6: where two such terms cancel
# (x + branch ≈ 1), the float32 sum carries their rounding, ~3e-5, which no other order of the same sums
# repeats. The widening is ~16 units in the last place of the largest element; nothing else is loosened.
ATOL = RTOL = 1e-5
SCALE = 1e-6


def close(value: np.ndarray, want: np.ndarray) -> bool:
    """`value` is `want` to the parity rule (−∞ where `want` has −∞)."""
    finite = np.isfinite(want)
    if not np.array_equal(finite, np.isfinite(value)):
        return False
    if not finite.any():
        return True
    v, w = value[finite], want[finite]
    return bool(np.all(np.abs(v - w) <= ATOL + RTOL * np.abs(w) + SCALE * np.abs(w).max()))


@dataclass(frozen=True)
class Case:
    model: str
    number: int
    ablation: tuple[str, ...] = ()
    checkpoint: int | None = None


@functools.cache
def model_of(name: str, checkpoint: int | None = None) -> EncoderDecoder:
    return load(models.weights_path(name)) if checkpoint is None else load_snapshot(checkpoint)


@functools.cache
def params_of(name: str, checkpoint: int | None = None) -> dict[str, np.ndarray]:
    return parameters(model_of(name, checkpoint))


@functools.cache
def program_of(name: str) -> dict:
    """The model's program as a client receives it (JSON)."""
    from app.service.model_service import BEAM_ALPHA, BEAM_SIZE  # the served program's settings (app/routes/program.py)

    program = build_program(
        model_of(name).cfg, params_of(name), name, decoding={"beam_size": BEAM_SIZE, "alpha": BEAM_ALPHA}
    )
    return orjson.loads(orjson.dumps(program, option=orjson.OPT_SERIALIZE_NUMPY))


def traced(case: Case) -> dict:
    t = trace(
        model_of(case.model, case.checkpoint),
        case.number,
        params_of(case.model, case.checkpoint),
        ablation=case.ablation,
    )
    return orjson.loads(orjson.dumps(t.to_json(), option=orjson.OPT_SERIALIZE_NUMPY))


def ablations(name: str, count: int, seed: int) -> list[tuple[str, ...]]:
    """`count` random ablations of the model: one head, one sub-layer, or a few parts of both kinds."""
    every = [p.id for p in parts(model_of(name).cfg)]
    rng = random.Random(seed)
    return [tuple(rng.sample(every, rng.choice((1, 1, 2, 3, 6)))) for _ in range(count)]


def cases(count: int, seed: int, checkpoints: tuple[int, ...] = (0, 100, 1000)) -> list[Case]:
    """`count` inputs of every length (one to six digits), over both models, no ablation or a random one,
    and for the 2017 model now and then a training snapshot."""
    rng = random.Random(seed)
    out = []
    for k in range(count):
        name = models.NAMES[k % len(models.NAMES)]
        digits = rng.randrange(1, 7)
        number = rng.randrange(10 ** (digits - 1) if digits > 1 else 0, 10**digits)
        ablation = ablations(name, 1, rng.randrange(10**6))[0] if k % 3 else ()
        checkpoint = rng.choice(checkpoints) if name == models.DEFAULT and k % 4 == 0 else None
        out.append(Case(name, number, ablation, checkpoint))
    return out
