"""Fingerprints of what the API sends for a trace, pinned before the code was restructured,
so that the restructuring could be shown to change nothing the API sends.

A fingerprint keeps every node's structure whole (id, op, inputs, attrs, shape, dtype) and its data as
a hash of the exact bytes plus five moments (sum, sum of squares, index-weighted sum, min, max), so a
test can say both "identical" and, when a value moved, by how much. The header (with the article's
live figures) and the scene are kept as hashes of their canonical JSON, and the scene's structure
(block ids, kinds, positions and sizes) whole, so a moved block is named.

`python -m tests.golden.fingerprint` rewrites tests/golden/traces.json.gz from the running code, and
`python -m tests.golden.fingerprint CASE …` only the cases named: only do that on purpose, when what the
API sends is meant to change, and say so in REPINNED.

Every case has since been re-pinned on purpose (REPINNED says why); the trace's nodes and the blocks' places are
still those of the pin made before the restructuring. Every other change to what is sent is an addition,
listed in ADDED_KEYS and left out before comparing.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import numpy as np

GOLDEN = Path(__file__).with_name("traces.json.gz")

# (model, input, ablation, checkpoint): a dozen inputs of the 2017 model, the modern model, ablated
# and snapshot traces of the 2017 model (the modern model has no snapshots, and no ablation before)
CASES: list[tuple[str, int, str, int | None]] = (
    [("2017", n, "", None) for n in (0, 7, 13, 42, 90, 305, 1234, 100000, 482917, 731015, 777777, 999999)]
    + [("modern", n, "", None) for n in (0, 42, 305, 1234, 482917, 777777)]
    + [
        ("2017", 42, "dec.1.cross.h3,enc.0.ffn", None),
        ("2017", 305, "enc.1.self", None),
        ("2017", 777777, "dec.0.self.h0,dec.1.ffn", None),
        ("2017", 42, "", 0),
        ("2017", 1234, "", 500),
        ("2017", 777777, "", 4000),
        ("2017", 305, "dec.1.cross", 1500),
    ]
)


def case_key(model: str, number: int, ablation: str, checkpoint: int | None) -> str:
    return f"{model}/{number}/{ablation or '-'}/{'-' if checkpoint is None else checkpoint}"


def case_query(model: str, number: int, ablation: str, checkpoint: int | None) -> str:
    q = f"input={number}&model={model}"
    if ablation:
        q += f"&ablate={ablation}"
    if checkpoint is not None:
        q += f"&checkpoint={checkpoint}"
    return q


def _canonical(obj) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=True).encode()


def _sha(obj) -> str:
    return hashlib.sha256(_canonical(obj)).hexdigest()[:12]


def _moments(data: list) -> list[float | None]:
    x = np.array([np.nan if v is None else v for v in data], dtype=np.float64)
    finite = np.where(np.isfinite(x), x, 0.0)
    i = np.arange(len(x), dtype=np.float64)
    sums = [finite.sum(), (finite**2).sum(), (finite * i).sum()]
    extremes = [finite.min(), finite.max()] if len(x) else [0.0, 0.0]
    return [float(f"{v:.8g}") for v in (*sums, *extremes)] + [int((~np.isfinite(x)).sum())]


# Keys the trace document gained after the pin (dotted paths from the top: `scene.blocks.*.x` is a key of
# every block, `derived.x` a new live figure): the pin holds only what was sent then, so these are left out
# before comparing. Only additions belong here; a changed or removed key must fail.
ADDED_KEYS: list[str] = [
    "scene.cell.flat_height",
    "scene.cell.masked_height",
    "scene.cell.min_height",  # renderers only draw them
    "scene.camera",
    "derived.und_rows",
    "derived.units_on_their_word",  # step 16's reordering, computed per input
    # steps 18–20 ring the chosen piece; step 20's loss per row, drawn by the stage
    "scene.steps.*.marks",
    "scene.steps.*.overlay",
    "scene.palette.marks",
    "derived.loss_rows",
    "derived.loss_q_reference",
    "derived.loss_q_other",
    "derived.loss_floor",
    "derived.loss_reference_length",
    "derived.loss_forced_rows",
    "derived.loss_sum",
    "derived.loss_mean",
    "derived.plain_loss_sum",
    "derived.plain_loss_mean",
    "derived.loss_departs",
    "scene.cell.mark_width",
    "scene.palette.row_max",  # the outline of a row's largest probability
    "scene.blocks.*.name",
    "scene.slices.*.name",
    "scene.switches.*.name",  # the reader's names
    # the worked row of steps 6–9, chosen from the trace; its pair, its reason, step 9's claim
    "scene.worked",
    "derived.worked_q_col",
    "derived.worked_reason",
    "derived.worked_key_token",
    "derived.worked_q",
    "derived.worked_k",
    "derived.worked_qk_products",
    "derived.worked_qk_dot",
    "derived.worked_qk_score",
    "derived.worked_distances",
    "derived.worked_claim",
    "scene.steps.*.parts",  # the parts of a step a phone's stage frames (and their windows)
    "scene.blocks.*.rows_named_by",  # rows the token labels of an ids column beside them name
    "scene.blocks.*.cols_named_under",  # the block a stack's column names stand under (a head's scores)
    "derived.exercises",  # predict, then reveal: each step's question about the input, answered
    "model",  # the trace names the model that ran, now that the page computes its figures and scene from it
    "scene.blocks.*.part",
    "scene.labels.*.part",  # a gate's block and label name its part
    "scene.labels.*.up",  # how tall a block's label may grow under the block above it
]


def _without(obj, path: list[str]):
    if not path or obj is None:
        return obj
    head, rest = path[0], path[1:]
    if head == "*" and isinstance(obj, list):
        return [_without(o, rest) for o in obj]
    if isinstance(obj, dict) and head in obj:
        if not rest:
            return {k: v for k, v in obj.items() if k != head}
        return {**obj, head: _without(obj[head], rest)}
    return obj


def pinned_part(trace: dict) -> dict:
    """The trace document less the keys added since the pin."""
    for path in ADDED_KEYS:
        trace = _without(trace, path.split("."))
    return trace


def _scene_structure(scene: dict) -> list:
    return [[b.get("id"), b.get("kind"), b.get("position"), b.get("size")] for b in scene.get("blocks", [])]


def _numbers_as_read(obj):
    """`obj` with every whole float as its integer: JSON has one kind of number, and the page's JavaScript
    writes 2.0 as 2, so a hash of a document either side wrote must not tell them apart."""
    if isinstance(obj, float) and obj.is_integer():
        return int(obj)
    if isinstance(obj, list):
        return [_numbers_as_read(x) for x in obj]
    if isinstance(obj, dict):
        return {k: _numbers_as_read(v) for k, v in obj.items()}
    return obj


# The header's fields that are not the recording's: the figures and the scene (the page's, compared on their
# own), the format's version and the model's name (which the trace has named since the page computes them)
NOT_HEADER = ("nodes", "scene", "derived", "format", "model")


def fingerprint(trace: dict) -> dict:
    """What identifies a trace document as the page holds it (a parsed JSON body, with the live figures
    and the scene the page computed from it)."""
    trace = pinned_part(trace)
    header = {k: v for k, v in trace.items() if k not in NOT_HEADER}
    scene = trace.get("scene")
    return {
        "header": _sha(header),
        "derived": trace.get("derived"),
        "scene": _sha(_numbers_as_read(scene)),
        "scene_blocks": _scene_structure(scene or {}),
        "nodes": [
            [n["id"], n["op"], n["inputs"], n["attrs"], n["shape"], n["dtype"], _sha(n["data"]), _moments(n["data"])]
            for n in trace["nodes"]
        ],
    }


def load() -> dict:
    return json.loads(gzip.decompress(GOLDEN.read_bytes()))


# Cases pinned again after the restructuring had been shown to change nothing in them (at the commit that
# merged the last of it, tests/recorder/test_golden.py passed on the first pin), for changes meant to be seen:
REPINNED = {
    # the modern model's traces record the logit lens too (lens.dec.L.* nodes, the header's
    # lens, the live logit_lens), and its scene draws the lens stations in the decoder tower, as the 2017's;
    # with it, two fixes: its weights_url names the modern weights (the pin named the 2017 model's), and its
    # scene words each head's output as a head's (the pin called it SwiGLU's "FFN(x) = hidden·W_{2}")
    **{
        case_key("modern", n, "", None): "the logit lens, weights_url and head words of the modern model"
        for n in (0, 42, 305, 1234, 482917, 777777)
    },
    # a trace that greedy ended at the length limit had one decoder row too many, predicting a
    # 54th piece greedy never wrote; its rows are now <s> and every piece but the last
    case_key("2017", 42, "", 0): "no row predicts past the length limit",
}
# All 25 cases pinned again on purpose, when the stage was reworked for its readers; every node (ids, ops, inputs,
# attrs, shapes, data) and every block's place and size are as pinned before (compared when re-pinning: 25 of 25
# identical). What changed: the worked row of steps 6-9 is chosen from the trace (derived worked_head, worked_row,
# worked_token, worked_scores, worked_weights, worked_unscaled_weights, worked_top_token, worked_top_weight,
# worked_unscaled_top_weight, worked_blend, worked_output, worked_v_top; the scene's step 6/9 animation targets and step
# 7/8 animation names), and every view whose subject has a token axis keeps room for the token names (scene.steps.*.view
# box and target). Pinned again in a second round of that work (25 of 25 cases: header, derived, nodes and blocks'
# places equal to the pin before; only the scene's hash moved): a view of a head's scores or weights frames the head's
# name and switch (scene.steps[7, 8, 15, 16, 23, 28].view), the "head N" labels are 1.3 high (scene.labels[*].size, was
# 1.5), step 15's subject is the masked scores and the weights (steps[15].subject, lit, parts), step 9's parts, and the
# marks of steps 18-20 carry ring: false
REPINNED_WORKED_ROW = (
    "the worked row chosen from the trace; views keep room for the token names; "
    "head views frame the head's name and switch"
)
# Pinned again when the heads moved over V (25 of 25 cases: header, derived, nodes and scene_blocks equal to
# the pin before; only the scene's hash moved): every attention station's per-head blocks (scores, masked,
# weights, out, off, gate) stand over V, flush with its right edge (scene.blocks[*].x of those blocks, and with
# them the head labels', switches' and views' places: scene.labels, scene.switches, scene.steps.*.view), step
# 9's subject is the weights, outputs and V (steps[9].subject, lit, view; its scores lit) and its parts put the
# worked head over its columns of V
REPINNED_HEADS_OVER_V = "the heads stand over V; step 9's view holds V"
# Pinned again when the page began to compute the live figures and the scene from the served
# trace (which no longer carries them): the scene's hash is taken over numbers as JSON reads them (a whole
# float as its integer), from Python's scene of each case, first shown equal to the pin before under the old
# hash (25 of 25); the header's hash over the recording's own fields (the figures, the format's version and
# the model's name left out), from the API's answer, which passed the old pin at the commit before. The
# nodes, the live figures and the blocks' places are the pin before, untouched.
REPINNED_PAGE = "the page computes the figures and the scene; the scene's hash over numbers as JSON reads them"
# Pinned again after that (25 of 25 cases: header, figures and nodes equal to the pin before): a
# shape's structure is the same whatever parts are switched off, every part's gate (part.gate, part.off)
# keeping its place in it (scene/gates.py), so scene_blocks lists every part's two gate blocks in every case,
# the blocks above a head's gate stand higher (a sub-layer's stands beside its output), and with them the
# labels, connectors, switches and views move (the scene's hash, taken from the page's scene)
REPINNED_GATES = "every part's gate keeps its place in the structure, drawn only while the part is off"
# Pinned again when the worked row's rule began to prefer a word asking about another word (a tens word resting
# mostly on its unit first; `</s>` only where no word row rests on a word): every node, the header, the blocks and
# every figure but derived.worked_* and the worked row's exercises equal to the pin before (25 of 25); the worked
# figures of all 25 moved (the reason's words), the scene's hash of the 8 whose row moved (its animation targets)
REPINNED_WORKED_RULE = "the worked row prefers a word asking about another word"
# and again when four concept questions joined the exercises (derived.exercises of the 2017 model's cases: every
# earlier exercise, and everything else, equal to the pin before)
REPINNED_CONCEPTS = "four concept questions join the exercises"
REPINNED_COUNTED_FROM_1 = "rows, columns and units a reader reads are counted from 1 (each moved by exactly one)"
REPINNED = {
    case_key(*c): "; ".join(
        filter(
            None,
            (
                REPINNED.get(case_key(*c)),
                REPINNED_WORKED_ROW,
                REPINNED_HEADS_OVER_V,
                REPINNED_PAGE,
                REPINNED_GATES,
                REPINNED_WORKED_RULE,
                REPINNED_CONCEPTS,
                REPINNED_COUNTED_FROM_1,
            ),
        )
    )
    for c in CASES
}


def main(only: list[str]) -> None:
    from fastapi.testclient import TestClient

    from app.main import app

    unknown = set(only) - {case_key(*c) for c in CASES}
    if unknown:
        raise SystemExit(f"no such case: {', '.join(sorted(unknown))}")
    out = load() if only else {}
    with TestClient(app) as client:
        for case in CASES if not only else [c for c in CASES if case_key(*c) in only]:
            r = client.get("/api/trace?" + case_query(*case))
            r.raise_for_status()
            out[case_key(*case)] = fingerprint(r.json())
    GOLDEN.write_bytes(gzip.compress(_canonical(out), 9, mtime=0))
    print(f"{len(out)} traces -> {GOLDEN} ({GOLDEN.stat().st_size} bytes)")


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
