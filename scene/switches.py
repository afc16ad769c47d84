"""Switches: every part the reader can switch off (model/ablation.py), and where the stage offers it."""

from __future__ import annotations

from model import ids
from model.ablation import parts
from model.transformer import Config
from scene.document import Scene, Switch
from scene.measures import STATION_GAP
from scene.words import station_title

HEAD_SWITCH_LIFT = 1.2  # a head's switch stands this far over its output block's top edge, on its label's line
TITLE_SIDE = 1  # a sub-layer's switch stands this far beyond its station's edge


def switches(scene: Scene, cfg: Config, off: set[str]) -> list[Switch]:
    """A switch per part whose station is drawn: a head's on its output block's label, a sub-layer's on
    its station's title."""
    stations = {s.id: s for s in scene.stations}
    by_id = {b.id: b for b in scene.blocks}
    out = []
    for p in parts(cfg):
        st = stations.get(p.sublayer)
        if st is None:
            continue
        if p.kind == "head":
            b = by_id.get(ids.head_id(p.sublayer, p.head, "out"))
            if b is None:
                continue
            # above the head's output block, right-aligned with it: the label "head N" is at its left
            out.append(
                Switch(
                    p.id,
                    "head",
                    f"head {p.head + 1}",
                    p.sublayer,
                    b.id,
                    p.id in off,
                    b.x + b.w,
                    b.y + HEAD_SWITCH_LIFT,
                    "right",
                    ids.parse(p.id).reader_name(),
                )
            )
        else:
            # the title sits over the station, toward the gap between the towers; the switch on its far side
            left = st.tower == "src"
            out.append(
                Switch(
                    p.id,
                    "sublayer",
                    station_title(p.id),
                    p.sublayer,
                    None,
                    p.id in off,
                    st.x - TITLE_SIDE if left else st.x + st.w + TITLE_SIDE,
                    st.y + STATION_GAP / 2,
                    "right" if left else "left",
                    ids.parse(p.id).reader_name(),
                )
            )
    return out
