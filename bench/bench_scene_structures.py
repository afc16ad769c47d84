"""What the static build's scene structures cost: `python3 bench/bench_scene_structures.py [--every K]`.

For each model, every (n, m) the page may meet (scene/structure.py `shapes_of`; with --every K, each K-th,
the totals scaled): the time to build a structure document (cold, the structure cache emptied; wall and
CPU), its size as JSON and gzipped (level 9, as the build writes /site/scene/<model>/<n>-<m>.json.gz), and
the count. Then, for a few inputs, the bytes of a served scene that are the input's own (the scene less its
structure), which the browser computes and never downloads. Asserts nothing: read the figures.
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import sys
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.service import scenes as site_scenes  # noqa: E402
from app.service.model_service import ModelService  # noqa: E402
from model import models  # noqa: E402
from scene import build  # noqa: E402
from scene.structure import shapes_of, structure_for_shape  # noqa: E402


def structures(svc: ModelService, every: int) -> None:
    shapes = shapes_of(svc.name)
    times, cpu, raw, gz = [], [], [], []
    for n, m in shapes[::every]:
        build.STRUCTURES.clear()
        t0, c0 = time.perf_counter(), time.process_time()
        doc = structure_for_shape(svc, n, m)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        body = orjson.dumps(doc)
        raw.append(len(body))
        gz.append(len(gzip.compress(body, 9)))
    scale = len(shapes) / len(raw)
    print(
        f"{svc.name}: {len(shapes)} structures; per structure {statistics.median(times) * 1e3:.0f} ms median "
        f"({statistics.median(cpu) * 1e3:.0f} ms of CPU), "
        f"raw {statistics.median(raw) / 1e3:.0f} KB median ({min(raw) / 1e3:.0f}–{max(raw) / 1e3:.0f}), "
        f"gzip {statistics.median(gz) / 1e3:.1f} KB median ({min(gz) / 1e3:.1f}–{max(gz) / 1e3:.1f}); "
        f"all: {sum(times) * scale:.0f} s, raw {sum(raw) * scale / 1e6:.1f} MB, gzip {sum(gz) * scale / 1e6:.1f} MB"
    )


def site_files(svc: ModelService, every: int) -> None:
    """The files the build writes (app/service/scenes.py): each kind's bytes over the sampled shapes (scaled to
    all), and one new input's: the files of its shape that the reader does not hold yet (the base of its n,
    its diff; the same with parts off: one structure per shape, its gates in place)."""
    shapes = shapes_of(svc.name)[::every]
    sizes: dict[str, list[int]] = {}
    for n, m in shapes:
        for path, body in site_scenes.structure_files(svc, n, m):
            kind = path.rsplit("/", 1)[1].split(".", 1)[1] if "-" in path.rsplit("/", 1)[1] else "base"
            sizes.setdefault(kind, []).append(len(body))
    scale = len(shapes_of(svc.name)) / len(shapes)
    # a diff per shape; a base per source length
    count = {"base": len({n for n, _ in shapes_of(svc.name)})}
    per = {k: statistics.median(v) * count[k] if k in count else sum(v) * scale for k, v in sizes.items()}
    diff, base = statistics.median(sizes["diff.json.gz"]), statistics.median(sizes.get("base", [0]) or [0])
    print(
        f"  {svc.name} files: "
        + ", ".join(f"{k} {v / 1e6:.2f} MB" for k, v in per.items())
        + f"; a new input: {diff / 1e3:.1f} KB (its shape's diff), {(diff + base) / 1e3:.1f} KB with a new n's base"
    )


def own_bytes(svc: ModelService, numbers: tuple[int, ...]) -> None:
    """The served scene's bytes beyond its structure's: what personalize adds for each input."""
    for x in numbers:
        scene = orjson.loads(svc.trace_sync(x).body)["scene"]
        n, m = len(scene["axes"]["source"]), len(scene["axes"]["target"])
        doc = structure_for_shape(svc, n, m)
        print(
            f"  {svc.name} {x} ({n}, {m}): scene {len(orjson.dumps(scene)) / 1e3:.0f} KB, structure's scene "
            f"{len(orjson.dumps(doc['scene'])) / 1e3:.0f} KB, the input's own "
            f"{(len(orjson.dumps(scene)) - len(orjson.dumps(doc['scene']))) / 1e3:.1f} KB; personal "
            f"definitions {len(orjson.dumps(doc['personal'])) / 1e3:.1f} KB"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--every", type=int, default=1)
    args = parser.parse_args()
    for name in models.NAMES:
        svc = ModelService.load(model=name)
        structures(svc, args.every)
        site_files(svc, max(args.every, 1))
        own_bytes(svc, (7, 4321, 999999))
