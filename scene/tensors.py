"""The tensors the scene draws: the trace's nodes and the parameters, with what the layout reads of
them (op, inputs, attributes, shape, dtype; never their values), and the few facts found in the graph."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model import ids

NORM_OPS = ("LayerNormalization", "RMSNormalization")


@dataclass
class Tensor:
    id: str
    op: str
    inputs: list[str]
    attrs: dict
    shape: tuple[int, ...]
    dtype: str


def tensors_of(trace, params: dict[str, np.ndarray]) -> dict[str, Tensor]:
    out = {pid: Tensor(pid, "Parameter", [], {}, tuple(np.shape(v)), "float32") for pid, v in params.items()}
    for n in trace.nodes:
        out[n.id] = Tensor(n.id, n.op, list(n.inputs), dict(n.attrs), tuple(n.value.shape), str(n.value.dtype))
    return out


def gated_units(tensors: dict[str, Tensor]) -> set[str]:
    """SwiGLU's hidden units: a Mul of SiLU (a Mul by a Sigmoid) and the up projection."""
    sigmoid = {t.id for t in tensors.values() if t.op == "Sigmoid"}
    silu = {t.id for t in tensors.values() if t.op == "Mul" and any(i in sigmoid for i in t.inputs)}
    return {t.id for t in tensors.values() if t.op == "Mul" and any(i in silu for i in t.inputs)}


def memory_id(trace) -> str | None:
    """The encoder's output z: its last norm."""
    enc = [n.id for n in trace.nodes if ids.parse(n.id).where == "enc" and n.op in NORM_OPS]
    return enc[-1] if enc else None
