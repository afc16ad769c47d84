"""The pythreejs notebook view (scene/notebook.py): the example notebook runs end to end, and the widget
holds one box per cell of the scene, where the scene puts it, as high and in the colour the cell rule
says, with the camera where the step's view says. Needs the optional extra `notebook`."""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
import pytest

p3 = pytest.importorskip("pythreejs")
nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

from scene import HEAD_GAP, fit_distance  # noqa: E402
from scene.notebook import load_scene, show  # noqa: E402

NOTEBOOK = Path(__file__).resolve().parents[2] / "docs" / "notebook.ipynb"
CORNERS, TRIANGLE_INDICES = 8, 36


@pytest.fixture(scope="module")
def scene_values():
    return load_scene(42)


@pytest.fixture(scope="module")
def widget():
    return show(42, step=16, width=800, height=500)


def child(renderer, name):
    return next(c for c in renderer.scene.children if c.name == name)


def cell_index(scene, block_id, r, c):
    """The box of cell (r, c) of a block: blocks in scene order, cells row-major."""
    offset = 0
    for b in scene.blocks:
        if b.id == block_id:
            return offset + r * b.cols + c
        offset += b.rows * b.cols
    raise KeyError(block_id)


def entry(block, value, r, c):
    """The tensor entry drawn at cell (r, c), read straight from the tensor."""
    v = np.asarray(value)
    if v.ndim == 0:
        return float(v)
    if v.ndim == 1:
        return float(v[r] if block.cols == 1 and block.rows > 1 else v[c])
    return float(v[c, r] if block.transposed else v[r, c])


def rgb(h):
    return np.array([int(h[1:3], 16), int(h[3:5], 16), int(h[5:7], 16)]) / 255


def along(stops, t):
    """A colour at t (0…1) along evenly spaced stops, linear between neighbours."""
    p = min(max(t, 0.0), 1.0) * (len(stops) - 1)
    i = min(int(math.floor(p)), len(stops) - 2)
    return rgb(stops[i]) * (1 - (p - i)) + rgb(stops[i + 1]) * (p - i)


def expected(block, value, r, c, palette, tallest):
    """(colour, height) of a cell by the rule written out for one cell (scene/cells.py's docstring)."""
    v = entry(block, value, r, c)
    a = np.asarray(value, dtype=float)
    scale = float(np.abs(a[np.isfinite(a)]).max()) or 1.0
    if not math.isfinite(v):
        return rgb(palette["masked"]), 0.12
    if block.kind == "bar":
        colour, h = along(palette["sequential"], v), 0.15  # probabilities lie flat: colour alone
    elif block.kind == "ids":
        colour, h = rgb(palette["ids"]), 0.15
    elif block.kind == "bool":
        colour, h = rgb(palette["bool_true"] if v else palette["masked"]), 0.15
    elif block.kind == "relu" and v == 0:
        colour, h = rgb(palette["relu_zero"]), 0.0
    else:
        colour, h = along(palette["diverging"], (v / scale + 1) / 2), v / scale * tallest
    if abs(h) < 0.06:
        h = -0.06 if h < 0 else 0.06
    return colour, h


