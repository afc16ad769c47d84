"""How a block's cells are drawn (its kind), from the op and dtype of its tensor, never from the id."""

from __future__ import annotations

from scene.tensors import Tensor


def kind_of(t: Tensor) -> str:
    """value | bar (a softmax) | masked (a Where) | relu | bool | ids."""
    if t.op == "Softmax":
        return "bar"
    if t.op == "Where":
        return "masked"
    if t.op == "Relu":
        return "relu"
    if t.dtype == "bool":
        return "bool"
    if t.dtype.startswith("int"):
        return "ids"
    return "value"
