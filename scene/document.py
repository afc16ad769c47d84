"""The scene document: what the API sends and both renderers draw (serialised with dataclasses.asdict;
the API documents them from these classes). A block's (x, y) is its top-left corner, in world units
(one cell = 1), blocks in the z = 0 plane, y up."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

from scene.measures import CAMERA, VIEW_MARGIN

FORMAT = "anatomy-scene/1"


@dataclass
class Block:
    id: str
    op: str  # the ONNX operator that computed it, or "Parameter"
    kind: str  # how cells are drawn: value | bar | masked | relu | bool | ids
    label: str  # the name on the stage (^{…} superscript, _{…} subscript)
    description: str  # the inspector's first line
    station: str  # id of the station it sits in
    tower: str  # src | tgt | shared
    param: bool
    shape: list[int]  # the tensor's shape
    rows: int  # drawn rows and columns (a vector lies as a row; ids stand as a column)
    cols: int
    x: float
    y: float
    w: float  # drawn width, head gaps included
    gap_every: int = 0  # a gap after every gap_every columns (0: none)
    transposed: bool = False  # drawn as its transpose (cell (r, c) is tensor entry (c, r))
    row_axis: str | None = None  # source | target | vocab: what a row stands for
    col_axis: str | None = None
    value_axis: str | None = None  # vocab: the values are token ids
    inputs: list[str] = field(default_factory=list)
    raw: dict | None = None  # {of, factor, label}: the inspector shows the entry before scaling
    row_stats: bool = False  # the inspector shows the row's mean and standard deviation
    mask: str | None = None  # the boolean tensor that says which cells are masked
    name: str = ""  # the part as a reader counts it: "decoder 2 · cross-attention · head 4" (words.part_name)
    rows_named_by: str | None = None  # the ids column beside it whose token labels name its rows (labels.name_rows)
    # the lowest of the blocks stacked with it over the same token columns (a head's scores under its weights),
    # under which the column names of any of them stand (labels.name_columns)
    cols_named_under: str | None = None
    # a gate's (scene/gates.py): the part it switches off (model/ablation.py's id); drawn only while that part
    # is off, when the trace on show has its node (its place is kept in every structure)
    part: str | None = None


@dataclass
class SliceAlias:
    """A Slice node drawn inside the block it cuts (a head's columns of Q, K or V)."""

    id: str
    of: str
    col_offset: int
    cols: int
    name: str = ""  # the head it belongs to, as a reader counts it: "encoder 1 · self-attention · head 3"


@dataclass
class Station:
    id: str
    title: str
    tower: str
    x: float
    y: float  # top edge
    w: float
    h: float


@dataclass
class Connector:
    kind: str  # thread | rail | arc | tie | loop
    color: str
    # polylines of [x, y, z] points; in a structure, a curve may stand as {from, control, to, segments}, which
    # the page draws (static/compute/curves.js)
    lines: list


@dataclass
class Label:
    text: str
    x: float
    y: float
    size: float  # line height in world units
    role: str  # block | param | station | token
    anchor: str = "left"  # left | center | right
    baseline: str = "bottom"  # bottom | middle
    room: float = 0.0  # the widest it may grow to without running into its neighbour (0: any)
    up: float = 0.0  # the tallest it may grow to without reaching the cells of the block above it (0: any)
    part: str | None = None  # a gate block's label: its block's part, drawn only while that part is off


@dataclass
class View:
    box: list[float]  # [min_x, max_x, min_y, max_y] of what must be seen
    target: list[float]  # the look-at point
    azimuth: float
    elevation: float
    margin: float = VIEW_MARGIN


@dataclass
class SceneStep:
    step: int
    title: str
    subject: list[str]  # block ids the text talks about: lit and framed
    lit: list[str]  # every block lit (subject and context); empty: nothing is dimmed
    view: View
    animation: dict  # {name, …targets}
    # cells outlined, one per row of `block`: the column is row r's value of the node `columns` (an ArgMax)
    marks: list[dict] = field(default_factory=list)
    overlay: dict | None = None  # {name, block}: a drawing beside a block (`loss`: static/stage/lossview.js)
    # smaller parts of the subject, each {blocks, view}, for a stage too small for the whole (scene/views.py _parts)
    parts: list[dict] = field(default_factory=list)


@dataclass
class Switch:
    """A part the reader can switch off (model/ablation.py), and where the stage offers it."""

    id: str  # the part, as /api/trace?ablate= names it
    kind: str  # head | sublayer
    label: str  # what the switch says
    station: str  # the station it belongs to
    block: str | None  # a head: its output block (the switch sits at its label); a sub-layer: None (at its title)
    off: bool  # switched off in this trace (the input's own: a structure has every part on)
    x: float  # where the stage puts the switch: beside the head's label or the station's title
    y: float
    anchor: str  # left | right: which side of the switch (x, y) is
    name: str = ""  # the part as a reader counts it, in full: "decoder 2 · cross-attention · head 4"


@dataclass
class Scene:
    format: str
    config: dict
    cell: dict  # footprint, max_height, head_gap, flat/masked/min heights: how a cell is drawn (both renderers)
    palette: dict
    axes: dict[str, list[str]]  # token lists by axis name
    blocks: list[Block]
    slices: list[SliceAlias]
    stations: list[Station]
    connectors: list[Connector]
    labels: list[Label]
    bounds: list[float]
    overview: View
    steps: list[SceneStep]
    cells: int  # of every block, the gates' kept places included (a trace with every part on draws fewer)
    # what the inspector calls row i of a block whose rows stand for an axis; rows count from 0 everywhere,
    # and a decoder row is named by what it reads and what it writes
    row_names: dict[str, list[str]] = field(default_factory=dict)
    switches: list[Switch] = field(default_factory=list)  # every part that can be switched off, in model order
    lens: list[str] = field(default_factory=list)  # blocks of the logit lens: side nodes, off the forward path
    camera: dict = field(default_factory=lambda: dict(CAMERA))  # field of view and the fit rule's inputs
    # steps 6–9's attention row, the input's own (scene/worked.py): its blocks, row, key and columns
    worked: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return asdict(self)

    def block(self, block_id: str) -> Block:
        return next(b for b in self.blocks if b.id == block_id)


def scene_from_json(doc: dict) -> Scene:
    """A scene document in its JSON form (as the page computes it: scene/page_scene.py) as the classes above;
    keys the classes do not name are left out."""

    def of(cls, d: dict):
        return cls(**{f.name: d[f.name] for f in fields(cls) if f.name in d})

    def step(d: dict) -> SceneStep:
        return of(SceneStep, {**d, "view": of(View, d["view"])})

    lists = {
        "blocks": Block,
        "slices": SliceAlias,
        "stations": Station,
        "connectors": Connector,
        "labels": Label,
        "switches": Switch,
    }
    return of(
        Scene,
        {
            **doc,
            **{k: [of(cls, x) for x in doc.get(k, [])] for k, cls in lists.items()},
            "overview": of(View, doc["overview"]),
            "steps": [step(s) for s in doc["steps"]],
        },
    )
