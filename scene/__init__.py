"""The scene's structure: what the stage and the notebook draw for a trace's shape (blocks, stations,
connectors, labels, colours, the tour's views), computed from the graph, the model's config and the tour;
the page adds each input's own parts (static/compute/scene.js).

What the rest of the project uses is imported from here; the modules inside are the scene's own:

    build       structure_of and the structure cache    document    the scene's dataclasses (what is sent)
    tensors     the trace's nodes and parameters        kinds       op → how a block's cells are drawn
    axes        token axes and the row names' templates  words       labels, descriptions, station titles, names
    blocks      each tensor as a block                  boxes       the box model stations are made of
    layout      stations, towers, placement             connectors  threads, rails, arcs, tie, loop
    labels      block, station and token labels         switches    the parts that can be switched off
    views       tour steps, subjects, fit_distance      palette     the colours
    measures    gaps, the cell, the camera              cells       the cell rule (how a tensor lies, heights, colours)
    notebook    the pythreejs renderer                 structure   structures per shape, for the browser
    gates       every part's gate kept in its place, so a shape has one structure whatever is switched off
"""

from scene.build import structure_of
from scene.document import Block, Scene, View
from scene.measures import CELL, HEAD_GAP
from scene.views import fit_distance

__all__ = ["CELL", "HEAD_GAP", "Block", "Scene", "View", "fit_distance", "structure_of"]
