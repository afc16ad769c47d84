"""The scene's measures, in world units (one cell = 1): the gaps of the layout, how a cell is drawn and
what a renderer's camera needs. Both renderers read `CELL` and `CAMERA` from the scene they are sent
(`scene.cell`, `scene.camera`); nothing else writes these numbers."""

from __future__ import annotations

HEAD_GAP = 1  # empty columns between head slices inside a block
V_GAP = 3  # between blocks stacked in a station: room for a label line
H_GAP = 4  # between blocks side by side
HEAD_COL_GAP = 2  # between the columns of two heads
STATION_GAP = 14  # between stations: room for the station's title
LABEL_ROOM = 2.2  # a block's label sits above its top edge; views keep room for it
LABEL_LIFT = 0.45  # how far above its block's top edge a label stands (scene/labels.py)
NAME_ROOM = 0.12  # views keep this share of their larger side for token names left of and under the subject
PART_NAME_ROOM = 0.3  # a part is framed closer: its names take a larger share of it (scene/views.py _name_room)
TOWER_GAP = 24  # between E and each tower
CONNECTOR_Z = 0.2  # connectors run just in front of the blocks' plane
# a cell: its square, its tallest; probabilities, ids and booleans lie flat, a −∞ entry low, and nothing is
# thinner than the minimum; the outline of a row's largest probability, a share of the cell's side
CELL = {
    "footprint": 0.86,
    "max_height": 2.4,
    "head_gap": HEAD_GAP,
    "flat_height": 0.15,
    "masked_height": 0.12,
    "min_height": 0.06,
    "mark_width": 0.14,
}
VIEW_MARGIN = 1.03  # a step's subject fills 1/1.03 of the stage along its tighter dimension
FOV_DEG = 30.0  # both renderers' vertical field of view
FIT_EXTRA = 4.0  # the fit rule steps back this much more, so the nearest cells' heights stay inside the view
EXPLAIN_MARGIN = 1.08  # framing an explained cell's inputs keeps a little more room around them
# what a renderer's camera needs beyond each view: the fit rule's inputs (views.fit_distance)
# a stage whose view of a step draws cells under PART_CELL_PX frames the largest of the step's parts that
# draws them at least this large (scene/views.py _parts): a value printed on a cell needs about 12 px
PART_CELL_PX = 12.0
CAMERA = {
    "fov_deg": FOV_DEG,
    "label_room": LABEL_ROOM,
    "margin": VIEW_MARGIN,
    "fit_extra": FIT_EXTRA,
    "explain_margin": EXPLAIN_MARGIN,
    "part_cell_px": PART_CELL_PX,
}
ELEVATION = 0.08  # enough to see the cells' heights, little enough to keep them square on screen
AZIMUTH = {"src": -0.08, "tgt": 0.08, "shared": 0.0}
