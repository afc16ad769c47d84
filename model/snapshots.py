"""The training time machine: copies of the weights at chosen steps of a training run.

`Recorder` is the `on_step` callback of `model.train.train`: it keeps a float16 copy of every
weight at each step of `SNAPSHOT_STEPS` (0 is the initialisation, denser early, where the loss
falls fastest; 3 600–4 000 are the five checkpoints the shipped model averages, as in the paper's §6.1). `save`
writes them to one safetensors file, `load_snapshot` rebuilds the model at one of them.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import torch

from model.transformer import Config, EncoderDecoder

SNAPSHOTS = Path(__file__).resolve().parent / "artifacts" / "snapshots.safetensors"
SNAPSHOT_STEPS = (
    0,
    25,
    50,
    75,
    100,
    150,
    200,
    300,
    400,
    500,
    600,
    800,
    1000,
    1200,
    1500,
    2000,
    2500,
    3000,
    3600,
    3700,
    3800,
    3900,
    4000,
)


class Recorder:
    """Keeps float16 copies of the weights at `steps` (with the batch loss of that update)."""

    def __init__(self, steps: tuple[int, ...] = SNAPSHOT_STEPS):
        self.steps = set(steps)
        self.weights: dict[int, dict[str, torch.Tensor]] = {}
        self.losses: dict[int, float | None] = {}

    def __call__(self, step: int, model: EncoderDecoder, loss: float | None) -> None:
        if step in self.steps:
            self.weights[step] = {k: v.detach().to(torch.float16).clone() for k, v in model.state_dict().items()}
            self.losses[step] = loss


def _key(step: int, name: str) -> str:
    return f"step{step}/{name}"


def save(
    recorder: Recorder, cfg: Config, path: Path = SNAPSHOTS, note: str = "", log: list[dict] | None = None
) -> None:
    """One file: every snapshot's tensors under `step<N>/<name>`; steps, batch losses, the model
    config, the run's training log and a note on the run in the metadata."""
    from safetensors.torch import save_file

    steps = sorted(recorder.weights)
    tensors = {_key(s, k): v.contiguous() for s in steps for k, v in recorder.weights[s].items()}
    meta = {
        "config": json.dumps(cfg.to_dict()),
        "steps": json.dumps(steps),
        "batch_loss": json.dumps([recorder.losses[s] for s in steps]),
        "note": note,
        "log": json.dumps(log or []),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    save_file(tensors, path, metadata=meta)


@lru_cache(maxsize=1)
def _metadata(path: Path) -> dict:
    from safetensors import safe_open

    with safe_open(str(path), "pt") as f:
        meta = f.metadata()
    return {
        "config": Config(**json.loads(meta["config"])),
        "steps": json.loads(meta["steps"]),
        "batch_loss": json.loads(meta["batch_loss"]),
        "note": meta.get("note", ""),
        "log": json.loads(meta.get("log", "[]")),
    }


def snapshot_steps(path: Path = SNAPSHOTS) -> list[int]:
    """The training steps stored in the file, ascending."""
    return list(_metadata(path)["steps"])


def batch_losses(path: Path = SNAPSHOTS) -> list[float | None]:
    """The smoothed training loss of the batch of each stored step's update (None at step 0)."""
    return list(_metadata(path)["batch_loss"])


def training_log(path: Path = SNAPSHOTS) -> list[dict]:
    """The log of the run the snapshots come from (as model/train.py writes it)."""
    return list(_metadata(path)["log"])


def note(path: Path = SNAPSHOTS) -> str:
    return _metadata(path)["note"]


def snapshot_state(step: int, path: Path = SNAPSHOTS) -> dict[str, torch.Tensor]:
    """The float16 weights at `step`, as float32 tensors keyed like `EncoderDecoder.state_dict()`."""
    from safetensors import safe_open

    if step not in _metadata(path)["steps"]:
        raise ValueError(f"no snapshot at step {step}; stored steps: {_metadata(path)['steps']}")
    prefix = _key(step, "")
    with safe_open(str(path), "pt") as f:
        return {k[len(prefix) :]: f.get_tensor(k).float() for k in f.keys() if k.startswith(prefix)}


def load_snapshot(step: int, path: Path = SNAPSHOTS) -> EncoderDecoder:
    """The model with the weights it had after `step` updates (0: the initialisation), in eval mode."""
    model = EncoderDecoder(_metadata(path)["config"])
    model.load_state_dict(snapshot_state(step, path))
    model.eval()
    return model
