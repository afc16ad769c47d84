"""The gates of the parts a reader may switch off (model/ablation.py), in every structure of a shape.

Switching a part off adds two nodes to the graph and nothing else (recorder/record.py): `part.gate`, a zero
constant, and `part.off`, the part's output times it, which the consumers then read. A structure built from
the graph with nothing off would have no room for them, and one built from each ablated graph would move every
block above them: the reader's switches would shift the machine under the camera, and every set of parts (2^34
in the shipped shape) would be a structure of its own. So every structure is built from the graph of its shape
with EVERY part switched off (`every_part_off`): each gate's place is reserved, and each gate block names its
part (`gate_parts`, Block.part), so that a renderer draws it only while the part is off, that is, while the
trace on show has its node. The structure depends on the shape alone, whatever is switched off.

The wiring a structure states is the model's with every part on (`intact_inputs`): a consumer of a part's
output reads that output, as it does in the trace unless the part is off, and the gate's product reads the
output and the gate. The trace on show says which a consumer reads (its nodes' inputs, which the inspector
follows). No connector runs into a gated output: the rails run from a sub-layer's input X into its residual
sum, the arcs from z, the tie from E, the loop from the chosen tokens (scene/connectors.py), none of them
gated, so the connectors are the same for every set too.
"""

from __future__ import annotations

from model.ablation import parts
from model.transformer import Config
from recorder.documents import Trace
from recorder.record import record


def every_part_off(trace, cfg: Config, params: dict) -> Trace:
    """The graph of the trace's shape (its source pieces and decoder rows) with every part switched off: the
    graph every structure of the shape is built from (its values are never read)."""
    every = [p.id for p in parts(cfg)]
    g, memory, out_tokens, lenses = record(
        cfg,
        params,
        list(trace.source_tokens),
        list(trace.target_tokens),
        frozenset(every),
        bool(getattr(trace, "lens", ())),
    )
    return Trace(
        trace.number,
        list(trace.source_tokens),
        list(trace.target_tokens),
        out_tokens,
        g.nodes,
        list(params),
        memory=memory,
        ablation=every,
        lens=lenses,
    )


def gate_parts(nodes) -> dict[str, str]:
    """The part each gate node belongs to: its zero constant (which names its part) and the product that
    reads it (the part's output switched off)."""
    out = {n.id: n.attrs["ablation"] for n in nodes if n.op == "Constant" and "ablation" in n.attrs}
    for n in nodes:
        gate = next((i for i in n.inputs if i in out), None) if n.op == "Mul" else None
        if gate is not None:
            out[n.id] = out[gate]
    return out


def intact_inputs(nodes, gates: dict[str, str]) -> dict[str, str]:
    """Each gate's product and the output it gates: what a consumer reads in its place with the part on."""
    return {n.id: next(i for i in n.inputs if i not in gates) for n in nodes if n.id in gates and n.op == "Mul"}


__all__ = ["every_part_off", "gate_parts", "intact_inputs"]
