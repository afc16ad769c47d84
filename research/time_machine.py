"""The training time machine, measured: every stored snapshot (model/snapshots.py) and the shipped model.

For each snapshot, over the held-out numbers the model never trains on:
- greedy exact match over all 2 000 (batched, `model.train.exact_match`) and the teacher-forced
  held-out loss (mean −ln p of the correct piece, no smoothing: `model.train.heldout_loss`);
- the alignment score of the research desk's step 28 (research/alignment.py) over the same 1 000
  numbers it uses (every other one): for each head of the last decoder layer's cross-attention, the
  share of German pieces whose row (the row that predicts the piece) peaks on the gold English word,
  for the *reordered* pieces (the ones and tens of "X und Y", German's ones before tens), the
  monotone ones and all; and "any head";
- once exact match reaches ABLATE_FROM: exact match on those 1 000 numbers' ones with "und" with each
  last-layer cross-attention head switched off alone (research/heads.py), and which heads are needed
  (switching one off costs more than NEEDED_DROP), the desk's question of step 28 asked along training.

The "ones before tens" pattern is said to have appeared at the first snapshot from which on the best
single last-layer cross-attention head aligns at least PATTERN_THRESHOLD of the reordered pieces (at
every later snapshot too). `pattern` in the results says where that is, with the held-out loss then.

The snapshots hold float16 weights; everything here is measured on exactly those (as served).
Reproduce: `python -m research.time_machine` (a few minutes on two cores) rewrites
research/results/time_machine.json.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import torch

from model.data import heldout_numbers
from model.decode import greedy
from model.snapshots import SNAPSHOTS, batch_losses, load_snapshot, snapshot_state, snapshot_steps
from model.train import ARTIFACTS, TrainConfig, average_state_dicts, exact_match, heldout_loss, load
from model.transformer import EncoderDecoder
from model.vocab import VOCAB
from research.alignment import alignment_scores
from research.analyses import alignment_numbers
from research.heads import has_und, without_heads

OUT = Path(__file__).resolve().parent / "results" / "time_machine.json"
PATTERN_THRESHOLD = 0.9
ABLATE_FROM = 0.9  # held-out exact match from which single heads are switched off
NEEDED_DROP = 0.1  # a head is needed when switching it off alone costs more than 10 points of exact match
# Float16 keeps 11 significant bits: a weight below 8 in size is stored within 2^-8 of itself, so the
# average of float16 snapshots of the shipped run would lie within this of the shipped weights.
FLOAT16_BOUND = 0.01


def last_layer_alignment(model: EncoderDecoder, numbers: list[int]) -> dict:
    """Step 28's scores for the last decoder layer, the row that predicts each piece."""
    scores = alignment_scores(model, numbers)
    last = len(model.decoder_layers) - 1
    (layer,) = [la for la in scores["layers"] if la["layer"] == last and la["convention"] == "predicts"]
    best = max(layer["heads"], key=lambda h: (h["reordered"], h["all"]))
    return {
        "heads": layer["heads"],
        "any_head": layer["any_head"],
        "best_head": best["head"],
        "best_head_reordered": best["reordered"],
        "best_head_all": best["all"],
        "counts": layer["counts"],
    }


def single_head_ablation(model: EncoderDecoder, numbers: list[int]) -> dict:
    """Exact match on the numbers with "und" with each last-layer cross-attention head switched off alone
    (research/heads.py), and how many heads cost more than NEEDED_DROP of it (the desk's step 28 question)."""
    with_und = [n for n in numbers if has_und(n)]
    base = exact_match(model, with_und)
    per_head = [exact_match(without_heads(model, [h]), with_und) for h in range(model.cfg.n_heads)]
    return {
        "numbers_with_und": len(with_und),
        "none_off": base,
        "one_off": per_head,
        "needed_heads": [h for h, em in enumerate(per_head) if base - em > NEEDED_DROP],
    }


def measure(model: EncoderDecoder, heldout: list[int], aligned: list[int]) -> dict:
    t0 = time.perf_counter()
    row = {
        "heldout_exact_match": exact_match(model, heldout),
        "heldout_loss": heldout_loss(model, heldout),
        "alignment": last_layer_alignment(model, aligned),
    }
    # a head can only be needed by a model that works: measured from ABLATE_FROM exact match on
    row["head_ablation"] = single_head_ablation(model, aligned) if row["heldout_exact_match"] >= ABLATE_FROM else None
    row["seconds"] = round(time.perf_counter() - t0, 2)
    return row


