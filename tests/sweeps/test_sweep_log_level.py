"""A sweep's -v/-q: the flags, the level and library settings its Ray trial workers are given,
Ray's authentication mode, and the plan that -q still prints (it is the result of --dry-run)."""

import os
import re
import sys
from unittest import mock

import pytest
from sweep_helpers import DEMO_SETTINGS, ONE_EAR, REPO, TINY, run_command, set_arguments
from tracking_stores import tracking_store

from sweeps import ear_xnli
from sweeps.cli import build_parser, main
from sweeps.running import runner
from xlt_core.registry import PLUGINS_VARIABLE
from xlt_schema.log import DEFAULT, LEVEL_VARIABLE, QUIET, VERBOSE, configure


def test_the_sweep_scripts_take_v_and_q():
    parser = build_parser("ear_xnli")
    assert parser.parse_args([]).verbosity == DEFAULT
    assert parser.parse_args(["-q"]).verbosity == QUIET
    assert parser.parse_args(["-v"]).verbosity == VERBOSE


def test_the_workers_log_warnings_and_keep_the_libraries_quiet_unless_verbose(monkeypatch):
    monkeypatch.delenv(PLUGINS_VARIABLE, raising=False)
    monkeypatch.delenv("TRANSFORMERS_VERBOSITY", raising=False)
    for verbosity in (QUIET, DEFAULT):
        configure(verbosity)
        env = runner._worker_env()["env_vars"]
        assert env[LEVEL_VARIABLE] == "WARNING"  # the trials' steps are -v's; warnings show
        assert env["TRANSFORMERS_VERBOSITY"] == "error"
        assert env["HF_HUB_DISABLE_PROGRESS_BARS"] == "1"
        assert env["RAY_LOGGER_LEVEL"] == env["MLFLOW_LOGGING_LEVEL"] == "warning"
    monkeypatch.setenv(PLUGINS_VARIABLE, "my_plugin")
    configure(VERBOSE)
    assert runner._worker_env() == {
        "env_vars": {PLUGINS_VARIABLE: "my_plugin", LEVEL_VARIABLE: "DEBUG"}
    }


def test_a_library_setting_the_user_chose_reaches_the_workers(monkeypatch):
    monkeypatch.setenv("TRANSFORMERS_VERBOSITY", "info")
    configure(DEFAULT)
    assert runner._worker_env()["env_vars"]["TRANSFORMERS_VERBOSITY"] == "info"


def test_a_local_ray_is_asked_for_token_authentication_by_name(monkeypatch):
    # Ray reads the mode when it is imported: only a driver that has not imported it yet.
    # The environment is restored whole afterwards: `_name_token_auth` writes os.environ
    # itself, and monkeypatch does not undo a variable that was absent when it was deleted,
    # so the mode leaked into the next tests of the worker.
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.delitem(sys.modules, "ray", raising=False)
    with mock.patch.dict(os.environ):
        os.environ.pop(runner.RAY_AUTH_MODE_ENV, None)
        runner._name_token_auth("ray://cluster:10001")  # a cluster's mode is its own
        assert runner.RAY_AUTH_MODE_ENV not in os.environ
        runner._name_token_auth(None)
        assert os.environ[runner.RAY_AUTH_MODE_ENV] == "token"
        os.environ[runner.RAY_AUTH_MODE_ENV] = "disabled"  # the user's choice stands
        runner._name_token_auth(None)
        assert os.environ[runner.RAY_AUTH_MODE_ENV] == "disabled"


def test_quiet_still_prints_the_dry_run_plan(capsys):
    assert main(ear_xnli, ["--dry-run"]) == 0
    plan = capsys.readouterr().out
    assert main(ear_xnli, ["--dry-run", "-q"]) == 0
    assert capsys.readouterr().out == plan


@pytest.mark.slow
def test_with_v_the_trials_steps_reach_the_drivers_terminal(tmp_path):
    # Logged in the Ray workers (sweeps/running/trainable.py), forwarded by Ray to the driver; the
    # progress lines of trials starting are -v's too. Two configurations, two seeds (the
    # seed-aware test needs two).
    argv = [str(REPO / "sweeps" / "ear_xnli.py"), "--preset", "smoke", "-v", *TINY, *ONE_EAR]
    tracking_store(tmp_path)
    completed = run_command([*argv, "--set", "seeds=0,1", "--set", "log_models=false"], tmp_path)
    out = completed.stdout
    assert re.search(r"\] step \d+: train/loss=", out), out[-3000:]
    assert re.search(r"\] finished: ", out), out[-3000:]
    assert re.search(r"^\[grid\] trials: 0 ended, \d running, \d pending; ETA after", out, re.M)
    assert "Verdict: " in out and "Logged to parent run " in out


@pytest.mark.slow
def test_a_quiet_sweep_shows_the_verdict_and_paths_and_no_trial_lines(tmp_path):
    argv = [str(REPO / "sweeps" / "ear_xnli.py"), "--preset", "smoke", "-q"]
    tracking_store(tmp_path)
    completed = run_command([*argv, *set_arguments(DEMO_SETTINGS)], tmp_path)
    out = completed.stdout
    assert "Verdict: " in out and "Report files: " in out, out[-3000:]
    assert "] step " not in out and "] finished: " not in out, out[-3000:]
    assert "Selected configuration: " not in out and "trials: " not in out
