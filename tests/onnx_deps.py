"""Which input elements one output element of a trace node is computed from, by the ONNX operator's
semantics for the attributes the trace sets: written apart from the page's evaluator
(static/stage/explain.js) so that the browser tests can check it against this.

    deps(node, values, index) -> {(input id, input index), …}

`node` is a trace node in JSON form (op, inputs, attrs), `values` the arrays of its inputs (only
Gather's indices and Where's condition are read), `index` the output element as a tuple. An index
is a tuple as long as the tensor's rank: (row, col) for a matrix, (k,) for a vector, () for a scalar.
"""

from __future__ import annotations

import itertools

import numpy as np


def _broadcast(shape: tuple[int, ...], out: tuple[int, ...]) -> tuple[int, ...]:
    """The element of a broadcast input that lands on output element `out` (numpy's rules)."""
    lead = len(out) - len(shape)
    return tuple(0 if n == 1 else out[lead + i] for i, n in enumerate(shape))


def _along(out: tuple[int, ...], axis: int, n: int) -> list[tuple[int, ...]]:
    return [out[:axis] + (j,) + out[axis + 1 :] for j in range(n)]


def deps(node: dict, values: dict[str, np.ndarray], index: tuple[int, ...]) -> set[tuple[str, tuple[int, ...]]]:
    op, ins, attrs = node["op"], node["inputs"], node.get("attrs") or {}
    shape = {i: np.shape(values[i]) for i in ins}
    out = tuple(int(i) for i in index)
    if op == "Constant":
        return set()
    if op in ("Gemm", "MatMul"):
        a, b = ins[0], ins[1]
        ta, tb = attrs.get("transA", 0), attrs.get("transB", 0)
        r, c = out
        k_len = shape[a][0] if ta else shape[a][1]
        got = set()
        for k in range(k_len):
            got.add((a, (k, r) if ta else (r, k)))
            got.add((b, (c, k) if tb else (k, c)))
        if op == "Gemm" and len(ins) > 2:
            got.add((ins[2], _broadcast(shape[ins[2]], out)))
        return got
    if op in ("Add", "Sub", "Mul", "Div"):
        return {(i, _broadcast(shape[i], out)) for i in ins}
    if op in ("Relu", "Sigmoid"):
        return {(ins[0], out)}
    if op == "RotaryEmbedding":  # interleaved pairs; (sequence, hidden) is the 3-D form without its batch of 1
        x, cos, sin, *pos = ins
        t, c = out
        d_k = shape[x][1] // attrs.get("num_heads", 1)
        base, i = c - c % 2, (c % d_k) // 2
        p = int(np.asarray(values[pos[0]])[t]) if pos else t
        got = {(x, (t, base)), (x, (t, base + 1)), (cos, (p, i)), (sin, (p, i))}
        return got | ({(pos[0], (t,))} if pos else set())
    if op == "Where":
        cond, x, y = ins
        ic = _broadcast(shape[cond], out)
        chosen = x if bool(np.asarray(values[cond])[ic]) else y
        return {(cond, ic), (chosen, _broadcast(shape[chosen], out))}
    if op == "Softmax":
        axis = attrs.get("axis", -1) % len(out)
        return {(ins[0], i) for i in _along(out, axis, shape[ins[0]][axis])}
    if op == "ArgMax":
        axis = attrs.get("axis", 0) % len(shape[ins[0]])
        full = out if attrs.get("keepdims", 1) else out[:axis] + (0,) + out[axis:]
        return {(ins[0], i) for i in _along(full, axis, shape[ins[0]][axis])}
    if op in ("LayerNormalization", "RMSNormalization"):
        x = ins[0]
        axis = attrs.get("axis", -1) % len(shape[x])
        lead, rest = out[:axis], shape[x][axis:]
        got = {(x, lead + tail) for tail in itertools.product(*map(range, rest))}
        return got | {(p, _broadcast(shape[p], out)) for p in ins[1:]}
    if op == "Gather":
        data, idx = ins
        axis = attrs.get("axis", 0) % len(shape[data])
        r = len(shape[idx])
        at = out[axis : axis + r]
        row = int(np.asarray(values[idx])[at])
        row = row + shape[data][axis] if row < 0 else row
        return {(idx, at), (data, out[:axis] + (row,) + out[axis + r :])}
    if op == "Transpose":
        perm = attrs.get("perm") or list(reversed(range(len(out))))
        src = [0] * len(out)
        for k, p in enumerate(perm):
            src[p] = out[k]
        return {(ins[0], tuple(src))}
    if op == "Slice":
        x = ins[0]
        src = list(out)
        axes = attrs.get("axes") or list(range(len(attrs["starts"])))
        for i, axis in enumerate(axes):
            axis %= len(shape[x])
            dim, step = shape[x][axis], (attrs.get("steps") or [1] * len(axes))[i]
            start = attrs["starts"][i] + (dim if attrs["starts"][i] < 0 else 0)
            start = min(max(start, 0), dim if step > 0 else dim - 1)
            src[axis] = start + out[axis] * step
        return {(x, tuple(src))}
    if op == "Concat":
        axis = attrs["axis"] % len(out)
        offset = 0
        for i in ins:
            n = shape[i][axis]
            if out[axis] < offset + n:
                return {(i, out[:axis] + (out[axis] - offset,) + out[axis + 1 :])}
            offset += n
        raise IndexError(f"{node['id']}: {out} is past the end of the concatenation")
    raise NotImplementedError(f"no dependency rule for {op}")
