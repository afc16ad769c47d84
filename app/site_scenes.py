"""The static build's scene structures (issue 25 part 2, scene/structure.py): one gzipped JSON file per
model and graph shape (n source pieces, m decoder rows), at /site/scene/<model>/<n>-<m>.json.gz.

A full build makes about a thousand (every length the limit allows, for both models: snapshots and
switched-off parts write any), 40–70 ms of a core each, so they are made in worker processes, each
loading the models itself (spawned, not forked: torch's thread pool does not survive a fork); a quick
build of a few lengths is made in this process, where a worker's start-up (~5 s) would cost more.
"""

from __future__ import annotations

import gzip
import multiprocessing
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor

from app.serialize import dumps

PARALLEL_FROM = 64  # shapes: fewer are made in this process
MAX_WORKERS = 4


def scene_path(model: str, n: int, m: int) -> str:
    """Where the scene structure of one graph shape (source length n, m decoder rows) of `model` lies."""
    return f"/site/scene/{model}/{n}-{m}.json.gz"


class NoSceneFile(LookupError):
    """A scene file name the build writes no file under (the route answers 404)."""


def shape_of_file(model: str, file: str) -> tuple[int, int]:
    """The (n, m) whose structure the build writes at /site/scene/<model>/<file>, or NoSceneFile; the model
    is a shipped one's name (checked by the caller)."""
    from scene.structure import shapes_of

    shapes = shapes_of(model)
    head, sep, tail = file.partition("-")
    m_text = tail.removesuffix(".json.gz")
    if sep and m_text != tail and head.isdigit() and m_text.isdigit() and (int(head), int(m_text)) in shapes:
        return int(head), int(m_text)
    ns = sorted({n for n, _ in shapes})
    raise NoSceneFile(f"no scene structure {file[:40]!r} for {model}: the files are <n>-<m>.json.gz, n from "
                      f"{ns[0]} to {ns[-1]} source pieces and m from 1 to the length limit of n's decoder rows")


def structure_body(service, n: int, m: int) -> bytes:
    """The bytes the build writes at scene_path(service.name, n, m): the structure document, gzipped."""
    from scene.structure import structure_for_shape

    return gzip.compress(dumps(structure_for_shape(service, n, m)), compresslevel=9, mtime=0)


def structure_file(service, n: int, m: int) -> tuple[str, bytes]:
    return scene_path(service.name, n, m), structure_body(service, n, m)


_services: dict[str, object] = {}  # a worker's loaded models


def _in_worker(name: str, shapes: list[tuple[int, int]]) -> list[tuple[str, bytes]]:
    from app.service import ModelService

    if name not in _services:
        _services[name] = ModelService.load(model=name)
    return [structure_file(_services[name], n, m) for n, m in shapes]


def _in_workers(todo: dict[str, list[tuple[int, int]]], workers: int) -> Iterator[tuple[str, bytes]]:
    # each model's shapes in `workers` interleaved batches (long and short lengths mixed), one task each
    tasks = [(name, shapes[i::workers]) for name, shapes in todo.items() for i in range(workers)]
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        for files in pool.map(_in_worker, *zip(*tasks)):
            yield from files


def scene_files(service_of: Callable[[str], object], keep: Callable[[str, int, int], bool] | None = None,
                workers: int | None = None) -> tuple[Iterator[tuple[str, bytes]], str]:
    """Each model's scene structure for every graph shape its page may meet (those `keep(model, n, m)`
    takes, when given: a quick build), as (site path, gzip bytes), and "" — or no files and the reason
    when this tree has no scene/structure.py. `service_of(name)`: the model's service, in this process;
    `workers`: processes to make them in (default: one per core, up to 4; 1: in this process)."""
    try:
        from scene.structure import shapes_of
    except ImportError as e:
        return iter(()), f"scene structures not built: scene/structure.py is not in this tree ({e})"
    from model import models

    todo = {name: [(n, m) for n, m in shapes_of(name) if keep is None or keep(name, n, m)] for name in models.NAMES}
    workers = workers or min(len(os.sched_getaffinity(0)), MAX_WORKERS)
    if workers > 1 and sum(map(len, todo.values())) >= PARALLEL_FROM:
        return _in_workers(todo, workers), ""
    return (structure_file(service_of(name), n, m) for name, shapes in todo.items() for n, m in shapes), ""
