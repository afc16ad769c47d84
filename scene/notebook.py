"""The scene in a Jupyter notebook, drawn with pythreejs (the optional extra `notebook`).

    from scene.notebook import show
    show(42, step=16)            # the stage of step 16 for the input 42
    show("seven hundred")        # the whole machine

pythreejs wraps an old three.js (r97) without instancing, so every cell of every block is one box
of a single merged, indexed BufferGeometry with per-vertex colours (8 corners a box, flat-shaded
from screen-space derivatives, so no normals are sent): the whole model is one draw call. Where the
boxes stand, how high and in what colour comes from scene/cells.py, the rule the stage uses; which
blocks, connectors and camera views exist, and the camera's field of view, come from the scene the page
computes for the input (scene/page_scene.py: the shape's structure with the input's own parts, by the page's
code under Node; `scene.camera`).

`scene_geometry` returns the plain arrays, so the tests check what the widget holds without a browser.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from scene.cells import cell_centres, cell_colours, cell_heights, drawn_values, hex_rgb
from scene.document import Scene, View, scene_from_json
from scene.views import fit_distance

CORNERS = 8  # vertices a box
# the 12 triangles of a box over its corners k = x + 2y + 4z (x, y, z ∈ {0, 1}), counter-clockwise seen from outside
BOX_TRIANGLES = np.array(
    [
        [4, 5, 7],
        [4, 7, 6],
        [0, 2, 3],
        [0, 3, 1],
        [1, 3, 7],
        [1, 7, 5],
        [0, 4, 6],
        [0, 6, 2],
        [2, 6, 7],
        [2, 7, 3],
        [0, 1, 5],
        [0, 5, 4],
    ],
    dtype=np.uint32,
)


@dataclass
class Geometry:
    boxes: int  # one a cell
    centres: np.ndarray  # (boxes, 3) cell centres, in the order of scene.blocks then row-major
    heights: np.ndarray  # (boxes,) signed
    cell_colours: np.ndarray  # (boxes, 3) sRGB 0…1
    positions: np.ndarray  # (boxes·8, 3) float32 corners: the BufferGeometry's `position`
    colours: np.ndarray  # (boxes·8, 3) float32: its `color`
    index: np.ndarray  # (boxes·36,) uint32: its index


def scene_values(trace, params: dict) -> dict[str, np.ndarray]:
    """Every block's tensor by id: the parameters and the trace's nodes."""
    return {**params, **{n.id: n.value for n in trace.nodes}}


def scene_geometry(scene: Scene, values: dict) -> Geometry:
    """One box per cell of every block, as the arrays of one merged BufferGeometry."""
    centres, heights, colours = [], [], []
    for b in scene.blocks:
        drawn = drawn_values(b, values[b.id])
        centres.append(cell_centres(b))
        heights.append(cell_heights(b, drawn))
        colours.append(cell_colours(b, drawn, scene.palette))
    c, h, col = np.concatenate(centres), np.concatenate(heights), np.concatenate(colours)
    n = len(c)
    k = np.arange(CORNERS)
    half = scene.cell["footprint"] / 2  # the scene says how a cell is drawn
    corners = np.empty((n, CORNERS, 3))
    corners[:, :, 0] = c[:, None, 0] + np.where(k & 1, half, -half)
    corners[:, :, 1] = c[:, None, 1] + np.where(k & 2, half, -half)
    corners[:, :, 2] = np.where(k & 4, np.maximum(h, 0)[:, None], np.minimum(h, 0)[:, None])
    index = (BOX_TRIANGLES.ravel()[None, :] + (np.arange(n, dtype=np.uint32) * CORNERS)[:, None]).ravel()
    return Geometry(
        n,
        c,
        h,
        col,
        corners.reshape(-1, 3).astype(np.float32),
        np.repeat(col, CORNERS, axis=0).astype(np.float32),
        index.astype(np.uint32),
    )


def connector_segments(scene: Scene) -> tuple[np.ndarray, np.ndarray]:
    """The connectors' polylines as line-segment pairs: positions (2·segments, 3) and colours."""
    pos, col = [], []
    for con in scene.connectors:
        rgb = hex_rgb(con.color)
        for line in con.lines:
            p = np.asarray(line, dtype=np.float64)
            if len(p) < 2:
                continue
            seg = np.stack([p[:-1], p[1:]], axis=1).reshape(-1, 3)
            pos.append(seg)
            col.append(np.tile(rgb, (len(seg), 1)))
    if not pos:
        return np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32)
    return np.concatenate(pos).astype(np.float32), np.concatenate(col).astype(np.float32)


