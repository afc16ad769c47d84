"""The trace as a real ONNX model: one translation's graph, checkable by the ONNX project's own tools.

`onnx_model(trace, params)` builds a ModelProto (opset 23) from the trace's nodes and the parameters:
the parameters are initializers, each trace node is an ONNX node under its own id (a Constant node
holds its tensor as the `value` attribute), and every node's value is a named graph output, so Netron
draws them all and an evaluator (`onnx.reference.ReferenceEvaluator`) reproduces them. The graph has no
inputs: it is the computation of one input, with the source and decoder ids as constants.

Where the trace's node form and opset 23 differ, the export bridges it and names the bridge:
- Slice's axes, starts and ends are inputs since opset 10, not attributes: they become int64
  initializers `onnx.axes.1`, `onnx.starts.8`, … (shared by value).
- RotaryEmbedding takes rank 3 (batch, sequence, hidden) or 4; the trace has no batch axis. The export
  puts batch = 1 back: `{id}/x` = Unsqueeze(x) and `{id}/position_ids` = Unsqueeze(positions), the
  operator writes `{id}/y` (1, sequence, hidden), and a Squeeze gives the trace's `{id}`.
- Attributes an operator's schema does not name (a Constant's `formula`, a gate's `ablation`) are the
  trace's notes: they go into the node's doc_string, which Netron shows.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import numpy as np
import onnx
from onnx import helper, numpy_helper

if TYPE_CHECKING:
    from recorder import Node, Trace

ONNX_OPSET = 23
PRODUCER = "anatomy-of-the-transformer"
ONNX_MEDIA_TYPE = "application/octet-stream"  # what the API sends a .onnx as (ONNX registers no media type)


class _Initializers:
    """The model's initializers: the parameters, then the export's own int64 constants, each made once."""

    def __init__(self, params: dict[str, np.ndarray], ids: list[str]):
        self.tensors = [numpy_helper.from_array(np.asarray(params[i], order="C"), i) for i in ids]
        self._ints: set[str] = set()

    def ints(self, kind: str, values: list[int]) -> str:
        """The name of an int64 vector initializer (Slice's starts, Unsqueeze's axes, …) of these values."""
        name = f"onnx.{kind}." + "_".join(str(v) for v in values)
        if name not in self._ints:
            self._ints.add(name)
            self.tensors.append(numpy_helper.from_array(np.array(values, dtype=np.int64), name))
        return name


def _split_attrs(op: str, attrs: dict) -> tuple[dict, dict]:
    """(the attributes the opset's schema of `op` names, the trace's other notes)."""
    known = onnx.defs.get_schema(op, ONNX_OPSET).attributes
    return ({k: v for k, v in attrs.items() if k in known}, {k: v for k, v in attrs.items() if k not in known})


def _doc(notes: dict) -> str:
    return "; ".join(f"{k}: {v}" for k, v in notes.items())


def _constant(node: Node) -> list[onnx.NodeProto]:
    """A trace Constant: an ONNX Constant holding the tensor (−∞ included: raw float32 bytes)."""
    value = numpy_helper.from_array(np.asarray(node.value, order="C"), node.id)  # a scalar stays 0-D
    return [helper.make_node("Constant", [], [node.id], name=node.id, value=value, doc_string=_doc(node.attrs))]


def _slice(node: Node, init: _Initializers) -> list[onnx.NodeProto]:
    """Slice with its axes, starts, ends (and any steps) as the inputs opset 23 takes them as."""
    a = node.attrs
    inputs = [node.inputs[0], init.ints("starts", a["starts"]), init.ints("ends", a["ends"])]
    if "axes" in a or "steps" in a:
        inputs.append(init.ints("axes", a.get("axes") or list(range(len(a["starts"])))))
    if "steps" in a:
        inputs.append(init.ints("steps", a["steps"]))
    return [helper.make_node("Slice", inputs, [node.id], name=node.id)]


def _rotary(node: Node, init: _Initializers) -> list[onnx.NodeProto]:
    """RotaryEmbedding on the opset's (batch = 1, sequence, hidden) form, between Unsqueeze and Squeeze:
    the trace's (sequence, hidden) input and (sequence,) positions gain the batch axis, the output loses it."""
    x, cos, sin, *positions = node.inputs
    batch = init.ints("axes", [0])
    attrs, notes = _split_attrs("RotaryEmbedding", node.attrs)
    nodes = [helper.make_node("Unsqueeze", [x, batch], [f"{node.id}/x"], name=f"{node.id}/unsqueeze_x")]
    inputs = [f"{node.id}/x", cos, sin]
    if positions:
        nodes.append(
            helper.make_node(
                "Unsqueeze",
                [positions[0], batch],
                [f"{node.id}/position_ids"],
                name=f"{node.id}/unsqueeze_position_ids",
            )
        )
        inputs.append(f"{node.id}/position_ids")
    nodes.append(
        helper.make_node("RotaryEmbedding", inputs, [f"{node.id}/y"], name=node.id, doc_string=_doc(notes), **attrs)
    )
    nodes.append(helper.make_node("Squeeze", [f"{node.id}/y", batch], [node.id], name=f"{node.id}/squeeze"))
    return nodes


