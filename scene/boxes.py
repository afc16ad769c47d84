"""A tiny box model for the layout: blocks, horizontal and vertical stacks, spacers. A station is a
tree of these; `measure` sizes it from the blocks' drawn widths and rows (a block the model lacks takes
no room, or, held, only its width) and `place` puts every block at its top-left corner. An item of a
vertical stack stands at its left edge, or, made with `R`, at its right edge."""

from __future__ import annotations

from dataclasses import dataclass, field

from scene.measures import H_GAP, V_GAP


@dataclass
class Node:
    t: str  # b | h | v | s (spacer)
    id: str = ""
    items: list[Node] = field(default_factory=list)
    gap: float = 0
    align: str = "start"  # h: bottom | top; v: left
    flush_right: bool = False  # as an item of a vertical stack: at its right edge (`R`)
    w: float = 0
    h: float = 0
    missing: bool = False


def B(block_id: str, hold: float = 0) -> Node:
    """A block; when the model has no such tensor, `hold` keeps its width free (so columns stay aligned)."""
    return Node("b", id=block_id, w=hold)


def S(w: float) -> Node:
    return Node("s", w=w)


def H(items: list, gap: float = H_GAP, align: str = "bottom") -> Node:
    return Node("h", items=[i for i in items if i], gap=gap, align=align)


def V(items: list, gap: float = V_GAP) -> Node:  # items bottom → top, left-aligned (or `R`: right)
    return Node("v", items=[i for i in items if i], gap=gap)


def R(node: Node) -> Node:
    """A node that stands at the right edge of the vertical stack it is an item of."""
    node.flush_right = True
    return node


def measure(node: Node, dims: dict[str, tuple[float, float]]) -> Node:
    if node.t == "s":
        return node
    if node.t == "b":
        if node.id not in dims and node.w:
            node.t = "s"  # held room
            return node
        node.missing = node.id not in dims
        node.w, node.h = dims.get(node.id, (0, 0))
        return node
    for i in node.items:
        measure(i, dims)
    items = [i for i in node.items if not i.missing]
    node.missing = not any(i.t != "s" for i in items)
    gaps = max(0, len(items) - 1) * node.gap
    if node.t == "h":
        node.w, node.h = sum(i.w for i in items) + gaps, max([i.h for i in items], default=0)
    else:
        node.w, node.h = max([i.w for i in items], default=0), sum(i.h for i in items) + gaps
    return node


def place(node: Node, x: float, y: float, pos: dict[str, tuple[float, float]]) -> None:
    """Places a measured node with its bottom-left corner at (x, y); pos[id] = (x, top y)."""
    if node.missing or node.t == "s":
        return
    if node.t == "b":
        pos[node.id] = (x, y + node.h)
        return
    cur = x if node.t == "h" else y
    for i in node.items:
        if i.missing:
            continue
        if node.t == "h":
            place(i, cur, y + (node.h - i.h if node.align == "top" else 0), pos)
            cur += i.w + node.gap
        else:
            place(i, x + (node.w - i.w if i.flush_right else 0), cur, pos)
            cur += i.h + node.gap


def block_ids(node: Node) -> list[str]:
    if node.t == "b":
        return [] if node.missing else [node.id]
    return [i for item in node.items for i in block_ids(item)]