def test_the_example_notebook_runs_end_to_end_and_draws_two_widgets(scene_values):
    scene, _ = scene_values
    nb = nbformat.read(NOTEBOOK, as_version=4)
    started = time.monotonic()
    # python3 is ipykernel's own kernel spec (no `ipykernel install` needed); jupyter_client starts its
    # `python` as sys.executable, this interpreter
    nbclient.NotebookClient(
        nb, kernel_name="python3", timeout=120, resources={"metadata": {"path": str(NOTEBOOK.parent)}}
    ).execute()
    took = time.monotonic() - started
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    widgets = [o for o in outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert len(widgets) == 2 and all(o.data["text/plain"].startswith("Renderer(") for o in widgets)
    text = "".join(o.get("text", "") for o in outputs)
    assert f"{scene.cells} cells, {scene.cells} boxes, {scene.cells * CORNERS} vertices" in text
    assert "kind masked" in text and "-inf" in text
    assert took < 45, f"the notebook took {took:.1f} s"


def test_the_widget_holds_one_box_per_cell_in_one_merged_geometry(widget, scene_values):
    scene, _ = scene_values
    assert scene.cells == sum(b.rows * b.cols for b in scene.blocks) > 70_000
    meshes = [c for c in widget.scene.children if isinstance(c, p3.Mesh)]
    assert [m.name for m in meshes] == ["cells"]  # one mesh, one draw call, for every cell
    g = meshes[0].geometry
    pos, col, index = (g.attributes["position"].array, g.attributes["color"].array, g.index.array)
    assert pos.shape == col.shape == (scene.cells * CORNERS, 3)
    assert index.shape == (scene.cells * TRIANGLE_INDICES,) and index.dtype == np.uint32
    # each box's 36 indices name its own 8 corners and no other box's
    boxes = index.reshape(scene.cells, TRIANGLE_INDICES) // CORNERS
    assert (boxes == np.arange(scene.cells)[:, None]).all()
    assert meshes[0].material.vertexColors == "VertexColors"


def test_every_box_stands_at_its_cells_centre_with_the_scenes_footprint(widget, scene_values):
    scene, _ = scene_values
    pos = child(widget, "cells").geometry.attributes["position"].array.reshape(scene.cells, CORNERS, 3)
    centres = []
    for b in scene.blocks:  # the scene's geometry, written out: x + col_x(c) + 0.5, y − r − 0.5
        for r in range(b.rows):
            for c in range(b.cols):
                gaps = c // b.gap_every * HEAD_GAP if b.gap_every else 0
                centres.append((b.x + c + gaps + 0.5, b.y - r - 0.5))
    centres = np.array(centres)
    np.testing.assert_allclose(pos[:, :, :2].mean(axis=1), centres, atol=1e-3)
    # float32 corners: a difference of two is exact to two units in the last place at the farthest box
    tol = max(1e-4, 2 * float(np.spacing(np.float32(np.abs(pos[:, :, :2]).max()))))
    np.testing.assert_allclose(np.ptp(pos[:, :, 0], axis=1), scene.cell["footprint"], atol=tol)
    np.testing.assert_allclose(np.ptp(pos[:, :, 1], axis=1), scene.cell["footprint"], atol=tol)
    # every box stands on the z = 0 plane (upwards or downwards)
    assert np.allclose(np.minimum(np.abs(pos[:, :, 2].min(1)), np.abs(pos[:, :, 2].max(1))), 0, atol=1e-6)


SAMPLES = {  # kind: block ids to sample cells of
    "value": ["E", "enc.0.self.q", "dec.1.ffn.W_2", "enc.0.self.b_q", "const.sqrt_d"],
    "bar": ["enc.0.self.h0.weights", "dec.1.cross.h2.weights", "out.probs"],
    "masked": ["dec.0.self.h0.masked", "dec.1.self.h3.masked"],
    "relu": ["enc.0.ffn.hidden", "dec.1.ffn.hidden"],
    "bool": ["dec.mask"],
    "ids": ["src.ids", "out.tokens"],
}


def sampled_cells(scene, values):
    rng = np.random.default_rng(7)
    for kind, ids in SAMPLES.items():
        for bid in ids:
            b = scene.block(bid)
            assert b.kind == kind, bid
            picks = {(int(r), int(c)) for r, c in zip(rng.integers(0, b.rows, 12), rng.integers(0, b.cols, 12))}
            # the extremes: the largest |value|, a −∞, a ReLU zero, where the block has one
            a = np.array([[entry(b, values[bid], r, c) for c in range(b.cols)] for r in range(b.rows)])
            finite = np.where(np.isfinite(a), np.abs(a), -1)
            picks.add(tuple(int(i) for i in np.unravel_index(finite.argmax(), a.shape)))
            for special in (~np.isfinite(a), a == 0):
                if special.any():
                    picks.add(tuple(int(i) for i in np.argwhere(special)[0]))
            for r, c in sorted(picks):
                yield b, r, c


def test_sampled_cells_of_every_kind_take_the_palette_rules_colour_and_height(widget, scene_values):
    scene, values = scene_values
    g = child(widget, "cells").geometry
    col = g.attributes["color"].array.reshape(scene.cells, CORNERS, 3)
    pos = g.attributes["position"].array.reshape(scene.cells, CORNERS, 3)
    seen = {"masked -inf": 0, "relu zero": 0, "largest": 0}
    for b, r, c in sampled_cells(scene, values):
        i = cell_index(scene, b.id, r, c)
        colour, h = expected(b, values[b.id], r, c, scene.palette, scene.cell["max_height"])
        np.testing.assert_allclose(col[i], np.tile(colour, (CORNERS, 1)), atol=1e-6, err_msg=f"{b.id}[{r},{c}]")
        z = pos[i, :, 2]
        height = z.max() if abs(z.max()) >= abs(z.min()) else z.min()
        assert height == pytest.approx(h, abs=1e-5), f"{b.id}[{r},{c}]"
        v = entry(b, values[b.id], r, c)
        seen["masked -inf"] += not math.isfinite(v)
        seen["relu zero"] += b.kind == "relu" and v == 0
        seen["largest"] += b.kind in ("value", "relu") and abs(abs(h) - scene.cell["max_height"]) < 1e-5
    assert all(seen.values()), seen
    # the rule's ends are the palette's ends: a value block's largest |value| is an end stop of the map
    e = scene.block("E")
    big = np.unravel_index(np.abs(values["E"]).argmax(), values["E"].shape)
    end = "diverging"
    want = scene.palette[end][-1] if values["E"][big] > 0 else scene.palette[end][0]
    np.testing.assert_allclose(col[cell_index(scene, "E", *big), 0], rgb(want), atol=1e-6)
    assert e.kind == "value"


def test_the_camera_of_a_step_sits_where_the_views_formula_puts_it(widget, scene_values):
    scene, _ = scene_values
    view = next(s.view for s in scene.steps if s.step == 16)
    fov = scene.camera["fov_deg"]  # the scene's, as the stage's camera
    d = fit_distance(view, fov, 800 / 500)
    az, el = view.azimuth, view.elevation
    want = np.array(view.target) + d * np.array(
        [math.cos(el) * math.sin(az), math.sin(el), math.cos(el) * math.cos(az)]
    )
    cam = widget.camera
    assert cam.fov == fov and cam.aspect == pytest.approx(800 / 500)
    np.testing.assert_allclose(cam.position, want, atol=1e-6)
    np.testing.assert_allclose(widget.controls[0].target, view.target, atol=1e-6)
    # the orientation looks at the target (a camera looks down its −z axis), y up
    x, y, z, w = cam.quaternion
    rot = np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )
    forward = rot @ [0, 0, -1]
    to_target = (np.array(view.target) - want) / np.linalg.norm(np.array(view.target) - want)
    np.testing.assert_allclose(forward, to_target, atol=1e-6)
    assert (rot @ [1, 0, 0])[1] == pytest.approx(0, abs=1e-9)  # no roll: the screen's x stays level
    assert (rot @ [0, 1, 0])[1] > 0


