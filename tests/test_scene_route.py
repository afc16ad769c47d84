"""GET /site/scene/<model>/<n>-<m>.json.gz (app/scene_route.py): the served app answers the static build's
scene structure URL with the bytes the build writes there; bad models and shapes get JSON errors."""

from __future__ import annotations

import gzip

import orjson

from app.site_scenes import PARTS, ablation_path, patch_bodies, scene_path, structure_body


def test_the_route_answers_the_builds_bytes_at_the_builds_url(client):
    for name, (n, m) in (("2017", (3, 4)), ("modern", (10, 1))):
        r = client.get(scene_path(name, n, m))
        assert r.status_code == 200 and r.headers["content-type"] == "application/gzip"
        svc = client.app.state.models[name].service
        assert r.content == structure_body(svc, n, m)
        doc = orjson.loads(gzip.decompress(r.content))
        assert (doc["model"], doc["n"], doc["m"]) == (name, n, m)
        parts, rest = patch_bodies(svc, n, m)
        assert client.get(scene_path(name, n, m, PARTS)).content == parts
        assert client.get(ablation_path(name)).content == rest
        again = client.get(scene_path(name, n, m), headers={"If-None-Match": r.headers["etag"]})
        assert again.status_code == 304


def test_a_bad_model_or_shape_is_a_json_error(client):
    assert client.get("/site/scene/gpt/3-4.json.gz").status_code == 422
    for file in ("1-4.json.gz", "3-0.json.gz", "3-4.json", "3-4", "x-y.json.gz", "3-999.json.gz",
                 "1-1.parts.json.gz", "ablation.json"):
        r = client.get(f"/site/scene/2017/{file}")
        assert r.status_code == 404, file
        assert "no scene file" in r.json()["detail"]["message"]
