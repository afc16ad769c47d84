"""GET /site/scene/<model>/<n>-<m>.json.gz (app/routes/scenes.py): the served app answers the static build's
scene structure URL with the bytes the build writes there; bad models and shapes get JSON errors."""

from __future__ import annotations

import copy
import gzip
import json
import subprocess
from pathlib import Path

import orjson

from app.service.json_diff import json_patched
from app.service.scenes import BASE_ROWS, base_path, scene_path, structure_body

ROOT = Path(__file__).resolve().parents[2]


def test_the_route_answers_the_builds_bytes_at_the_builds_url(client):
    for name, (n, m) in (("2017", (3, 4)), ("modern", (10, 1))):
        r = client.get(scene_path(name, n, m))
        assert r.status_code == 200 and r.headers["content-type"] == "application/gzip"
        svc = client.app.state.models[name].service
        base = client.get(base_path(name, n))
        assert base.content == structure_body(svc, n, BASE_ROWS)
        doc = json_patched(orjson.loads(gzip.decompress(base.content)), orjson.loads(gzip.decompress(r.content)))
        assert doc == orjson.loads(gzip.decompress(structure_body(svc, n, m)))
        assert (doc["model"], doc["n"], doc["m"]) == (name, n, m)
        again = client.get(scene_path(name, n, m), headers={"If-None-Match": r.headers["etag"]})
        assert again.status_code == 304


def test_a_bad_model_or_shape_is_a_json_error(client):
    assert client.get("/site/scene/gpt/3-4.json.gz").status_code == 422
    for file in (
        "1-4.json.gz",
        "3-0.json.gz",
        "3-4.json",
        "3-4",
        "x-y.json.gz",
        "3-999.json.gz",
        "1-1.parts.json.gz",
        "3-4.parts.json.gz",
        "ablation.json.gz",
        "1.json.gz",
        "3-4.json.gz",
    ):
        r = client.get(f"/site/scene/2017/{file}")
        assert r.status_code == 404, file
        assert "no scene file" in r.json()["detail"]["message"]


def test_a_structure_is_its_base_and_its_difference_in_both_languages(client, tmp_path):
    """Python's json_patched and the browser's jsonPatched (under Node) give each shape's structure exactly,
    key order included, from the files the build writes; a planted change in a difference is seen."""
    svc = client.app.state.service
    shapes = [(2, 1), (2, 7), (6, 30), (10, 60)]
    files = {
        f"{n}-{m}": [
            orjson.loads(gzip.decompress(client.get(u).content))
            for u in (base_path("2017", n), scene_path("2017", n, m))
        ]
        for n, m in shapes
    }
    planted = copy.deepcopy(files["6-30"])
    planted[1]["d"]["m"] = {"v": 31}
    files["planted"] = planted
    (tmp_path / "in.json").write_bytes(orjson.dumps(files))
    script = (
        "import { readFileSync, writeFileSync } from 'node:fs';"
        f"import {{ jsonPatched }} from '{ROOT / 'static/compute/json_diff.js'}';"
        "const cases = JSON.parse(readFileSync(process.argv[1], 'utf8'));"
        "writeFileSync(process.argv[2], JSON.stringify(Object.fromEntries("
        "Object.entries(cases).map(([k, [b, d]]) => [k, jsonPatched(b, d)]))));"
    )
    subprocess.run(
        ["node", "--input-type=module", "-e", script, str(tmp_path / "in.json"), str(tmp_path / "out.json")],
        check=True,
        timeout=60,
    )
    out = json.loads((tmp_path / "out.json").read_text())
    for n, m in shapes:
        want = orjson.loads(gzip.decompress(structure_body(svc, n, m)))
        assert json_patched(*files[f"{n}-{m}"]) == want
        assert out[f"{n}-{m}"] == want and key_order(out[f"{n}-{m}"]) == key_order(want)
    assert out["planted"]["m"] == 31 != orjson.loads(gzip.decompress(structure_body(svc, 6, 30)))["m"]


def key_order(x) -> list:
    """Every object's keys, in order, depth first."""
    if isinstance(x, dict):
        return [list(x), *(key_order(v) for v in x.values())]
    return [key_order(v) for v in x] if isinstance(x, list) else []
