"""The recorder: one translation's every tensor as a self-describing graph of ONNX operators.

What the rest of the project uses is imported from here; the modules inside are the recorder's own.
"""

from recorder.onnx_model import ONNX_MEDIA_TYPE, ONNX_OPSET, onnx_bytes, onnx_model
from recorder.record import (
    FOLLOWED_OPTIONS,
    Node,
    Trace,
    TraceHeader,
    check_ablation_traceable,
    check_traceable,
    derived_figures,
    described,
    paper_layout,
    parameters,
    trace,
    weights_version,
)

__all__ = ["FOLLOWED_OPTIONS", "Node", "Trace", "TraceHeader", "check_ablation_traceable", "check_traceable",
           "derived_figures", "described", "paper_layout", "parameters", "trace", "weights_version",
           "ONNX_MEDIA_TYPE", "ONNX_OPSET", "onnx_bytes", "onnx_model"]
