"""The program (recorder/program.py) run with numpy: tests/onnx_numpy.py's operators over the graph that
`instantiate` gives, the length-dependent constants computed by their `compute` steps. Independent of
torch and of the JavaScript engine, so that the program itself is checked to give a trace's values."""

from __future__ import annotations

import numpy as np

from recorder.program import instantiate
from tests.onnx_numpy import evaluate


def tensor(t: dict) -> np.ndarray:
    data = [-np.inf if v is None else v for v in t["data"]]
    return np.array(data, dtype=t["dtype"]).reshape(t["shape"])


def run(
    program: dict,
    params: dict[str, np.ndarray],
    source_ids: list[int],
    target_ids: list[int],
    off: frozenset[str] = frozenset(),
) -> dict[str, np.ndarray]:
    """Every node's value of the trace of these token ids, by id."""
    n, m = len(source_ids), len(target_ids)
    values: dict[str, np.ndarray] = {
        **params,
        **{t["id"]: tensor(t) for t in program["tables"]},
        "n": np.array(n, np.int64),
        "m": np.array(m, np.int64),
        "source_ids": np.array(source_ids, np.int64),
        "target_ids": np.array(target_ids, np.int64),
    }
    declared = {x["id"]: x for x in program["nodes"]}
    out = {}
    for node in instantiate(program, n, m, off):
        if node["op"] == "Constant":
            spec = declared[node["id"]]
            if "value" in spec:
                value = tensor({**spec, "data": spec["value"]})
            else:
                for step in spec["compute"]:
                    attrs = {
                        k: [{"n": n, "m": m}.get(x, x) for x in v] if isinstance(v, list) else v
                        for k, v in step["attrs"].items()
                    }
                    values[step["id"]] = value = evaluate({**step, "attrs": attrs}, values)
            value = np.asarray(value).astype(node["dtype"])
        else:
            value = np.asarray(evaluate(node, values))
        values[node["id"]] = out[node["id"]] = value
    return out
