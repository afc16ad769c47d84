"""The training time machine, served: the model as it was at a training snapshot (model/snapshots.py).

`/api/trace?input=…&checkpoint=N` traces with the weights after N training steps (N one of the stored
steps; 0 is the initialisation), `/api/weights?checkpoint=N` sends those weights, and the figure
`time-machine` (step 21) lists the snapshots with what research/time_machine.py measured at each.
Without `checkpoint` every endpoint answers for the shipped, averaged model, as before.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from app.service.shipped import DataUnavailable
from app.serving.delivery import weights_body
from model.snapshots import SNAPSHOTS, batch_losses, load_snapshot, note, snapshot_steps, training_log
from model.transformer import EncoderDecoder
from recorder import parameters, weights_version

SNAPSHOTS_NAME = "model/artifacts/snapshots.safetensors"  # how a message names it (no server path)
RESULTS = Path(__file__).resolve().parents[2] / "research" / "results" / "time_machine.json"
CHECKPOINT_HELP = (
    "A training snapshot to run instead of the shipped model: the number of training steps "
    "it had (one of the stored steps, 0 being the initialisation); leave out for the trained, "
    "averaged model."
)


QUOTED_CHARS = 40  # how much of a bad checkpoint value a refusal repeats (as Python's repr writes it)
NOT_STORED = "{accepted}; got {text}, which is not a stored step"  # {text}: the repr of its first QUOTED_CHARS


class CheckpointError(ValueError):
    """A checkpoint value that names no stored snapshot."""


@dataclass
class Snapshot:
    step: int
    model: EncoderDecoder
    params: dict[str, np.ndarray]
    version: str


class Checkpoints:
    """The stored snapshots, each loaded on first use and kept (23 models of 61 472 parameters)."""

    def __init__(self, path: Path | None = SNAPSHOTS):
        self.path = path  # None: a model without snapshots
        self.steps: list[int] = snapshot_steps(path) if path is not None and path.exists() else []
        self._loaded: dict[int, Snapshot] = {}
        self._weights: dict[tuple[int, bool], bytes] = {}
        self._lock = threading.Lock()

    def accepted(self) -> str:
        if not self.steps:
            return "this model has no stored training snapshots: leave checkpoint out"
        shown = ", ".join(str(s) for s in self.steps)
        return f"checkpoint must be one of the stored training steps ({shown}), or left out for the trained model"

    def parse(self, text: str | None) -> int | None:
        """The step named by a `checkpoint` query value, read by app/service/deps.py's rule (as written; empty is
        absent): None for the trained model; CheckpointError unless it is a stored step written as the list
        writes it (so ' 0 ' and '025' are refused, as '25.0' is)."""
        if not text:
            return None
        if text not in {str(s) for s in self.steps}:
            raise CheckpointError(NOT_STORED.format(accepted=self.accepted(), text=repr(text[:QUOTED_CHARS])))
        return int(text)

    def rules(self) -> dict:
        """What `parse` reads, as data for a client that refuses alike (static/compute/refusals.js)."""
        return {
            "steps": [str(s) for s in self.steps],
            "accepted": self.accepted(),
            "refused": NOT_STORED,
            "quoted_chars": QUOTED_CHARS,
        }

    def get(self, step: int) -> Snapshot:
        with self._lock:
            snap = self._loaded.get(step)
            if snap is None:
                model = self._load(step)
                snap = self._loaded[step] = Snapshot(step, model, parameters(model), weights_version(model))
            return snap

    def _load(self, step: int) -> EncoderDecoder:
        """Snapshot `step`'s model, or DataUnavailable (503) saying why, never the server's path."""
        try:
            return load_snapshot(step, self.path)
        except Exception as e:  # noqa: BLE001 - a file deleted or damaged while running: 503, not 500
            problem = "is missing" if isinstance(e, FileNotFoundError) else f"cannot be read ({type(e).__name__})"
            raise DataUnavailable(f"the training snapshots are not available: {SNAPSHOTS_NAME} {problem}") from None

    def weights_body(self, step: int, binary: bool = False) -> bytes:
        """Snapshot `step`'s parameters as /api/weights sends them: JSON, or safetensors when `binary`."""
        with self._lock:
            body = self._weights.get((step, binary))
        if body is None:
            snap = self.get(step)
            body = weights_body(snap.params, snap.version, binary)
            with self._lock:
                self._weights[(step, binary)] = body
        return body


def figure_data(path: Path = SNAPSHOTS, results: Path = RESULTS) -> dict:
    """The time-machine figure (step 21): the run's training loss every 50 steps, and per snapshot its
    step and what research/time_machine.py measured there (None until it has run), then the trained
    model (the average of the last five checkpoints) as the scrubber's last position."""
    steps = snapshot_steps(path) if path.exists() else []
    log = [r for r in training_log(path) if "loss" in r] if steps else []
    measured = json.loads(results.read_text()) if results.exists() else None
    rows = {r["step"]: r for r in measured["snapshots"]} if measured else {}

    def row(r: dict | None) -> dict:
        if r is None:
            return {
                "heldout_exact_match": None,
                "heldout_loss": None,
                "best_head": None,
                "best_head_reordered": None,
                "any_head_reordered": None,
            }
        a = r["alignment"]
        return {
            "heldout_exact_match": r["heldout_exact_match"],
            "heldout_loss": r["heldout_loss"],
            "best_head": a["best_head"],
            "best_head_reordered": a["best_head_reordered"],
            "any_head_reordered": a["any_head"]["reordered"],
        }

    return {
        "steps": steps,
        "note": note(path) if steps else "",
        "log_step": [r["step"] for r in log],
        "log_loss": [r["loss"] for r in log],
        "snapshots": [
            {"step": s, "batch_loss": b, **row(rows.get(s))} for s, b in zip(steps, batch_losses(path) if steps else [])
        ],
        "averaged": row(measured["averaged"]) if measured else row(None),
        "pattern": measured["pattern"] if measured else None,
        "command": "python -m research.time_machine",
    }