def test_without_a_step_the_camera_shows_the_whole_machine_and_a_wrong_step_is_refused(scene_values):
    scene, _ = scene_values
    r = show(42, width=600, height=600)
    d = fit_distance(scene.overview, scene.camera["fov_deg"], 1.0)
    assert np.linalg.norm(np.array(r.camera.position) - scene.overview.target) == pytest.approx(d)
    with pytest.raises(ValueError, match="no step 99"):
        show(42, step=99)


def test_connectors_are_line_segments_of_the_scenes_polylines_in_their_colours(widget, scene_values):
    scene, _ = scene_values
    lines = child(widget, "connectors")
    assert isinstance(lines, p3.LineSegments)
    pos = lines.geometry.attributes["position"].array
    col = lines.geometry.attributes["color"].array
    want = [
        (pt, con.color)
        for con in scene.connectors
        for line in con.lines
        for a, b in zip(line, line[1:])
        for pt in (a, b)
    ]
    assert len(pos) == len(want) > 0
    np.testing.assert_allclose(pos, [p for p, _ in want], atol=1e-4)
    np.testing.assert_allclose(col, [rgb(c) for _, c in want], atol=1e-6)


def test_station_titles_are_sprites_with_the_scenes_words_in_the_overview_only(widget, scene_values):
    scene, _ = scene_values
    sprites = [c for c in show(42).scene.children if isinstance(c, p3.Sprite)]
    titles = [lab.text for lab in scene.labels if lab.role == "station"]
    assert sorted(s.material.map.string for s in sprites) == sorted(titles) and titles
    assert not [c for c in widget.scene.children if isinstance(c, p3.Sprite)]  # a step's close view
    assert len([c for c in show(42, step=16, titles=True).scene.children if isinstance(c, p3.Sprite)]) == len(titles)


def test_the_notebook_draws_the_scene_the_served_page_computes(client, scene_values):
    """The notebook's scene (scene/page_scene.py: the page's code over documents written in Python) is the one
    the page computes from the served trace and the served structure, the input's own parts included, less
    what this trace does not draw (each part's gate, kept in the structure, drawn only while it is off)."""
    from scene.document import scene_from_json
    from scene.notebook import drawn_scene
    from tests.in_page import page_parts

    scene, values = scene_values
    served = drawn_scene(scene_from_json(page_parts(client, ["42"])[0]["scene"]), values)
    threads = [c for c in scene.connectors if c.kind == "thread"]
    assert threads and scene.connectors == served.connectors
    assert [x for x in scene.labels if x.role == "token"] and scene.labels == served.labels
    assert scene.axes and (scene.axes, scene.row_names, scene.worked) == (served.axes, served.row_names, served.worked)
    assert (scene.blocks, scene.steps, scene.overview) == (served.blocks, served.steps, served.overview)
