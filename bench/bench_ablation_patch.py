"""What an ablated graph's structure costs the static site, in one run: `python3 bench/bench_ablation_patch.py`.

Prints, per model and shape (n source pieces, m decoder rows): the intact structure's and its ablation
patch's size (compact JSON, raw and gzipped; scene/ablated.py ablation_patch_document) and what switching
parts off changes (blocks added and moved, the top bound); then the time static/local/ablated.js takes to
patch a structure under Node, for random sets. Machine load is printed too: on a busy machine every figure
is worse.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from article.tour import load_tour  # noqa: E402
from model import models  # noqa: E402
from model.ablation import parts  # noqa: E402
from model.train import load  # noqa: E402
from recorder import parameters, trace  # noqa: E402
from scene.ablated import ablated_structure, ablation_patch_document  # noqa: E402
from scene.build import _build_structure  # noqa: E402

INPUTS = (7, 305, 482917, 777777)  # the shortest input and the longest among others
TIMING = """
import { readFileSync } from "node:fs";
import { ablatedStructure } from "%s";
const { structure, patch, sets } = JSON.parse(readFileSync(process.argv[2], "utf8"));
for (const s of sets) ablatedStructure(structure, patch, s);  // warm up
const t = performance.now();
for (const s of sets) ablatedStructure(structure, patch, s);
console.log(((performance.now() - t) / sets.length).toFixed(2));
"""


def sizes(doc: dict) -> tuple[int, int]:
    raw = json.dumps(doc, separators=(",", ":")).encode()
    return len(raw), len(gzip.compress(raw, 9))


def js_ms(structure: dict, patch: dict, sets: list[list[str]]) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        case, script = Path(tmp) / "case.json", Path(tmp) / "time.mjs"
        case.write_text(json.dumps({"structure": structure, "patch": patch, "sets": sets}))
        script.write_text(TIMING % (ROOT / "static" / "local" / "ablated.js").as_uri())
        out = subprocess.run(["node", "--no-warnings", str(script), str(case)], capture_output=True, text=True)
        return out.stdout.strip() or out.stderr[-300:]


def main() -> None:
    torch.set_num_threads(1)
    tour, rng = load_tour(), random.Random(0)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for name in models.NAMES:
        model = load(models.weights_path(name))
        params, cfg = parameters(model), model.cfg
        ids = [p.id for p in parts(cfg)]
        for number in INPUTS:
            t = trace(model, number, params)
            base = _build_structure(t, cfg, params, tour)
            patch = ablation_patch_document(t, cfg, params, tour, base)
            (sr, sg), (pr, pg), tree = sizes(base.to_json()), sizes(patch), sizes(patch["layout"])[1]
            every = ablated_structure(base.to_json(), patch, ids)
            sets = [rng.sample(ids, rng.randint(1, len(ids))) for _ in range(50)]
            added, top = len(every["blocks"]) - len(base.blocks), f"{base.bounds[3]:.0f} → {every['bounds'][3]:.0f}"
            per_set = js_ms(base.to_json(), patch, sets)
            print(f"{name:6} n={len(t.source_tokens)} m={len(t.target_tokens)}: structure {sr / 1e3:6.1f} KB "
                  f"({sg / 1e3:4.1f} gz), patch {pr / 1e3:5.1f} KB ({pg / 1e3:4.1f} gz, layout tree {tree / 1e3:.1f}); "
                  f"all {len(ids)} parts off: +{added} blocks, top {top}; JS {per_set} ms a set")

if __name__ == "__main__":
    main()
