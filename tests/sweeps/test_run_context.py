"""The parent run's system tags and library versions (sweeps/records/run_context.py)."""

import json
import subprocess
import sys
from importlib import metadata

import pytest
from conftest import scaled_timeout
from mlflow.utils.mlflow_tags import MLFLOW_GIT_COMMIT, MLFLOW_GIT_REPO_URL, MLFLOW_SOURCE_NAME
from sweep_helpers import REPO

from sweeps.records import run_context


def test_versions_are_the_installed_ones():
    versions = run_context.library_versions()
    assert versions["xlt.version.mlflow"] == metadata.version("mlflow")
    assert versions["xlt.version.ray"] == metadata.version("ray")
    assert set(versions) == {f"xlt.version.{name}" for name in run_context.LIBRARIES}


def test_a_missing_library_is_said_not_installed(monkeypatch):
    monkeypatch.setattr(run_context, "LIBRARIES", ("no-such-library-xyz",))
    assert run_context.library_versions() == {"xlt.version.no-such-library-xyz": "not installed"}


@pytest.mark.slow
def test_system_tags_carry_the_git_commit_and_the_source():
    # In a fresh interpreter, as a driver runs: MLflow caches the git commit per process, and
    # this session's main file is pytest's.
    script = (
        "import json, sys; sys.argv = [sys.argv[1]]; "
        "from sweeps.records.run_context import system_tags; print(json.dumps(system_tags()))"
    )
    source = run_context.__file__
    printed = subprocess.run(
        [sys.executable, "-c", script, source],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
        timeout=scaled_timeout(60),
    ).stdout
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=REPO
    ).stdout.strip()
    tags = json.loads(printed.splitlines()[-1])
    assert tags[MLFLOW_GIT_COMMIT] == head
    assert tags[MLFLOW_SOURCE_NAME] == source
    assert tags["xlt.version.torch"]


def test_a_token_in_the_git_remote_is_not_tagged(monkeypatch):
    remote = "https://user:ghp_secret123@github.com/lab/xlt.git"
    monkeypatch.setattr(
        "mlflow.tracking.context.registry.resolve_tags", lambda: {MLFLOW_GIT_REPO_URL: remote}
    )
    tags = run_context.system_tags()
    assert "ghp_secret123" not in tags[MLFLOW_GIT_REPO_URL]
    assert tags[MLFLOW_GIT_REPO_URL].endswith("github.com/lab/xlt.git")


def test_trial_runs_inherit_the_parents_source_tags_only():
    parent = {
        MLFLOW_GIT_COMMIT: "abc",
        MLFLOW_SOURCE_NAME: "sweeps/ear_xnli.py",
        "mlflow.user": "ana",
        "mlflow.runName": "ear_xnli-smoke",
        "xlt.role": "parent",
    }
    assert run_context.inherited_source_tags(parent) == {
        MLFLOW_GIT_COMMIT: "abc",
        MLFLOW_SOURCE_NAME: "sweeps/ear_xnli.py",
        "mlflow.user": "ana",
    }
