"""A JSON value as its difference from another (the static build's scene structures: app/service/scenes.py writes
each shape's structure as its difference from the structure of the same source length at one row, about 3 KB
gzipped instead of 18). Generic: it knows nothing of scenes; exact: `json_patched(a, json_diff(a, b)) == b`,
types, floats and key order included. static/compute/json_diff.js `jsonPatched` is the same rule (tests).

A difference is None (equal) or one of {"v": b} (b as it is), {"d": {key: difference}} (an object with a's
keys in a's order, only those that differ named), {"l": [[index, difference], …]} (a list of a's length).
"""

from __future__ import annotations


def json_diff(a, b) -> dict | None:
    """What turns `a` into `b`: None when they are equal (as JSON: an int is not a float)."""
    if type(a) is type(b) and a == b:
        return None
    if isinstance(a, dict) and isinstance(b, dict) and list(a) == list(b):
        return {"d": {k: d for k in a if (d := json_diff(a[k], b[k])) is not None}}
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return {"l": [[i, d] for i, (x, y) in enumerate(zip(a, b, strict=True)) if (d := json_diff(x, y)) is not None]}
    return {"v": b}


def json_patched(a, diff: dict | None):
    """`a` with `diff` applied (json_diff's inverse); `a` is not changed."""
    if diff is None:
        return a
    if "v" in diff:
        return diff["v"]
    if "d" in diff:
        return {k: json_patched(v, diff["d"].get(k)) for k, v in a.items()}
    out = list(a)
    for i, d in diff["l"]:
        out[i] = json_patched(out[i], d)
    return out
