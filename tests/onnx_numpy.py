"""A small numpy evaluator of the ONNX operators the trace uses, independent of torch.

Each function follows the ONNX operator's semantics for the attributes the trace sets.
"""

from __future__ import annotations

import numpy as np


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    x = x.astype(np.float64)
    z = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return z / z.sum(axis=axis, keepdims=True)


def _gemm(a, b, c=None, alpha=1.0, beta=1.0, transA=0, transB=0):
    a = a.T if transA else a
    b = b.T if transB else b
    y = alpha * (a.astype(np.float64) @ b.astype(np.float64))
    return y if c is None else y + beta * c


def _layer_norm(x, scale, bias, axis=-1, epsilon=1e-5):
    x = x.astype(np.float64)
    mean = x.mean(axis=axis, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axis, keepdims=True)
    return (x - mean) / np.sqrt(var + epsilon) * scale + bias


def _rms_norm(x, scale, axis=-1, epsilon=1e-5, stash_type=1):
    """RMSNormalization (opset 23): X / sqrt(mean(X², axes axis…rank−1) + ε) · scale."""
    x = x.astype(np.float64)
    axis = axis % x.ndim
    ms = (x**2).mean(axis=tuple(range(axis, x.ndim)), keepdims=True)
    return x / np.sqrt(ms + epsilon) * scale


def _rotary_embedding(x, cos_cache, sin_cache, position_ids=None, interleaved=0, num_heads=0, rotary_embedding_dim=0):
    """RotaryEmbedding (opset 23). The trace has no batch axis, so a (sequence, hidden) input is the
    opset's 3-D (batch, sequence, hidden) form with batch = 1 left out: it is put back here and the
    operator applied as the opset defines it for rank 3 (hidden split into num_heads heads)."""
    x3 = x[None].astype(np.float64)
    batch, seq, hidden = x3.shape
    heads = x3.reshape(batch, seq, num_heads, hidden // num_heads)
    dim = rotary_embedding_dim or heads.shape[-1]
    rot, keep = heads[..., :dim], heads[..., dim:]
    if position_ids is not None:
        where = np.asarray(position_ids).reshape(batch, seq)
        cos, sin = cos_cache[where], sin_cache[where]
    else:
        cos, sin = cos_cache.reshape(batch, seq, -1), sin_cache.reshape(batch, seq, -1)
    cos, sin = cos[:, :, None, :].astype(np.float64), sin[:, :, None, :].astype(np.float64)
    x1, x2 = (rot[..., 0::2], rot[..., 1::2]) if interleaved else np.split(rot, 2, axis=-1)
    real, imag = cos * x1 - sin * x2, sin * x1 + cos * x2
    rotated = np.stack((real, imag), axis=-1).reshape(rot.shape) if interleaved else np.concatenate((real, imag), -1)
    return np.concatenate((rotated, keep), axis=-1).reshape(x3.shape)[0]


def _slice(x, axes, starts, ends):
    index = [slice(None)] * x.ndim
    for axis, s, e in zip(axes, starts, ends):
        index[axis] = slice(s, e)
    return x[tuple(index)]


OPS = {
    "Gather": lambda data, idx, axis=0: np.take(data, idx, axis=axis),
    "Mul": lambda a, b: a * b,
    "Add": lambda a, b: a + b,
    "Div": lambda a, b: a / b,
    "MatMul": lambda a, b: a.astype(np.float64) @ b.astype(np.float64),
    "Gemm": _gemm,
    "Transpose": lambda x, perm=None: np.transpose(x, perm),
    "Slice": _slice,
    "Concat": lambda *xs, axis: np.concatenate(xs, axis=axis),
    "Where": lambda cond, x, y: np.where(cond, x, y),
    "Softmax": lambda x, axis=-1: _softmax(x, axis),
    "Relu": lambda x: np.maximum(x, 0),
    "LayerNormalization": _layer_norm,
    "RMSNormalization": _rms_norm,
    "RotaryEmbedding": _rotary_embedding,
    "Sigmoid": lambda x: 1 / (1 + np.exp(-x.astype(np.float64))),
    "ArgMax": lambda x, axis=0, keepdims=1: (
        np.argmax(x, axis=axis) if not keepdims else np.expand_dims(np.argmax(x, axis=axis), axis)
    ),
    # the program's (recorder/program.py) operations that make a trace's length-dependent constants
    "Identity": lambda x: x,
    "Range": lambda start, limit, delta: np.arange(start, limit, delta, dtype=np.asarray(start).dtype),
    "Unsqueeze": lambda x, axes: np.expand_dims(x, tuple(axes)),
    "LessOrEqual": lambda a, b: a <= b,
    "Equal": lambda a, b: a == b,
    "Not": lambda x: np.logical_not(x),
    "And": lambda a, b: np.logical_and(a, b),
}


def evaluate(node: dict, values: dict[str, np.ndarray]) -> np.ndarray:
    """Recompute one trace node (JSON form) from the values of its inputs."""
    attrs = {k: v for k, v in node["attrs"].items() if k != "formula"}
    return OPS[node["op"]](*(values[i] for i in node["inputs"]), **attrs)


def as_array(tensor: dict) -> np.ndarray:
    """A trace tensor's data (row-major, null meaning −∞) as an array of its shape and dtype."""
    data = [float("-inf") if v is None else v for v in tensor["data"]]
    return np.array(data, dtype=tensor["dtype"]).reshape(tensor["shape"])


def reexecute(nodes: list[dict], values: dict[str, np.ndarray]) -> int:
    """Recomputes every non-Constant node from its inputs and checks it against the trace to 1e-5 (−∞ where
    the trace has −∞); `values` starts with the parameters and collects every node. Returns how many."""
    checked = 0
    for node in nodes:
        value = as_array(node)
        if node["op"] != "Constant":
            expected = evaluate(node, values)
            assert list(expected.shape) == node["shape"], node["id"]
            finite = np.isfinite(expected)
            assert np.array_equal(finite, np.isfinite(value)), node["id"]
            assert np.allclose(value[finite], expected[finite], atol=1e-5, rtol=1e-5), node["id"]
            checked += 1
        values[node["id"]] = value
    return checked
