"""The program: the graph a trace records, once per model, free of the input's length (for the static build).

A trace is the graph of one input: its shapes hold the source's length n and the decoder's row count m,
and a few of its constants depend on them (the token ids, the positions, the sinusoid rows, the rotation
tables, the causal mask). The program is the same graph with those made symbolic, so that a client with
the parameters (/api/weights) can compute the trace of any input itself (static/engine/ runs it):

- `nodes`, in the trace's order: each trace node's id, op, inputs, attrs and dtype as the trace has
  them, its shape with "n" and "m" where the lengths go (["n", 32], ["m", 65]);
- a Constant node that does not depend on the length carries its `value`; one that does carries
  `compute`, a list of ONNX operations (each {id, op, inputs, attrs}; the last one's output is the
  node's value) over the program's `inputs` (the scalars n and m, the source and target token ids) and
  its fixed `tables` (the sinusoid table and the rotation tables at `max_length` rows, sliced to n or m;
  small scalars); a string "n" or "m" in their attrs stands for that length;
- ablation: a node with `when_off` is present only when that part is switched off (model/ablation.py:
  the part's zero `gate` and the `off` product). Where such a node is absent, an input naming it reads
  its `else` instead (the value the part's output was before it was gated), so one program serves every
  ablation: `instantiate(program, n, m, off)` gives the trace's graph for that ablation exactly.

The program is found from the recorder itself (record.py's `record`), not written a second time: the
graph is recorded at two pairs of lengths with every part switched off and once with none, and each
dimension that follows n or m becomes the symbol. tests/recorder/test_program.py checks the result against
traces of many inputs, both models and several ablations.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from model import ids
from model.ablation import parts
from model.decode import EXTRA_LENGTH
from model.numbers import ENGLISH_WORDS, GERMAN_PIECES
from model.transformer import Config, sinusoid_angles, sinusoid_table
from model.vocab import BOS, EOS, VOCAB
from recorder.documents import TRACE_FORMAT
from recorder.graph import Node, dtype_name
from recorder.options import check_traceable
from recorder.record import LENS_TOP, record

PROGRAM_FORMAT = "anatomy-program/1"
PROBES = ((3, 5), (4, 7))  # the (n, m) the graph is recorded at: n ≠ m, and each differs between the two
INPUTS = {"n": ("int64", []), "m": ("int64", []), "source_ids": ("int64", ["n"]), "target_ids": ("int64", ["m"])}
DIMS = {
    "n": "the source's length: the English words and </s>",
    "m": "the decoder's rows: <s> and the output (without its last piece when it stopped at the length limit)",
}


def _pieces(n: int, m: int) -> tuple[list[str], list[str]]:
    """Source and rows of the given lengths (any real pieces: the program's structure does not depend on them)."""
    return [ENGLISH_WORDS[i % len(ENGLISH_WORDS)] for i in range(n - 1)] + [EOS], [BOS] + [
        GERMAN_PIECES[i % len(GERMAN_PIECES)] for i in range(m - 1)
    ]


def _recorded(cfg: Config, params: dict[str, np.ndarray], n: int, m: int, off: frozenset[str]):
    return record(cfg, params, *_pieces(n, m), off)


def _symbolic(node: Node, other: Node, probes) -> list:
    """The node's shape with each dimension that follows n or m between the two recordings named so."""
    (n1, m1), (n2, m2) = probes
    shape = []
    for a, b in zip(node.value.shape, other.value.shape, strict=True):
        if a == b:
            shape.append(a)
        elif (a, b) == (n1, n2):
            shape.append("n")
        elif (a, b) == (m1, m2):
            shape.append("m")
        else:
            raise ValueError(f"{node.id}: a dimension {a} → {b} follows neither n nor m")
    return shape


def _tables(cfg: Config) -> dict[str, np.ndarray]:
    """The fixed tables the length-dependent constants are cut from, at max_length rows."""
    rows = cfg.max_len
    angles = sinusoid_angles(rows, cfg.d_k, torch.device("cpu"))  # the model's own float32 angles
    return {
        "table.pe": sinusoid_table(rows, cfg.d_model).numpy(),
        "table.cos": angles.cos().numpy(),
        "table.sin": angles.sin().numpy(),
        "scalar.0": np.array(0, np.int64),
        "scalar.1": np.array(1, np.int64),
        "scalar.pad": np.array(cfg.pad_id, np.int64),
    }


def _step(step_id: str, op: str, inputs: list[str], **attrs) -> dict:
    return {"id": step_id, "op": op, "inputs": inputs, "attrs": attrs}


def _rows_of(table: str, dim: str, at: str) -> list[dict]:
    return [_step(at, "Slice", [table], axes=[0], starts=[0], ends=[dim])]


def _mask(at: str) -> list[dict]:
    """The decoder's mask: row i reads columns j ≤ i that are not padding (record.py's dec.mask)."""
    r, col, row, causal, pad, keep, keep_row = (
        f"{at}#{s}" for s in ("range", "col", "row", "causal", "pad", "keep", "keep_row")
    )
    return [
        _step(r, "Range", ["scalar.0", "m", "scalar.1"]),
        _step(col, "Unsqueeze", [r], axes=[0]),
        _step(row, "Unsqueeze", [r], axes=[1]),
        _step(causal, "LessOrEqual", [col, row]),
        _step(pad, "Equal", ["target_ids", "scalar.pad"]),
        _step(keep, "Not", [pad]),
        _step(keep_row, "Unsqueeze", [keep], axes=[0]),
        _step(at, "And", [causal, keep_row]),
    ]


def _computes() -> dict[str, list[dict]]:
    """How each length-dependent constant of record.py is made from the inputs and tables."""
    out = {}
    for side, dim, tokens in (("src", "n", "source_ids"), ("tgt", "m", "target_ids")):
        at = ids.join(side, "ids")
        out[at] = [_step(at, "Identity", [tokens])]
        out[ids.join(side, "pe")] = _rows_of("table.pe", dim, ids.join(side, "pe"))
        at = ids.join(side, "positions")
        out[at] = [_step(at, "Range", ["scalar.0", dim, "scalar.1"])]
        for f in ("cos", "sin"):
            at = ids.join(side, "rope", f)
            out[at] = _rows_of(f"table.{f}", dim, at)
    out[ids.join("dec", "mask")] = _mask(ids.join("dec", "mask"))
    return out


def _gates(all_off: list[Node], intact: set[str]) -> dict[str, dict]:
    """The nodes only an ablation adds: each gate (a Constant naming its part) and the product that reads
    it, with the value an input reads in its place when the part is on."""
    part_of = {n.id: n.attrs["ablation"] for n in all_off if n.op == "Constant" and "ablation" in n.attrs}
    out = {}
    for n in all_off:
        if n.id in intact:
            continue
        if n.id in part_of:
            out[n.id] = {"when_off": part_of[n.id]}
        else:
            gate = next(i for i in n.inputs if i in part_of)
            out[n.id] = {"when_off": part_of[gate], "else": next(i for i in n.inputs if i != gate)}
    return out


def _program_node(node: Node, other: Node, gates: dict, computes: dict) -> dict:
    out = {
        "id": node.id,
        "op": node.op,
        "inputs": list(node.inputs),
        "attrs": dict(node.attrs),
        "shape": _symbolic(node, other, PROBES),
        "dtype": dtype_name(node.value.dtype),
        **gates.get(node.id, {}),
    }
    if node.op != "Constant":
        return out
    if node.id in computes:
        out["compute"] = computes[node.id]
    elif any(isinstance(d, str) for d in out["shape"]) or not np.array_equal(node.value, other.value):
        raise ValueError(f"{node.id}: a constant that depends on the input, with no rule to compute it")
    else:
        out["value"] = _plain(node.value)
    return out


def _plain(v: np.ndarray):
    """A tensor's numbers for JSON, row-major, −∞ as null (as the trace writes it)."""
    return [None if isinstance(x, float) and x == -math.inf else x for x in np.ravel(v).tolist()]


def build_program(
    cfg: Config,
    params: dict[str, np.ndarray],
    name: str = "",
    weights: dict | None = None,
    decoding: dict | None = None,
    refusals: dict | None = None,
) -> dict:
    """The model's program (see the module's docstring) as a JSON-ready document. `weights`, `decoding` and
    `refusals` (where the parameters are sent, the beam settings, how a request's ablation and checkpoint
    are refused) are the server's to say; they are copied in. `trace` says what a trace's header holds
    beyond the nodes: its format and how many pieces per position the lens summary keeps."""
    check_traceable(cfg)
    every = frozenset(p.id for p in parts(cfg))
    (g1, memory, _, lens), (g2, _, _, _) = (_recorded(cfg, params, n, m, every) for n, m in PROBES)
    intact, _, _, _ = _recorded(cfg, params, *PROBES[0], frozenset())
    gates, computes = _gates(g1.nodes, {n.id for n in intact.nodes}), _computes()
    nodes = [_program_node(a, b, gates, computes) for a, b in zip(g1.nodes, g2.nodes, strict=True)]
    return {
        "format": PROGRAM_FORMAT,
        "model": name,
        "dims": DIMS,
        "max_length": cfg.max_len,
        "inputs": [{"id": k, "dtype": d, "shape": s} for k, (d, s) in INPUTS.items()],
        "tables": [
            {"id": k, "dtype": dtype_name(v.dtype), "shape": list(v.shape), "data": v.ravel().tolist()}
            for k, v in _tables(cfg).items()
        ],
        "parameters": list(params),
        "parts": [p.id for p in parts(cfg)],
        "vocabulary": {"pieces": list(VOCAB.tokens), "pad": VOCAB.pad_id, "bos": VOCAB.bos_id, "eos": VOCAB.eos_id},
        "decoding": {
            "extra_length": EXTRA_LENGTH,
            "logits": ids.join("out", "logits"),
            "tokens": ids.join("out", "tokens"),
            **(decoding or {}),
        },
        "memory": memory,
        "lens": [
            {"layer": x.layer, "reads": x.reads, "logits": x.logits, "probs": x.probs, "tokens": x.tokens} for x in lens
        ],
        "trace": {"format": TRACE_FORMAT, "lens_top": LENS_TOP},
        "weights": weights or {},
        "refusals": refusals or {},
        "nodes": nodes,
    }


def instantiate(program: dict, n: int, m: int, off: frozenset[str] | set[str] = frozenset()) -> list[dict]:
    """The graph of one trace: the program's nodes for lengths (n, m) with the parts `off` switched off,
    each {id, op, inputs, attrs, shape, dtype} as the trace's nodes have them."""
    dims = {"n": n, "m": m}
    present = [x for x in program["nodes"] if x.get("when_off") is None or x["when_off"] in off]
    instead = {x["id"]: x["else"] for x in program["nodes"] if "else" in x and x["when_off"] not in off}

    def read(i: str) -> str:
        while i in instead:
            i = instead[i]
        return i

    return [
        {
            "id": x["id"],
            "op": x["op"],
            "inputs": [read(i) for i in x["inputs"]],
            "attrs": x["attrs"],
            "shape": [dims.get(d, d) for d in x["shape"]],
            "dtype": x["dtype"],
        }
        for x in present
    ]
