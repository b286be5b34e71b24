"""Set-up faults and faults of the report phase end in one line with the right exit code, not
a traceback (issue 41, minor): a disk that fills while the report is written (exit 3, the
`--resume` line), a stop signal once the parent is closed (the `--resume` line, not "nothing
was tracked yet"), a store in a read-only folder (exit 2, for the sweep and for `python -m
analysis report`), a plugin module that is missing or raises (exit 2, naming it)."""

import errno
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import scaled_timeout
from sweep_helpers import SCRIPT
from tracking_stores import tracking_store

import analysis.report
from analysis.__main__ import main as analysis_main
from sweeps import ear_xnli
from sweeps.cli import EXIT_BAD_INPUT, EXIT_CRASHED, main, resolve_paths
from sweeps.records import tracking
from sweeps.running import runner
from sweeps.safety.interruption import SweepInterrupted, signal_behind
from sweeps.spec.experiment import experiment_spec
from xlt_schema import (
    COMPLETE_TAG,
    INTERRUPTED,
    PARENT_ROLE,
    PARENT_RUN_TAG,
    ROLE_TAG,
    RUN_STATUS_TAG,
    SWEEP_KEY_TAG,
    TRIAL_ROLE,
)


def _complete_unreported_sweep(tmp_path) -> tuple[str, str]:
    """A store whose smoke ear_xnli sweep ran every trial but has no report yet (what a stop
    during the report leaves): the URI and the parent run's id."""
    uri = tracking_store(tmp_path)
    client, experiment_id = tracking.open_experiment(uri, "ear_xnli")
    # The key of the sweep `main` builds in this folder (paths made absolute).
    key = runner.sweep_key(resolve_paths(experiment_spec(ear_xnli, "smoke", None)))
    tags = {ROLE_TAG: PARENT_ROLE, SWEEP_KEY_TAG: key, COMPLETE_TAG: "true"}
    parent = client.create_run(experiment_id, tags=tags).info.run_id
    client.set_terminated(parent)
    return uri, parent


def test_a_disk_that_fills_during_the_report_ends_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    uri, _ = _complete_unreported_sweep(tmp_path)

    def full_disk(*args, **kwargs):  # the fault, injected at the report's first write
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp_path / "report.md"))

    monkeypatch.setattr(analysis.report, "report_sweep", full_disk)
    capsys.readouterr()
    assert main(ear_xnli, ["--preset", "smoke", "--tracking-uri", uri, "--resume"]) == EXIT_CRASHED
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "the disk is full ([Errno 28] No space left on device" in lines[0]
    assert err.rstrip().endswith("--resume")


def test_a_signal_once_the_parent_is_closed_names_it_for_resume():
    # Raised as itself, or behind the SystemError Ray's compiled code re-raises it as.
    for raised in (SweepInterrupted(signal.SIGTERM), SystemError("re-raised")):
        behind = SweepInterrupted(signal.SIGTERM)
        with pytest.raises(BaseException) as caught:
            with runner.resumable("parent-1"):
                if isinstance(raised, SystemError):
                    raise raised from behind
                raise raised
        assert signal_behind(caught.value).parent_run_id == "parent-1"


def _sweep_with_a_finished_trial(uri: str, experiment: str, complete: bool) -> None:
    """A parent run, complete (its report writes to it) or interrupted (only read), with one
    finished trial run."""
    client, experiment_id = tracking.open_experiment(uri, experiment)
    tags = {ROLE_TAG: PARENT_ROLE, **({COMPLETE_TAG: "true"} if complete else {})}
    parent = client.create_run(experiment_id, tags=tags).info.run_id
    trial = {PARENT_RUN_TAG: parent, ROLE_TAG: TRIAL_ROLE}
    client.set_terminated(client.create_run(experiment_id, tags=trial).info.run_id)
    if complete:
        client.set_terminated(parent)
    else:
        client.set_tag(parent, RUN_STATUS_TAG, INTERRUPTED)
        client.set_terminated(parent, status="KILLED")


@pytest.fixture
def read_only_store(tmp_path):
    """An MLflow store in a folder this user cannot write: the folder made read-only, or (as
    root, whom file modes do not stop) a read-only bind mount of it."""
    folder, seen = tmp_path / "store", tmp_path / "read-only"
    folder.mkdir()
    uri = tracking_store(folder)
    _sweep_with_a_finished_trial(uri, "ear_xnli", complete=True)
    _sweep_with_a_finished_trial(uri, "ear_pawsx", complete=False)
    if os.geteuid() != 0:
        folder.chmod(0o555)
        yield uri
        folder.chmod(0o755)
        return
    seen.mkdir()
    if (
        shutil.which("mount") is None
        or subprocess.run(
            ["mount", "--bind", "-o", "ro", str(folder), str(seen)], capture_output=True
        ).returncode
    ):
        pytest.skip("root without a read-only bind mount: no read-only folder to test")
    try:
        yield uri.replace(str(folder), str(seen))
    finally:
        # Lazy: a store MLflow still holds open in this process does not keep it mounted.
        subprocess.run(["umount", "--lazy", str(seen)], check=True)


def test_a_sweep_on_a_store_in_a_read_only_folder_exits_2_in_one_line(
    read_only_store, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert main(ear_xnli, ["--preset", "smoke", "--tracking-uri", read_only_store]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: invalid setting --tracking-uri='{read_only_store}': a SQLite")
    assert "this user can write" in err and err.count("\n") == 1


def test_a_report_on_a_store_in_a_read_only_folder_exits_2_in_one_line(
    read_only_store, tmp_path, capsys
):
    capsys.readouterr()
    argv = ["report", "--tracking-uri", read_only_store, "--out", str(tmp_path / "out")]
    assert analysis_main([*argv, "--experiment", "ear_xnli"]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert err.startswith("error: the MLflow database ") and "cannot be written" in err
    assert err.count("\n") == 1
    # An interrupted sweep's report writes nothing to the store: not refused for it.
    analysis_main([*argv, "--experiment", "ear_pawsx"])
    assert "cannot be written" not in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize(
    "plugin, named",
    [
        ("no_such_plugin", "No module named 'no_such_plugin'; is its folder on PYTHONPATH?"),
        ("broken_plugin", "importing broken_plugin raised RuntimeError: half-written"),
    ],
)
def test_a_plugin_that_is_missing_or_raises_exits_2_in_one_line(plugin, named, tmp_path):
    (tmp_path / "broken_plugin.py").write_text('raise RuntimeError("half-written")\n')
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "XLT_PLUGINS": plugin}
    completed = subprocess.run(
        [sys.executable, str(SCRIPT), "--preset", "smoke", "--dry-run"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=scaled_timeout(60),
    )
    assert completed.returncode == EXIT_BAD_INPUT, completed.stderr
    assert completed.stderr.startswith(f"error: invalid setting XLT_PLUGINS='{plugin}'")
    assert named in completed.stderr and completed.stderr.count("\n") == 1
    # Nothing written beside the plugin (no lock, store or results); Python's own bytecode
    # cache of the plugin is written where the environment allows it (make test does).
    written = {path.name for path in Path(tmp_path).iterdir()} - {"__pycache__"}
    assert written == {"broken_plugin.py"}
