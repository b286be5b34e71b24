"""A sweep's -v/-q: the flags, the level its Ray trial workers are given, and the plan that
-q still prints (it is the result of --dry-run)."""

import re

import pytest
from sweep_helpers import DEMO_SETTINGS, REPO, run_command, set_arguments
from tracking_stores import tracking_store

from sweeps import ear_xnli, runner
from sweeps.cli import build_parser, main
from xlt_core.registry import PLUGINS_VARIABLE
from xlt_schema.log import DEFAULT, LEVEL_VARIABLE, QUIET, VERBOSE, configure


def test_the_sweep_scripts_take_v_and_q():
    parser = build_parser("ear_xnli")
    assert parser.parse_args([]).verbosity == DEFAULT
    assert parser.parse_args(["-q"]).verbosity == QUIET
    assert parser.parse_args(["-v"]).verbosity == VERBOSE


def test_the_workers_get_the_drivers_level_when_it_is_not_the_default(monkeypatch):
    monkeypatch.delenv(PLUGINS_VARIABLE, raising=False)
    configure(DEFAULT)
    assert runner._worker_env() is None  # trials log at INFO by themselves
    configure(QUIET)
    assert runner._worker_env() == {"env_vars": {LEVEL_VARIABLE: "WARNING"}}
    monkeypatch.setenv(PLUGINS_VARIABLE, "my_plugin")
    configure(VERBOSE)
    assert runner._worker_env() == {
        "env_vars": {PLUGINS_VARIABLE: "my_plugin", LEVEL_VARIABLE: "DEBUG"}
    }


def test_quiet_still_prints_the_dry_run_plan(capsys):
    assert main(ear_xnli, ["--dry-run"]) == 0
    plan = capsys.readouterr().out
    assert main(ear_xnli, ["--dry-run", "-q"]) == 0
    assert capsys.readouterr().out == plan


@pytest.mark.slow
def test_the_trials_lines_reach_the_drivers_terminal(ear_xnli_smoke):
    # Logged in the Ray workers (sweeps/trainable.py), forwarded by Ray to the driver.
    out = ear_xnli_smoke.completed.stdout
    assert re.search(r"\] step \d+: train/loss=", out), out[-3000:]
    assert re.search(r"\] finished: ", out), out[-3000:]
    assert "Selected configuration: " in out


@pytest.mark.slow
def test_a_quiet_sweep_shows_the_verdict_and_paths_and_no_trial_lines(tmp_path):
    argv = [str(REPO / "sweeps" / "ear_xnli.py"), "--preset", "smoke", "-q"]
    tracking_store(tmp_path)
    completed = run_command([*argv, *set_arguments(DEMO_SETTINGS)], tmp_path)
    out = completed.stdout
    assert "Verdict: " in out and "Report files: " in out, out[-3000:]
    assert "] step " not in out and "] finished: " not in out, out[-3000:]
    assert "Selected configuration: " not in out and "trials: " not in out