def camera_pose(view: View, aspect: float, fov: float) -> tuple[list[float], list[float]]:
    """Where the camera of a view sits and its orientation (x, y, z, w) looking at the target, y up:
    target + fit_distance · (cos el · sin az, sin el, cos el · cos az)."""
    d = fit_distance(view, fov, aspect)
    az, el = view.azimuth, view.elevation
    t = np.asarray(view.target, dtype=np.float64)
    eye = t + d * np.array([math.cos(el) * math.sin(az), math.sin(el), math.cos(el) * math.cos(az)])
    z = (eye - t) / np.linalg.norm(eye - t)  # three.js: a camera looks down its −z axis
    x = np.cross([0.0, 1.0, 0.0], z)
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    return eye.tolist(), _quaternion(np.stack([x, y, z], axis=1))


def _quaternion(m: np.ndarray) -> list[float]:
    """A rotation matrix's quaternion (x, y, z, w), as three.js's setFromRotationMatrix."""
    tr = m[0, 0] + m[1, 1] + m[2, 2]
    if tr > 0:
        s = 0.5 / math.sqrt(tr + 1)
        q = [(m[2, 1] - m[1, 2]) * s, (m[0, 2] - m[2, 0]) * s, (m[1, 0] - m[0, 1]) * s, 0.25 / s]
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = 2 * math.sqrt(1 + m[0, 0] - m[1, 1] - m[2, 2])
        q = [0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s, (m[2, 1] - m[1, 2]) / s]
    elif m[1, 1] > m[2, 2]:
        s = 2 * math.sqrt(1 + m[1, 1] - m[0, 0] - m[2, 2])
        q = [(m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s, (m[0, 2] - m[2, 0]) / s]
    else:
        s = 2 * math.sqrt(1 + m[2, 2] - m[0, 0] - m[1, 1])
        q = [(m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s, (m[1, 0] - m[0, 1]) / s]
    return [float(v) for v in q]


def step_view(scene: Scene, step: int | None) -> View:
    """The camera view of a step of the tour (its number, 1…), or the whole machine for None."""
    if step is None:
        return scene.overview
    for s in scene.steps:
        if s.step == step:
            return s.view
    raise ValueError(f"no step {step}; the tour has steps {scene.steps[0].step}…{scene.steps[-1].step}")


@lru_cache(maxsize=1)
def _translator():
    from model.translate import Translator

    return Translator.load()


def load_scene(number_or_text: int | str) -> tuple[Scene, dict]:
    """The shipped model's scene for an input (a number, or text as the page accepts it) and its values."""
    from model.parse import parse_number

    return _scene_of(number_or_text if isinstance(number_or_text, int) else parse_number(number_or_text))


@lru_cache(maxsize=8)
def _scene_of(number: int) -> tuple[Scene, dict]:
    from article.tour import load_tour
    from model import models
    from recorder import parameters, trace
    from scene.page_scene import page_parts_of

    model = _translator().model
    params = parameters(model)
    t = trace(model, number, params)
    values = scene_values(t, params)
    scene = page_parts_of(t, model, params, load_tour(), models.DEFAULT)["scene"]
    return drawn_scene(scene_from_json(scene), values), values


def drawn_scene(scene: Scene, values: dict) -> Scene:
    """The scene less what this trace does not draw: each part's gate (scene/gates.py) has its place in every
    structure, and is drawn, with its label, only while the part is off, when the trace has its node."""
    out = copy.copy(scene)
    out.blocks = [b for b in scene.blocks if b.id in values]
    shown = {b.part for b in out.blocks if b.part}
    out.labels = [la for la in scene.labels if not la.part or la.part in shown]
    out.cells = sum(b.rows * b.cols for b in out.blocks)
    return out


def camera_settings(view: View, aspect: float, fov: float) -> dict:
    """A PerspectiveCamera's traits for a view: position, orientation and clipping planes."""
    pos, quat = camera_pose(view, aspect, fov)
    d = fit_distance(view, fov, aspect)
    return {"position": tuple(pos), "quaternion": tuple(quat), "near": max(0.5, d / 200), "far": d * 8 + 2000}


def move_camera(renderer, view: View) -> None:
    """Puts a shown renderer's camera (and its orbit target) where another view says, at its field of view."""
    renderer.camera.set_trait("aspect", renderer.width / renderer.height)
    for name, value in camera_settings(view, renderer.width / renderer.height, renderer.camera.fov).items():
        setattr(renderer.camera, name, value)
    for c in renderer.controls:
        c.target = tuple(float(v) for v in view.target)


def show(
    number_or_text: int | str, step: int | None = None, width: int = 760, height: int = 500, titles: bool | None = None
):
    """A pythreejs Renderer drawing the scene of an input, its camera on a step's view (None: the overview).
    Station titles are drawn in the overview only, unless `titles` says otherwise (as on the stage)."""
    import pythreejs as p3

    scene, values = load_scene(number_or_text)
    g = scene_geometry(scene, values)
    cells = p3.Mesh(
        p3.BufferGeometry(
            attributes={"position": p3.BufferAttribute(g.positions), "color": p3.BufferAttribute(g.colours)},
            index=p3.BufferAttribute(g.index),
        ),
        p3.MeshPhongMaterial(vertexColors="VertexColors", flatShading=True, specular="#000000"),
        name="cells",
    )
    seg_pos, seg_col = connector_segments(scene)
    lines = p3.LineSegments(
        p3.BufferGeometry(attributes={"position": p3.BufferAttribute(seg_pos), "color": p3.BufferAttribute(seg_col)}),
        p3.LineBasicMaterial(vertexColors="VertexColors"),
        name="connectors",
    )
    # the stage's shading, colour × (0.62 + 0.38 · n·l) with the light from (0.35, 0.55, 0.75), on the faces
    # lit; faces turned away get darker (a hemisphere light is linear in n·l). Not a DirectionalLight:
    # its shadow camera, made by the front end, fails to sync under JupyterLab 4 ("Error setting state")
    children = [
        cells,
        lines,
        p3.AmbientLight(color="#ffffff", intensity=0.24),
        p3.HemisphereLight(color="#ffffff", groundColor="#000000", intensity=0.76, position=[0.35, 0.55, 0.75]),
    ]
    view = step_view(scene, step)
    if step is None if titles is None else titles:
        children += _station_titles(scene, p3)
    camera = p3.PerspectiveCamera(fov=scene.camera["fov_deg"], aspect=width / height, up=[0, 1, 0])
    renderer = p3.Renderer(
        p3.Scene(children=children, background=scene.palette["background"]),
        camera,
        controls=[p3.OrbitControls(controlling=camera)],
        width=width,
        height=height,
        antialias=True,
    )
    # moved after the controls exist: their front end turns the camera to the target when it changes
    # (a target given at construction leaves the camera looking at the origin)
    move_camera(renderer, view)
    return renderer


def _station_titles(scene: Scene, p3) -> list:
    """The stations' titles as sprites (a TextTexture each), at the scene's label positions."""
    out = []
    for lab in scene.labels:
        if lab.role != "station":
            continue
        w = 0.55 * lab.size * len(lab.text)  # the sprite's width, estimated from the text
        x = lab.x - w / 2 if lab.anchor == "right" else lab.x + w / 2 if lab.anchor == "left" else lab.x
        tex = p3.TextTexture(string=lab.text, color=scene.palette["labels"]["station"], size=64, squareTexture=False)
        out.append(
            p3.Sprite(
                p3.SpriteMaterial(map=tex, transparent=True),
                position=[x, lab.y, 0.5],
                scale=[w, lab.size, 1],
                name=lab.text,
            )
        )
    return out
