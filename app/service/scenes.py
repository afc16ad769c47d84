"""The static build's scene structures (scene/structure.py), gzipped JSON under
/site/scene/<model>/: per source length n the structure of (n, BASE_ROWS) in full (<n>.json.gz, ~18 KB), and
per graph shape (n source pieces, m decoder rows) its structure as a generic difference from that base
(<n>-<m>.diff.json.gz, ~3.5 KB: app/service/json_diff.py, applied in the browser by static/compute/json_diff.js). A
structure is the same whatever parts are switched off (every part's gate has its place: scene/gates.py), so
these are all the page needs with parts off too. The served app answers the same URLs with the same bytes
(app/routes/scenes.py).

A full build makes about a thousand (every length the limit allows, for both models: snapshots and
switched-off parts write any), 50–80 ms of a core each, so they are made in worker processes, each
loading the models itself (spawned, not forked: torch's thread pool does not survive a fork); a quick
build of a few lengths is made in this process, where a worker's start-up (~5 s) would cost more.
"""

from __future__ import annotations

import gzip
import multiprocessing
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor

from app.service.json_diff import json_diff
from app.serving.serialize import dumps
from app.serving.whole_numbers import whole_number

PARALLEL_FROM = 64  # shapes: fewer are made in this process
MAX_WORKERS = 4

# a shape's structure as its difference from its source length's base (the structure at m = BASE_ROWS: json_diff)
STRUCTURE = ".diff.json.gz"
BASE_ROWS = 1


def scene_path(model: str, n: int, m: int) -> str:
    """Where the scene structure of one graph shape (source length n, m decoder rows) of `model` lies."""
    return f"/site/scene/{model}/{n}-{m}{STRUCTURE}"


def base_path(model: str, n: int) -> str:
    """Where the structure of `model`'s shape (n, BASE_ROWS) lies in full: what each (n, m) file is a diff of."""
    return f"/site/scene/{model}/{n}.json.gz"


class NoSceneFile(LookupError):
    """A scene file name the build writes no file under (the route answers 404)."""


def file_of_name(model: str, file: str) -> tuple[str, int, int]:
    """What the build writes at /site/scene/<model>/<file>: ("base", n, BASE_ROWS) or (STRUCTURE, n, m) of a
    shape scene/structure.py `shapes_of` lists, or NoSceneFile; the model is a shipped one's name (checked by
    the caller)."""
    from scene.structure import shapes_of

    shapes = shapes_of(model)
    n = whole_number(file.removesuffix(".json.gz"), 3)
    if file.endswith(".json.gz") and (n, BASE_ROWS) in shapes:
        return "base", n, BASE_ROWS
    head, sep, tail = file.removesuffix(STRUCTURE).partition("-")
    n, m = whole_number(head, 3), whole_number(tail, 3)
    if file.endswith(STRUCTURE) and sep and (n, m) in shapes:
        return STRUCTURE, n, m
    ns = sorted({n for n, _ in shapes})
    raise NoSceneFile(
        f"no scene file {file[:40]!r} for {model}: the files are <n>.json.gz and <n>-<m>{STRUCTURE}, "
        f"n from {ns[0]} to {ns[-1]} source pieces and m from 1 to the length limit of n's decoder rows"
    )


def _gzip(doc) -> bytes:
    return gzip.compress(dumps(doc), compresslevel=9, mtime=0)


def structure_body(service, n: int, m: int) -> bytes:
    """The structure document of (n, m), gzipped: at base_path(service.name, n) for m = BASE_ROWS."""
    from scene.structure import structure_for_shape

    return _gzip(structure_for_shape(service, n, m))


def diff_body(service, n: int, m: int) -> bytes:
    """The bytes the build writes at scene_path(service.name, n, m): the structure of (n, m) as its
    difference from the base of n (app/service/json_diff.py; the browser's static/compute/json_diff.js applies it)."""
    from scene.structure import structure_for_shape

    return _gzip(json_diff(_base(service, n), structure_for_shape(service, n, m)))


_bases: dict[tuple[str, str, int], dict] = {}  # the base structure of each source length, made once per process


def _base(service, n: int) -> dict:
    from scene.structure import structure_for_shape

    key = (service.name, service.version, n)
    if key not in _bases:
        _bases[key] = structure_for_shape(service, n, BASE_ROWS)
    return _bases[key]


def body_of(service, kind: str, n: int, m: int) -> bytes:
    """The bytes of one file `file_of_name` names."""
    return structure_body(service, n, m) if kind == "base" else diff_body(service, n, m)


def structure_files(service, n: int, m: int) -> list[tuple[str, bytes]]:
    """The shape's files: its structure as a diff of its source length's base, and the base itself for
    m = BASE_ROWS."""
    base = [(base_path(service.name, n), structure_body(service, n, m))] if m == BASE_ROWS else []
    return [*base, (scene_path(service.name, n, m), diff_body(service, n, m))]


_services: dict[str, object] = {}  # a worker's loaded models


def _in_worker(name: str, shapes: list[tuple[int, int]]) -> list[tuple[str, bytes]]:
    from app.service.model_service import ModelService

    if name not in _services:
        _services[name] = ModelService.load(model=name)
    return [f for n, m in shapes for f in structure_files(_services[name], n, m)]


def _in_workers(todo: dict[str, list[tuple[int, int]]], workers: int) -> Iterator[tuple[str, bytes]]:
    # each model's shapes in `workers` interleaved batches (long and short lengths mixed), one task each
    tasks = [(name, shapes[i::workers]) for name, shapes in todo.items() for i in range(workers)]
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        for files in pool.map(_in_worker, *zip(*tasks)):
            yield from files


def scene_files(
    service_of: Callable[[str], object], keep: Callable[[str, int, int], bool] | None = None, workers: int | None = None
) -> tuple[Iterator[tuple[str, bytes]], str]:
    """Each model's scene structure for every graph shape its page may meet (those `keep(model, n, m)`
    takes, when given: a quick build), as (site path, gzip bytes), and "" — or no files and the reason
    when this tree has no scene/structure.py. `service_of(name)`: the model's service, in this process;
    `workers`: processes to make them in (default: one per core, up to 4; 1: in this process)."""
    try:
        from scene.structure import shapes_of
    except ImportError as e:
        return iter(()), f"scene structures not built: scene/structure.py is not in this tree ({e})"
    from model import models

    # a kept shape's diff is read against its source length's base: that base's shape is kept with it
    kept = {name: {(n, m) for n, m in shapes_of(name) if keep is None or keep(name, n, m)} for name in models.NAMES}
    todo = {name: sorted(shapes | {(n, BASE_ROWS) for n, _ in shapes}) for name, shapes in kept.items()}
    workers = workers or min(len(os.sched_getaffinity(0)), MAX_WORKERS)
    if workers > 1 and sum(map(len, todo.values())) >= PARALLEL_FROM:
        return _in_workers(todo, workers), ""
    return (f for name, shapes in todo.items() for n, m in shapes for f in structure_files(service_of(name), n, m)), ""
