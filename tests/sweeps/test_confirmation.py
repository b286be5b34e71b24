"""The confirmation phase through the real command (scripted scores, tests/scripted_trials.py):
the driver killed while the selected configuration and the baseline re-run on fresh seeds,
then `--resume`, confirms the same selection, runs no trial twice and decides the verdict on
the fresh seeds."""

import json
import os
import tempfile

import pytest
from scripted_trials import GATE_VARIABLE, GATED_TRIAL
from sweep_helpers import (
    REPO,
    child_runs,
    kill_driver,
    parent_runs,
    resume_sweep,
    start_script,
    wait_for,
)

from sweeps.running.trainable import TRIAL_FUNCTION_ENV
from xlt_schema import CONFIG_KEY_TAG, CONFIRM_PHASE, CONFIRM_POINTS_TAG, PHASE_TAG, STAGE_TAG

pytestmark = pytest.mark.slow


def _confirming(uri: str, status: str) -> list:
    return [
        run
        for run in child_runs(uri)
        if run.data.tags.get(PHASE_TAG) == CONFIRM_PHASE and run.info.status == status
    ]


def test_a_sweep_killed_in_its_confirmation_resumes_the_same_confirmation(tmp_path):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    gate = tmp_path / "gate"
    args = ["--preset", "smoke", "--tracking-uri", uri, "--set", "seeds=0,1"]
    args += ["--set", "log_models=false"]
    ray_tmpdir = tempfile.mkdtemp(prefix="xr", dir="/tmp")  # Ray's socket paths are short
    env = {
        **os.environ,
        "RAY_TMPDIR": ray_tmpdir,
        TRIAL_FUNCTION_ENV: GATED_TRIAL,  # the Ray workers inherit it
        GATE_VARIABLE: str(gate),
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(REPO), str(REPO / "tests"), os.environ.get("PYTHONPATH")])
        ),
    }
    driver = start_script(tmp_path, *args, env=env)
    try:
        wait_for(lambda: _confirming(uri, "RUNNING"), 600, "a running confirmation trial")
    finally:
        kill_driver(driver, ray_tmpdir)
    (parent,) = parent_runs(uri)
    assert parent.data.tags[STAGE_TAG] == CONFIRM_PHASE
    points = json.loads(parent.data.tags[CONFIRM_POINTS_TAG])
    assert [point["method"] for point in points] == ["finetune", "ear"]
    assert points[1]["alpha"] == 1.0  # the scripted scores' better setting
    grid = {
        r.info.run_id: r.info.end_time for r in child_runs(uri) if r.data.tags[PHASE_TAG] == "grid"
    }
    assert len(grid) == 6

    gate.touch()
    resumed = resume_sweep(tmp_path, args, env)
    (parent,) = parent_runs(uri)
    assert json.loads(parent.data.tags[CONFIRM_POINTS_TAG]) == points
    runs = child_runs(uri)
    # The grid's trials are kept as they ended; every confirmation trial finished once.
    assert {r.info.run_id: r.info.end_time for r in runs if r.info.run_id in grid} == grid
    confirmed = _confirming(uri, "FINISHED")
    pairs = sorted((r.data.params["method"], r.data.params["seed"]) for r in confirmed)
    assert pairs == [("ear", "2"), ("ear", "3"), ("finetune", "2"), ("finetune", "3")]
    assert len({(r.data.tags[CONFIG_KEY_TAG], r.data.params["seed"]) for r in confirmed}) == 4
    assert "Decided on the confirmation phase's 2 fresh seeds (2, 3)" in resumed.stdout
