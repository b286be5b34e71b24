"""A strategy defined in the tests only (tests/screen_strategy.py, named in XLT_PLUGINS), with
no engine file changed: `--strategy screen` is offered, its dry run prints its phases, and a
tiny sweep runs, is killed during its final phase and resumes it to the report (scripted
scores, tests/scripted_trials.py: nothing trains)."""

import os
import re
import subprocess
import sys
import tempfile

import pytest
from conftest import scaled_timeout, what_went_wrong
from screen_strategy import FINAL, SCREEN, Screen
from scripted_trials import GATE_VARIABLE, GATED_TRIAL
from sweep_helpers import (
    REPO,
    SCRIPT,
    child_runs,
    kill_driver,
    parent_runs,
    resume_sweep,
    start_script,
    wait_for,
)

from sweeps.running.trainable import TRIAL_FUNCTION_ENV
from sweeps.spec.strategy import register_strategy, strategy_names
from xlt_core.errors import ConfigError
from xlt_schema import PHASE_TAG, REPORT_PHASE_TAG

PLUGIN_ENV = {
    "XLT_PLUGINS": "screen_strategy",
    # The repository first: tests/ has folders named like the packages.
    "PYTHONPATH": os.pathsep.join(
        filter(None, [str(REPO), str(REPO / "tests"), os.environ.get("PYTHONPATH")])
    ),
}
ARGS = ["--strategy", SCREEN, "--set", "alpha=1", "--set", "beta=0.1", "--set", "confirm_seeds=0"]


def _script(*args, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        cwd=cwd,
        env={**os.environ, **PLUGIN_ENV},
        capture_output=True,
        text=True,
        timeout=scaled_timeout(120),
    )


def test_a_plugin_strategy_is_offered_and_dry_runs(tmp_path):
    helped = _script("--help", cwd=tmp_path)
    assert helped.returncode == 0, what_went_wrong(helped)
    assert re.search(r"--strategy \{grid,search,[a-z,]*screen\}", helped.stdout)
    planned = _script(*ARGS, "--dry-run", cwd=tmp_path)
    assert planned.returncode == 0, what_went_wrong(planned)
    assert "strategy screen" in planned.stdout
    assert "Screen: 2 configurations x 1 seed = 2 trials" in planned.stdout
    assert "Final: the baseline and the best on dev x 2 seeds = 4 trials" in planned.stdout
    assert "Trials: 6\n" in planned.stdout


def test_a_strategy_without_the_plugin_is_refused_in_one_line(tmp_path):
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *ARGS, "--dry-run"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=scaled_timeout(120),
    )
    assert done.returncode == 2
    assert "invalid choice: 'screen' (choose from 'grid', 'search'" in done.stderr


def test_a_taken_strategy_name_is_refused():
    class Grid(Screen):
        name = "grid"

    with pytest.raises(ConfigError, match="strategy='grid': a name no other strategy has"):
        register_strategy(Grid())
    assert "grid" in strategy_names()


def _final(uri: str, status: str) -> list:
    return [
        run
        for run in child_runs(uri)
        if run.data.tags.get(PHASE_TAG) == FINAL and run.info.status == status
    ]


@pytest.mark.slow
def test_a_plugin_strategy_sweep_is_killed_and_resumed_to_its_report(tmp_path):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    gate = tmp_path / "gate"
    args = [*ARGS, "--tracking-uri", uri, "--set", "seeds=0,1,2", "--set", "log_models=false"]
    ray_tmpdir = tempfile.mkdtemp(prefix="xr", dir="/tmp")  # Ray's socket paths are short
    env = {
        **os.environ,
        **PLUGIN_ENV,
        "RAY_TMPDIR": ray_tmpdir,
        TRIAL_FUNCTION_ENV: GATED_TRIAL,  # seed 2's trials wait for the gate
        GATE_VARIABLE: str(gate),
    }
    driver = start_script(tmp_path, *args, env=env)
    try:
        wait_for(lambda: _final(uri, "RUNNING"), 600, "a running trial of the final phase")
    finally:
        kill_driver(driver, ray_tmpdir)
    screened = {
        r.info.run_id: r.info.end_time for r in child_runs(uri) if r.data.tags[PHASE_TAG] == SCREEN
    }
    assert len(screened) == 2

    gate.touch()
    resumed = resume_sweep(tmp_path, args, env)
    (parent,) = parent_runs(uri)
    assert parent.data.tags[REPORT_PHASE_TAG] == FINAL
    assert parent.data.params["strategy"] == SCREEN
    runs = child_runs(uri)
    # The screen is kept as it ended; each final trial finished once: the baseline and the
    # scripted scores' better configuration (EAR, alpha 1) with every seed.
    assert {r.info.run_id: r.info.end_time for r in runs if r.info.run_id in screened} == screened
    final = [(r.data.params["method"], r.data.params["seed"]) for r in _final(uri, "FINISHED")]
    final.sort()
    assert final == [(m, s) for m in ("ear", "finetune") for s in ("0", "1", "2")]
    assert len(runs) == 2 + 6
    assert "Verdict:" in resumed.stdout and "ear alpha=1" in resumed.stdout
