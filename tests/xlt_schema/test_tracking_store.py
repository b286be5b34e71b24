"""The tracking store: two sweeps that create one new SQLite store at the same moment; a
damaged store refused before a sweep, a resume or an analysis reads it."""

import contextlib
import subprocess
import sys

import pytest
from conftest import scaled_timeout
from mlflow.entities import Param
from sweep_helpers import REPO, TINY, child_runs, parent_runs, start_script
from tracking_stores import STORE_FILE, sqlite_uri, tracking_store

from xlt_schema import COMPLETE_TAG, PARENT_RUN_TAG

# What a sweep does with the store as Ray starts: check it, open (and create) it, then write.
SWEEP_START = """
import sys
from sweeps.records.tracking import check_tracking_uri, open_experiment
uri, name = sys.argv[1], sys.argv[2]
check_tracking_uri(uri)
client, experiment_id = open_experiment(uri, name)
client.create_run(experiment_id)
"""


@pytest.mark.slow
def test_two_sweeps_creating_one_new_sqlite_store_together_both_start(tmp_path):
    # Without the lock, MLflow's schema creation races: one of two fails most times
    # ("table ... already exists"; 5 of 6 processes in 3 tries here).
    for attempt in range(3):
        uri = f"sqlite:///{tmp_path}/mlflow-{attempt}.db"
        starts = [
            subprocess.Popen(
                [sys.executable, "-c", SWEEP_START, uri, f"sweep_{k}"],
                cwd=REPO,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            for k in range(2)
        ]
        for start in starts:
            output, _ = start.communicate(timeout=scaled_timeout(120))
            assert start.returncode == 0, output


def test_a_store_that_cannot_be_written_is_refused_before_ray_starts(tmp_path, capsys):
    import shutil

    from sweeps import ear_xnli
    from sweeps.cli import main
    from sweeps.records.tracking import open_experiment

    chattr = shutil.which("chattr")
    database = tmp_path / "mlflow.db"
    uri = f"sqlite:///{database}"
    open_experiment(uri, "sweep")  # creates the store
    capsys.readouterr()
    # Root writes through file modes, so the file is made immutable instead.
    if chattr is None or subprocess.run([chattr, "+i", str(database)]).returncode != 0:
        pytest.skip("chattr +i is not available on this file system")
    try:
        assert main(ear_xnli, ["--tracking-uri", uri, "--set", "seeds=0"]) == 2
    finally:
        subprocess.run([chattr, "-i", str(database)], check=True)
    error = capsys.readouterr().err.strip()
    assert "Traceback" not in error and error.splitlines()[-1].startswith("error: "), error
    assert "a SQLite file this user can write" in error and "readonly" in error


def test_a_new_store_in_a_directory_that_cannot_be_written_is_refused_and_not_created(
    tmp_path, monkeypatch
):
    """A new store's tables are made while Ray starts, so the directory is checked first.
    Root writes anywhere, so the denial is simulated where the check asks for it."""
    import os

    from sweeps.records import tracking
    from xlt_core.errors import ConfigError

    database = tmp_path / "mlflow.db"
    denied = str(tmp_path)
    real_access = os.access
    monkeypatch.setattr(
        tracking.os,
        "access",
        lambda path, mode: False if str(path) == denied else real_access(path, mode),
    )
    with pytest.raises(ConfigError) as refused:
        tracking.check_tracking_uri(f"sqlite:///{database}")
    message = str(refused.value)
    assert "--tracking-uri" in message and "a directory this user can write" in message
    assert denied in message
    assert not database.exists()


def _sweep_with_trials(tmp_path, statuses: list[str]):
    """A parent run and one trial run per status, in a new SQLite store."""
    from mlflow.tracking import MlflowClient

    from sweeps.records import tracking

    uri = f"sqlite:///{tmp_path}/mlflow.db"
    tracking.check_tracking_uri(uri)
    client = MlflowClient(uri)
    experiment_id = tracking.ensure_experiment(client, "sweep", uri)
    parent = tracking.start_parent_run(client, experiment_id, {}, {"xlt.sweep_key": "k"})
    trials = []
    for k, status in enumerate(statuses):
        run_id = tracking.find_or_create_trial_run(
            client, experiment_id, parent, f"t{k}", {}, f"trial {k}"
        )
        if status != "RUNNING":
            client.set_terminated(run_id, status=status)
        trials.append(run_id)
    return client, experiment_id, parent, trials


def test_an_interruption_marks_only_the_running_trials_and_the_parent(tmp_path):
    from sweeps.records import tracking

    client, _, parent, trials = _sweep_with_trials(
        tmp_path, ["RUNNING", "FINISHED", "FAILED", "RUNNING"]
    )
    assert tracking.mark_interrupted(client, parent) == 2
    runs = {run_id: client.get_run(run_id) for run_id in [parent, *trials]}
    for run_id in (parent, trials[0], trials[3]):
        assert runs[run_id].info.status == "KILLED"
        assert runs[run_id].data.tags["xlt.status"] == "interrupted"
    for run_id, status in ((trials[1], "FINISHED"), (trials[2], "FAILED")):
        assert runs[run_id].info.status == status and "xlt.status" not in runs[run_id].data.tags

    tracking.continue_run(client, runs[trials[0]])  # what --resume does with the run
    resumed = client.get_run(trials[0])
    assert resumed.info.status == "RUNNING" and "xlt.status" not in resumed.data.tags


def test_resume_finds_a_parent_with_trials_or_the_report_left(tmp_path):
    from sweeps.records import tracking

    client, experiment_id, parent, _ = _sweep_with_trials(tmp_path, ["FINISHED"])

    def resumable():
        found = tracking.find_resumable_parent(client, experiment_id, "k")
        return found.info.run_id if found else None

    assert resumable() == parent  # trials not all ended
    tracking.set_tags(client, parent, {"xlt.complete": "true"})
    client.set_terminated(parent, status="FINISHED")
    assert resumable() == parent  # the report is missing (interrupted while it was written)
    tracking.set_tags(client, parent, {"xlt.reported": "true"})
    assert resumable() is None
    client.delete_tag(parent, "xlt.reported")
    client.set_terminated(parent, status="FAILED")  # no trial finished: no report to write
    assert resumable() is None


@pytest.mark.slow
def test_two_smoke_sweeps_started_together_on_a_fresh_store_both_finish(tmp_path):
    """Issue 13's case end to end: two whole smoke sweeps (each its own local Ray) started at
    the same moment on one SQLite URI that does not exist yet; both exit 0 and each leaves
    one complete parent with its six trials finished. They are two experiments: a second
    driver of the same experiment is refused (one writer per sweep: test_driver_lock.py)."""
    uri = sqlite_uri(tmp_path)
    experiments = ("ear_xnli", "ear_dictionary_scale")
    drivers = []
    for experiment in experiments:
        workdir = tmp_path / experiment
        workdir.mkdir()
        script = REPO / "sweeps" / f"{experiment}.py"
        args = ("--tracking-uri", uri, "--set", "seeds=0,1", *TINY)
        drivers.append(start_script(workdir, *args, script=script))
    for driver, experiment in zip(drivers, experiments):
        assert driver.wait(timeout=scaled_timeout(600)) == 0, (
            tmp_path / experiment / "driver.log"
        ).read_text()[-3000:]
    parents = [parent for name in experiments for parent in parent_runs(uri, name)]
    assert len(parents) == 2
    assert all(parent.data.tags.get(COMPLETE_TAG) == "true" for parent in parents)
    finished = [
        run
        for name in experiments
        for run in child_runs(uri, name)
        if run.info.status == "FINISHED"
    ]
    for parent in parents:
        own = [r for r in finished if r.data.tags[PARENT_RUN_TAG] == parent.info.run_id]
        assert len(own) == 6  # 3 configurations x 2 seeds


@pytest.fixture(scope="module")
def mlflow_store(tmp_path_factory):
    """An MLflow SQLite store with a sweep's worth of runs: pages of params past the ones
    that hold the experiments table (which the old pre-check read alone)."""
    from sweeps.records.tracking import open_experiment

    directory = tmp_path_factory.mktemp("store")
    client, experiment_id = open_experiment(tracking_store(directory), "sweep")
    for k in range(40):
        run_id = client.create_run(experiment_id).info.run_id
        client.log_batch(run_id, params=[Param(f"p{j}", "v" * 200) for j in range(10)])
    return directory / STORE_FILE


def _damaged_copy(store, tmp_path, damage: str = "page"):
    """A copy of `store` damaged as a bad disk leaves it: the first page of its params table
    overwritten (`page`: reading it fails), or a wrong freelist count in its header
    (`header`: `PRAGMA quick_check` reports it). Its experiments table still reads."""
    import shutil
    import sqlite3

    database = tmp_path / "mlflow.db"
    shutil.copy(store, database)
    with contextlib.closing(sqlite3.connect(database)) as connection:
        (page_size,) = connection.execute("PRAGMA page_size").fetchone()
        (root,) = connection.execute(
            "select rootpage from sqlite_master where type = 'table' and name = 'params'"
        ).fetchone()
    with open(database, "r+b") as file:
        if damage == "page":
            file.seek((root - 1) * page_size)
            file.write(b"\xff" * page_size)
        else:
            file.seek(36)  # the header's count of free pages (the store has none)
            file.write((7).to_bytes(4, "big"))
    with contextlib.closing(sqlite3.connect(database)) as connection:  # the old pre-check's read
        assert connection.execute("select count(*) from experiments").fetchone()[0] >= 1
    return database


@pytest.mark.parametrize("resume", [False, True])
@pytest.mark.parametrize("damage", ["page", "header"])
def test_a_damaged_store_is_refused_in_one_line_before_ray_starts(
    mlflow_store, tmp_path, capsys, monkeypatch, resume, damage
):
    from sweeps import ear_xnli
    from sweeps.cli import main
    from sweeps.running import runner

    database = _damaged_copy(mlflow_store, tmp_path, damage)
    monkeypatch.setattr(runner, "run_sweep", _ray_must_not_start)
    argv = ["--tracking-uri", f"sqlite:///{database}", "--set", "seeds=0"]
    assert main(ear_xnli, argv + (["--resume"] if resume else [])) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and error.startswith("error: "), error
    assert f"{database} is damaged" in error


def test_a_file_of_random_bytes_is_refused_in_one_line(tmp_path, capsys, monkeypatch):
    from sweeps import ear_xnli
    from sweeps.cli import main
    from sweeps.running import runner

    database = tmp_path / "mlflow.db"
    database.write_bytes(bytes(range(256)) * 400)
    monkeypatch.setattr(runner, "run_sweep", _ray_must_not_start)
    assert main(ear_xnli, ["--tracking-uri", f"sqlite:///{database}", "--resume"]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1, error
    assert f"{database} is not a SQLite database (file is not a database)" in error


def _ray_must_not_start(*args, **kwargs):
    raise AssertionError("the sweep went on to Ray with a damaged store")


@pytest.mark.parametrize("command", ["report", "compare"])
def test_analysis_of_a_damaged_store_prints_one_line(mlflow_store, tmp_path, capsys, command):
    from analysis.__main__ import main

    database = _damaged_copy(mlflow_store, tmp_path)
    which = ["--experiment", "sweep"] if command == "report" else ["--experiments", "sweep"]
    code = main([command, *which, "--tracking-uri", f"sqlite:///{database}"])
    error = capsys.readouterr().err.strip()
    assert code == 2 and len(error.splitlines()) == 1, error
    assert error.startswith(f"error: the MLflow database {database} is damaged"), error
