"""Building a scene's structure from a trace's graph, the model's config and the tour: one description, two
renderers, the three.js stage (static/stage/) and the pythreejs notebook view (scene/notebook.py), which
only draw what it decides. Pure Python and numpy, so a model of another shape draws unchanged. The input's
own parts (its words, threads, token labels, worked row, windows) are added by the page
(static/compute/scene.js), the one place they are computed."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from article.tour import TourStep
from model import ids
from model.transformer import Config
from scene.axes import token_axes
from scene.blocks import blocks_of
from scene.connectors import connectors
from scene.document import FORMAT, Scene, SliceAlias, View
from scene.gates import every_part_off, gate_parts, intact_inputs
from scene.labels import labels, name_columns, name_rows
from scene.layout import lay_out
from scene.measures import CELL
from scene.palette import palette
from scene.switches import switches
from scene.tensors import memory_id, tensors_of
from scene.views import bounds, centre, scene_step
from scene.words import part_name

# A scene is mostly structure: the blocks, stations, views, rails and arcs follow from the graph's ids,
# ops, inputs, attributes and shapes alone, and every input with the same graph shares them. Only the
# tokens are the input's own: the axes' words, the row names, the token labels, the threads from E's
# rows and the attention row steps 6–9 work through; the page adds those (static/compute/scene.js). So the
# structure is built once per graph and kept; nothing may change it.
STRUCTURES: OrderedDict[tuple, Scene] = OrderedDict()
STRUCTURES_KEPT = 64  # source length × output length × model: a few dozen in practice
LOSS_OVERLAY = "loss"  # the step overlay that marks each training row's reference piece (static/compute/loss.js)


def structure_of(trace, cfg: Config, params: dict[str, np.ndarray], tour: list[TourStep]) -> Scene:
    """The structure of a trace's scene, built once per graph (`STRUCTURES`): every input with its graph
    shares it, and nothing may change it."""
    key = _structure_key(trace, cfg, params, tour)
    base = STRUCTURES.get(key)
    if base is None:
        base = STRUCTURES[key] = _build_structure(every_part_off(trace, cfg, params), cfg, params, tour)
        while len(STRUCTURES) > STRUCTURES_KEPT:
            STRUCTURES.popitem(last=False)
    else:
        STRUCTURES.move_to_end(key)
    return base


def _structure_key(trace, cfg: Config, params: dict[str, np.ndarray], tour: list[TourStep]) -> tuple:
    """Everything the structure reads: the graph (not its values) as it is with every part on (a part
    switched off adds its gate, whose place every structure keeps: scene/gates.py), the parameters' shapes,
    the config and the tour."""
    gates = gate_parts(trace.nodes)
    reads = intact_inputs(trace.nodes, gates)
    graph = tuple(
        (n.id, n.op, tuple(reads.get(i, i) for i in n.inputs), repr(n.attrs), n.value.shape, n.value.dtype.str)
        for n in trace.nodes
        if n.id not in gates
    )
    return (
        graph,
        tuple((k, np.shape(v)) for k, v in params.items()),
        repr(cfg),
        repr(tour),  # 0.05 ms
        tuple(lens_blocks(trace)),
    )


def lens_blocks(trace) -> list[str]:
    """The logit lens's nodes, layer by layer (a pre-norm model's begin with the final norm)."""
    layers = getattr(trace, "lens", ())
    normed = {n.id for n in trace.nodes if n.id.startswith("lens.")} if layers else set()
    norms = [ids.lens_id(layer.layer, "norm") for layer in layers]
    return [
        i
        for layer, norm in zip(layers, norms, strict=True)
        for i in ((norm,) if norm in normed else ()) + (layer.logits, layer.probs, layer.tokens)
    ]


def _build_structure(trace, cfg: Config, params: dict[str, np.ndarray], tour: list[TourStep]) -> Scene:
    """The structure of `trace`'s graph (`structure_of` passes the graph with every part off: scene/gates.py)."""
    tensors = tensors_of(trace, params)
    axes = token_axes(tensors, trace)
    memory = memory_id(trace)
    slices = [t for t in tensors.values() if t.op == "Slice"]
    blocks = _gated(blocks_of(tensors, axes, cfg, memory, slices), trace.nodes)
    stations, order = lay_out(blocks, cfg)
    blocks.sort(key=lambda b: order.get(b.id, len(order)))  # reading order: keyboard Tab walks it
    by_id = {b.id: b for b in blocks}
    titles = {s.id: s.title for s in stations}
    for b in blocks:
        b.name = part_name(b.id, titles.get(b.station, ""))
    name_rows(blocks)
    name_columns(blocks)
    aliases = [
        SliceAlias(t.id, t.inputs[0], int(t.attrs["starts"][0]), int(t.shape[1]), part_name(t.id)) for t in slices
    ]
    box = bounds(blocks)
    overview = View(box=box, target=centre(box), azimuth=-0.12, elevation=0.08)
    scene = Scene(
        FORMAT,
        cfg.to_dict(),
        CELL,
        palette(),
        {},
        blocks,
        aliases,
        stations,
        [],
        [],
        box,
        overview,
        [],
        sum(b.rows * b.cols for b in blocks),
    )
    scene.connectors = connectors(scene, by_id, tensors, memory)
    scene.labels = labels(scene)
    names = (tuple(b.id for b in scene.blocks), tuple((s.id, s.of) for s in scene.slices))
    scene.steps = [scene_step(s, scene, by_id, tensors, cfg, names) for s in tour]
    scene.switches = switches(scene, cfg, set())  # every part on: the page sets each trace's
    scene.lens = [i for i in lens_blocks(trace) if i in by_id]
    return scene


def _gated(blocks: list, nodes) -> list:
    """The blocks with each gate's marked with its part, and every block's inputs the model's with every part
    on (scene/gates.py: the trace on show says what a consumer reads while a part is off)."""
    gates = gate_parts(nodes)
    reads = intact_inputs(nodes, gates)
    for b in blocks:
        b.part = gates.get(b.id)
        b.inputs = [reads.get(i, i) for i in b.inputs]
    return blocks
