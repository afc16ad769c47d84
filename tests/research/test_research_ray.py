"""The research desk on a Ray cluster (`python -m research … --ray ADDRESS|local`): the same records, weights
and view files as a local run, and a stale run (an older length) never mixed into an experiment's table."""

from __future__ import annotations

import json

import pytest
import torch

from research import harness
from research.__main__ import main
from research.experiment_kit import SMOKE

TIMING = ("wall_seconds", "train_seconds", "threads", "torch")


def _runs(folder) -> dict[str, dict]:
    runs = json.loads((folder / "extrapolation.json").read_text())["runs"]
    return {r["key"]: {k: v for k, v in r.items() if k not in TIMING} for r in runs}


def test_a_run_trained_elsewhere_comes_back_whole(tmp_path):
    """What a Ray task returns (record and weights' bytes) is what a local run stores."""
    spec = harness.RunSpec(
        "extrapolation",
        "learned",
        1,
        SMOKE["steps"],
        {"positional": "learned"},
        dict(SMOKE["train"]),
        None,
        SMOKE["heldout_size"],
    )
    record, weights = harness.train_elsewhere(spec)
    local = harness.execute(spec, tmp_path)
    assert {k: v for k, v in record.items() if k not in TIMING} == {k: v for k, v in local.items() if k not in TIMING}
    (tmp_path / "remote.pt").write_bytes(weights)
    remote_state = torch.load(tmp_path / "remote.pt", weights_only=True)
    local_state = torch.load(harness.weights_path(tmp_path, spec.key()), weights_only=True)
    assert remote_state.keys() == local_state.keys()
    assert all(torch.equal(remote_state[k], local_state[k]) for k in local_state)


def test_runs_the_specs_no_longer_ask_for_are_dropped(tmp_path):
    def spec(steps):
        return harness.RunSpec("alignment", "baseline", 1, steps, {}, dict(SMOKE["train"]), None, 8)

    harness.run_specs([spec(2)], tmp_path, "alignment", progress=False)
    runs = harness.run_specs([spec(3)], tmp_path, "alignment", progress=False)
    on_disk = harness.read_runs(tmp_path / "alignment.json")
    assert [r["steps"] for r in runs] == [r["steps"] for r in on_disk] == [3]


def test_the_ray_path_writes_the_same_results_as_the_local_one(tmp_path):
    ray = pytest.importorskip("ray", reason="Ray is optional: pip install -e '.[research]' to run this test")
    assert main(["extrapolation", "--smoke", "--seeds", "2", "--out", str(tmp_path / "local"), "--quiet"]) == 0
    try:
        ray.init(
            num_cpus=2,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
            runtime_env=harness.ray_runtime_env(),
        )
    except Exception as e:  # a machine too loaded for Ray's start-up deadlines (its raylet waits 15 s for agents)
        pytest.skip(f"Ray could not start a local instance here: {str(e)[:160]}")
    try:
        assert (
            main(
                [
                    "extrapolation",
                    "--smoke",
                    "--seeds",
                    "2",
                    "--ray",
                    "local",
                    "--out",
                    str(tmp_path / "ray"),
                    "--quiet",
                ]
            )
            == 0
        )
    finally:
        ray.shutdown()
    local, remote = _runs(tmp_path / "local"), _runs(tmp_path / "ray")
    assert len(local) == 8 and local == remote  # every record, key for key, timings aside
    for key in local:
        a = torch.load(tmp_path / "local" / "cache" / f"{key}.pt", weights_only=True)
        b = torch.load(tmp_path / "ray" / "cache" / f"{key}.pt", weights_only=True)
        assert all(torch.equal(a[k], b[k]) for k in a)
    views = [json.loads((tmp_path / d / "views" / "extrapolation.json").read_text()) for d in ("local", "ray")]
    assert views[0] == views[1]
