"""Every tensor as a block: its kind, words, drawn shape and head gaps, the axes its rows and columns
stand for, and what the inspector shows beside its values. What each block *is* comes from the trace's
own graph: the kind from its op and dtype, head gaps from the Slice nodes that cut it, the transposed W₂
from the ReLU (or SwiGLU's gated units) under it, token axes propagated through the ops."""

from __future__ import annotations

from model import ids
from model.transformer import Config
from scene.cells import drawn_shape, drawn_width, head_gap_every
from scene.document import Block
from scene.kinds import kind_of
from scene.tensors import NORM_OPS, Tensor, gated_units
from scene.words import description_of, label_of


def head_columns(tensors: dict[str, Tensor], slices: list[Tensor]) -> dict[str, int]:
    """The columns of one head in each tensor cut into heads: Q, K, V (and their rotated forms), the
    weights and biases that make them, and Concat."""
    sliced = {s.inputs[0]: int(s.shape[1]) for s in slices}  # q, k, v → d_k
    for t in tensors.values():  # rotary Q and K: the tensor rotated has the same head columns
        if t.id in sliced and t.op == "RotaryEmbedding":
            sliced[t.inputs[0]] = sliced[t.id]
    headed = dict(sliced)
    for t in tensors.values():
        if (
            t.id in sliced
            and t.op in ("Gemm", "MatMul")
            and t.inputs[1] in tensors
            and tensors[t.inputs[1]].op == "Parameter"
        ):  # the weights and bias that make a sliced tensor
            for w in t.inputs[1:]:
                headed[w] = sliced[t.id]
        if t.op == "Concat":
            headed[t.id] = int(tensors[t.inputs[0]].shape[1])
    return headed


def transposed_weights(tensors: dict[str, Tensor]) -> set[str]:
    """W₂, drawn transposed so that its columns line up with the hidden units under it."""
    hidden = {t.id for t in tensors.values() if t.op == "Relu"} | gated_units(tensors)
    return {t.inputs[1] for t in tensors.values() if t.op in ("Gemm", "MatMul") and t.inputs[0] in hidden}


def _value_axis(t: Tensor) -> str | None:
    """vocab where the values are token ids: the inputs' ids and the chosen tokens."""
    ids_input = t.op == "Constant" and t.dtype.startswith("int") and ids.parse(t.id).role == "ids"
    return "vocab" if t.op == "ArgMax" or ids_input else None


def _mask_of(t: Tensor, tensors: dict[str, Tensor]) -> str | None:
    """The mask that applies to a head's scores or weights (the causal mask, in masked self-attention)."""
    masked = tensors.get(ids.sibling(t.id, "masked"))
    return masked.inputs[0] if masked else None


def _inspector_extras(b: Block, t: Tensor, tensors: dict[str, Tensor]) -> None:
    """The unscaled entry behind a scaling, the row statistics of a sum or norm, and the mask."""
    if t.op == "Mul" and len(t.inputs) == 2 and tensors[t.inputs[1]].shape == ():
        b.raw = {
            "of": t.inputs[0],
            "factor_of": t.inputs[1],
            "label": "raw E entry" if tensors[t.inputs[0]].op == "Gather" else "input",
        }
    role = ids.parse(t.id).role
    b.row_stats = (t.op == "Add" and role == "sum") or t.op in NORM_OPS
    if t.op == "Where":
        b.mask = t.inputs[0]
    elif t.op in ("Gemm", "Softmax") and role in ("scores", "weights"):
        b.mask = _mask_of(t, tensors)


def blocks_of(
    tensors: dict[str, Tensor], axes: dict, cfg: Config, memory: str | None, slices: list[Tensor]
) -> list[Block]:
    """A block for every tensor but a Slice (drawn inside the block it cuts), unplaced."""
    headed = head_columns(tensors, slices)
    transposed = transposed_weights(tensors)
    out = []
    for t in tensors.values():
        if t.op == "Slice":
            continue
        flip = t.id in transposed
        rows, cols = drawn_shape(t.shape, t.dtype, flip)
        gap = head_gap_every(cols, headed.get(t.id, 0)) if cfg.n_heads > 1 else 0
        ra, ca = axes.get(t.id, (None, None))
        b = Block(
            id=t.id,
            op=t.op,
            kind=kind_of(t),
            label=label_of(t, cfg, memory),
            description=description_of(t, cfg),
            station="",
            tower="shared",
            param=t.op == "Parameter",
            shape=list(t.shape),
            rows=rows,
            cols=cols,
            x=0.0,
            y=0.0,
            w=drawn_width(cols, gap),
            gap_every=gap,
            transposed=flip,
            row_axis=ca if flip else ra,
            col_axis=ra if flip else ca,
            value_axis=_value_axis(t),
            inputs=list(t.inputs),
        )
        _inspector_extras(b, t, tensors)
        out.append(b)
    return out
