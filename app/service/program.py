"""The model's graph as a program free of the input's length (recorder/program.py), one document per model,
built on first asking and kept by weights version: /api/program sends it (app/routes/program.py), the
prerender and the static build write it. It names where the parameters are sent (`weights`: the trained
model's and each training snapshot's /api/weights) and the decoding rules (the length limit, beam search's
settings)."""

from __future__ import annotations

import threading

from app.documents.schemas import weights_url
from app.service.deps import ABLATE_REFUSED
from app.service.model_service import BEAM_ALPHA, BEAM_SIZE, LENGTH_PENALTY, LENGTH_PENALTY_LENGTHS, ModelService
from app.serving.serialize import dumps
from model.ablation import rules as ablation_rules
from model.parse import unprintable
from recorder.program import PROGRAM_FORMAT, build_program

_bodies: dict[str, bytes] = {}  # by weights version: the program's JSON body
_lock = threading.Lock()

PROGRAM_DOC = f"""The model's graph as a program (`{PROGRAM_FORMAT}`): the nodes every trace of this model
records, in order, with their ops, inputs, attributes and dtypes as `/api/trace` has them, and shapes in
which "n" (the source's length) and "m" (the decoder's rows) stand for the lengths. The trace's
constants that depend on the input (token ids, positions, sinusoid rows, rotation tables, the causal
mask) carry `compute`: ONNX operations over the program's `inputs` (n, m, source_ids, target_ids) and its
fixed `tables`; the others carry their `value`. A node with `when_off` exists only when that part is
switched off (an ablation's gate and product); while it is absent, an input naming it reads its `else`.
With the parameters (`weights`) and the vocabulary, a client runs any input: greedy decoding over
`decoding.logits` with the length limit source length + `decoding.extra_length`, then the whole trace;
`trace` and `refusals` say what the header holds and how a request's ablation and checkpoint are refused
(the API's messages, with `unprintable`: the code points Python's repr escapes in a quoted value)."""


def program_body(svc: ModelService) -> bytes:
    with _lock:
        body = _bodies.get(svc.version)
    if body is None:
        weights = {
            "trained": weights_url(svc.name),
            "checkpoints": {str(s): weights_url(svc.name, s) for s in svc.checkpoints.steps},
        }
        cfg = svc.translator.model.cfg
        decoding = {
            "beam_size": BEAM_SIZE,
            "alpha": BEAM_ALPHA,
            "length_penalty": LENGTH_PENALTY,
            "length_penalty_lengths": list(LENGTH_PENALTY_LENGTHS),
        }
        refusals = {
            "ablation": {**ablation_rules(cfg), "refused_as": ABLATE_REFUSED},
            "checkpoint": svc.checkpoints.rules(),
            "unprintable": unprintable(),
        }
        program = build_program(cfg, svc.params, svc.name, weights, decoding, refusals)
        body = dumps(program)
        with _lock:
            _bodies[svc.version] = body
    return body


def cached_program(svc: ModelService) -> bytes | None:
    """The program's body when it is built already (the route answers it without a worker thread)."""
    with _lock:
        return _bodies.get(svc.version)
