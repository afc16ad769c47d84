"""What a block's rows and columns stand for (source or target tokens, the vocabulary), and the words
of those axes: the tokens, and the inspector's names for a row."""

from __future__ import annotations

from model import ids
from scene.tensors import Tensor


def token_axes(tensors: dict[str, Tensor], trace) -> dict[str, tuple[str | None, str | None]]:
    """What each tensor's rows and columns stand for (source or target tokens, the vocabulary),
    seeded at the inputs and carried through every op in the order computed."""
    axes: dict[str, tuple[str | None, str | None]] = {"E": ("vocab", None), "out.W_U": (None, "vocab")}
    for pid, t in tensors.items():
        if t.op == "Parameter" and pid not in axes:
            axes[pid] = (None, None)
    for n in trace.nodes:
        t = tensors[n.id]
        side = {"src": "source", "tgt": "target"}.get(ids.parse(n.id).side or "")
        ins = [axes.get(i, (None, None)) for i in t.inputs]
        if t.op == "Constant":
            if t.id == "dec.mask":
                a = ("target", "target")
            elif side and len(t.shape) >= 1:
                a = (side, None)
            else:
                a = (None, None)
        elif t.op == "Gather":
            a = (ins[1][0], ins[0][1])
        elif t.op == "Gemm":
            a = (ins[0][0], ins[1][0] if t.attrs.get("transB") else ins[1][1])
        elif t.op == "MatMul":
            a = (ins[0][0], ins[1][1])
        elif t.op == "Transpose":
            a = (ins[0][1], ins[0][0])
        elif t.op == "Where":
            a = ins[1]
        elif t.op in ("Slice", "Concat"):
            a = (ins[0][0], None)
        elif t.op == "ArgMax":
            a = (ins[0][0], None)
        else:  # elementwise: Add, Mul, Relu, Softmax, LayerNormalization
            a = next((x for x, i in zip(ins, t.inputs) if len(tensors[i].shape) == len(t.shape)), (None, None))
        axes[n.id] = a
    return axes


# the inspector's words for a row (the browser fills them too: scene/structure.py sends them)
ROW_NAMES = {"token": "token “{token}”", "decoder": "reads “{reads}”, writes “{writes}”"}