def pattern_onset(rows: list[dict], threshold: float = PATTERN_THRESHOLD) -> dict | None:
    """The first snapshot from which on the best head aligns ≥ threshold of the reordered pieces."""
    onset = None
    for r in rows:
        if r["alignment"]["best_head_reordered"] >= threshold:
            onset = onset or r
        else:
            onset = None
    if onset is None:
        return None
    before = [r for r in rows if r["step"] < onset["step"]]
    first, final = rows[0], rows[-1]
    fall = first["heldout_loss"] - final["heldout_loss"]
    return {
        "threshold": threshold,
        "step": onset["step"],
        "previous_step": before[-1]["step"] if before else None,
        "previous_best_head_reordered": before[-1]["alignment"]["best_head_reordered"] if before else None,
        "best_head_reordered": onset["alignment"]["best_head_reordered"],
        "heldout_loss": onset["heldout_loss"],
        "initial_heldout_loss": first["heldout_loss"],
        "final_heldout_loss": final["heldout_loss"],
        "loss_fall_done": (first["heldout_loss"] - onset["heldout_loss"]) / fall if fall else None,
        "heldout_exact_match": onset["heldout_exact_match"],
    }


def rerun_average(path: Path) -> EncoderDecoder:
    """The re-run's own averaged model, rebuilt from its float16 snapshots 3 600–4 000 (the paper's §6.1 average)."""
    tc = TrainConfig()
    last = [tc.steps - tc.checkpoint_every * i for i in range(tc.average_last)][::-1]
    model = EncoderDecoder(load_snapshot(last[0], path).cfg)
    model.load_state_dict(average_state_dicts([snapshot_state(s, path) for s in last]))
    model.eval()
    return model


def compare_with_shipped(path: Path, shipped: EncoderDecoder, heldout: list[int]) -> dict:
    """The average of the run's last five checkpoints (as float16 snapshots) against the shipped weights:
    the largest difference of any weight, and on how many held-out numbers their greedy outputs agree."""
    tc = TrainConfig()
    last = [tc.steps - tc.checkpoint_every * i for i in range(tc.average_last)][::-1]
    model = EncoderDecoder(shipped.cfg)
    model.load_state_dict(average_state_dicts([snapshot_state(s, path) for s in last]))
    model.eval()
    ref = shipped.state_dict()
    diff = max((model.state_dict()[k] - ref[k]).abs().max().item() for k in ref)
    sources = [VOCAB.ids(VOCAB.source_tokens(n)) for n in heldout]
    agree = sum(a == b for a, b in zip(greedy(model, sources), greedy(shipped, sources)))
    return {
        "snapshot_steps_averaged": last,
        "max_abs_difference": diff,
        "bit_identical": diff < FLOAT16_BOUND,
        "exact_match_agreement": agree / len(heldout),
        "float16_bound": FLOAT16_BOUND,
    }


def run(path: Path = SNAPSHOTS, out: Path = OUT) -> dict:
    torch.set_num_threads(1)
    heldout = heldout_numbers()
    aligned = alignment_numbers(heldout)
    rows = []
    for step, loss in zip(snapshot_steps(path), batch_losses(path)):
        rows.append({"step": step, "batch_loss": loss, **measure(load_snapshot(step, path), heldout, aligned)})
        print(
            f"step {step}: exact {rows[-1]['heldout_exact_match']:.2%} loss {rows[-1]['heldout_loss']:.4f} "
            f"reordered (best head) {rows[-1]['alignment']['best_head_reordered']:.2%}",
            file=sys.stderr,
        )
    shipped = load(ARTIFACTS / "model.safetensors")
    averaged = {"step": rows[-1]["step"] if rows else None, **measure(shipped, heldout, aligned)}
    doc = {
        "description": __doc__.split("\n\n")[0],
        "command": "python -m research.time_machine",
        "heldout_numbers": len(heldout),
        "alignment_numbers": len(aligned),
        "snapshots": rows,
        "averaged": averaged,
        "pattern": pattern_onset(rows),
        "comparison": compare_with_shipped(path, shipped, heldout),
        "rerun_averaged": measure(rerun_average(path), heldout, aligned),
    }
    out.write_text(json.dumps(doc, indent=1) + "\n")
    return doc


def update_rerun_averaged(path: Path = SNAPSHOTS, out: Path = OUT) -> dict:
    """Only the re-run's averaged model, measured and written into an existing results file."""
    torch.set_num_threads(1)
    heldout = heldout_numbers()
    doc = json.loads(out.read_text())
    doc["rerun_averaged"] = measure(rerun_average(path), heldout, alignment_numbers(heldout))
    out.write_text(json.dumps(doc, indent=1) + "\n")
    return doc


if __name__ == "__main__":
    # --rerun-averaged: measure only the re-run's averaged model (added after the first full run)
    update_rerun_averaged() if sys.argv[1:] == ["--rerun-averaged"] else run()