def onnx_nodes(node: Node, init: _Initializers) -> list[onnx.NodeProto]:
    """The ONNX node(s) computing one trace node; the last one writes the output named after it."""
    if node.op == "Constant":
        return _constant(node)
    if node.op == "Slice":
        return _slice(node, init)
    if node.op == "RotaryEmbedding":
        return _rotary(node, init)
    attrs, notes = _split_attrs(node.op, node.attrs)
    return [helper.make_node(node.op, list(node.inputs), [node.id], name=node.id, doc_string=_doc(notes), **attrs)]


def value_info(node: Node) -> onnx.ValueInfoProto:
    """A graph output: the node's id, element type and shape, as the trace holds its value."""
    elem = helper.np_dtype_to_tensor_dtype(node.value.dtype)
    return helper.make_tensor_value_info(node.id, elem, list(node.value.shape))


def _metadata(trace: Trace) -> dict[str, str]:
    """What the trace's header says of this graph, as the model's metadata (strings; lists as JSON)."""
    return {
        "number": str(trace.number),
        "weights_version": trace.weights_version,
        "source_tokens": json.dumps(trace.source_tokens, ensure_ascii=False),
        "target_tokens": json.dumps(trace.target_tokens, ensure_ascii=False),
        "output_tokens": json.dumps(trace.output_tokens, ensure_ascii=False),
        "memory": trace.memory or "",
        "ablation": json.dumps(list(trace.ablation)),
    }


def onnx_model(trace: Trace, params: dict[str, np.ndarray], doc: str = "") -> onnx.ModelProto:
    """The trace as an ONNX model (opset 23): parameters as initializers, every trace node an ONNX node
    and a graph output under its id. `doc` is added to the graph's doc_string (say, the checkpoint)."""
    init = _Initializers(params, list(trace.parameter_ids))
    nodes = [n for node in trace.nodes for n in onnx_nodes(node, init)]
    text = " ".join(trace.source_tokens)
    graph = helper.make_graph(
        nodes,
        f"anatomy-{trace.number}",
        inputs=[],
        outputs=[value_info(n) for n in trace.nodes],
        initializer=init.tensors,
        doc_string=f"Every tensor of the translation of {text!r} → {' '.join(trace.output_tokens)!r}. {doc}".strip(),
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", ONNX_OPSET)],
        producer_name=PRODUCER,
        doc_string="The trace of one translation (the graph the stage draws) as ONNX.",
    )
    helper.set_model_props(model, _metadata(trace))
    return model


def onnx_bytes(trace: Trace, params: dict[str, np.ndarray], doc: str = "") -> bytes:
    """The model serialised, as a .onnx file holds it."""
    return onnx_model(trace, params, doc).SerializeToString()
