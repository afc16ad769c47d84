"""The graph a trace is: nodes that name their ONNX operator, inputs, attributes and value, and the
builder that runs each operation in torch and records it."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from model import ids


@dataclass
class Node:
    id: str
    op: str
    inputs: list[str]
    attrs: dict
    value: np.ndarray

    @functools.cached_property
    def name(self) -> ids.Name:
        """What the node is (where it lives, its layer, sub-layer, head and role), read from its id once;
        not part of the node's JSON."""
        return ids.parse(self.id)

    def to_json(self) -> dict:
        v = self.value
        return {
            "id": self.id,
            "op": self.op,
            "inputs": self.inputs,
            "attrs": self.attrs,
            "shape": list(v.shape),
            "dtype": dtype_name(v.dtype),
            "data": np.ascontiguousarray(v).ravel(),
        }


@functools.cache
def dtype_name(dtype: np.dtype) -> str:
    """str(dtype), remembered: numpy builds the name in Python each time (about 7 µs, 237 times a trace)."""
    return str(dtype)


def to_numpy(t: Tensor) -> np.ndarray:
    return t.detach().numpy().copy()


class Graph:
    """Runs each operation in torch and records it as a node; `values` holds every node's and
    parameter's tensor by id."""

    def __init__(self, params: dict[str, np.ndarray]):
        self.nodes: list[Node] = []
        self.values: dict[str, Tensor] = {k: torch.from_numpy(v) for k, v in params.items()}

    def add(self, node_id: str, op: str, inputs: list[str], value: Tensor, **attrs) -> Tensor:
        self.values[node_id] = value
        self.nodes.append(Node(node_id, op, inputs, attrs, to_numpy(value)))
        return value

    def const(self, node_id: str, value: Tensor, **attrs) -> Tensor:
        return self.add(node_id, "Constant", [], value, **attrs)

    def linear(self, node_id: str, x: str, w: str, b: str) -> Tensor:
        """x·W + b as Gemm, or x·W as MatMul when the map has no bias (no parameter `b`)."""
        v = self.values
        if b in v:
            return self.add(node_id, "Gemm", [x, w, b], v[x] @ v[w] + v[b])
        return self.add(node_id, "MatMul", [x, w], v[x] @ v[w])
