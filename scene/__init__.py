"""The scene: what the stage and the notebook draw for a trace (blocks, stations, connectors, labels,
colours, the tour's views), computed from the trace, the model's config and the tour.

What the rest of the project uses is imported from here; the modules inside are the scene's own.
"""

from scene.layout import CELL, HEAD_GAP, Block, Scene, View, build_scene, fit_distance

__all__ = ["CELL", "HEAD_GAP", "Block", "Scene", "View", "build_scene", "fit_distance"]
