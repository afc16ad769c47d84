"""The recorder: one translation's every tensor as a self-describing graph of ONNX operators.

What the rest of the project uses is imported from here; the modules inside are the recorder's own:
graph.py (the nodes and the graph builder), documents.py (the trace and its header), parameters.py
(the parameters under their trace ids), options.py (the Config options followed or refused),
record.py (the recording of the forward pass) and onnx_model.py (a trace as an ONNX model).
"""

from recorder.documents import Derived, LensLayer, LensPiece, Trace, TraceHeader, TraceInput, described
from recorder.graph import Node
from recorder.onnx_model import ONNX_MEDIA_TYPE, ONNX_OPSET, onnx_bytes, onnx_model
from recorder.options import FOLLOWED_OPTIONS, check_traceable, paper_layout
from recorder.parameters import parameters, weights_version
from recorder.record import trace

__all__ = [
    "FOLLOWED_OPTIONS",
    "Derived",
    "LensLayer",
    "LensPiece",
    "Node",
    "Trace",
    "TraceHeader",
    "TraceInput",
    "check_traceable",
    "described",
    "paper_layout",
    "parameters",
    "trace",
    "weights_version",
    "ONNX_MEDIA_TYPE",
    "ONNX_OPSET",
    "onnx_bytes",
    "onnx_model",
]
