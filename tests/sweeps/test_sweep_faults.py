"""Faults a real sweep meets, on one machine: a worker node of a multi-node Ray cluster dies
mid-sweep; a trial's loss becomes NaN; the MLflow tracking server (a real `mlflow server`
process over HTTP) goes away while trials finish and comes back. And what counts as the
tracking server not answering (waited for) as opposed to any other error (raised at once)."""

import dataclasses
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest
import requests
from conftest import scaled_timeout
from mlflow.exceptions import MlflowException
from mlflow.protos.databricks_pb2 import RESOURCE_DOES_NOT_EXIST, TEMPORARILY_UNAVAILABLE
from mlflow.tracking import MlflowClient
from sweep_helpers import (
    ONE_EAR,
    TINY,
    child_runs,
    parent_runs,
    printed_resume_command,
    smoke_spec,
    start_script,
    wait_for,
)

from benchmarks.tracking_servers import JOBS_OFF
from sweeps.records import tracking
from sweeps.running.runner import LOCAL_RAY_CONFIG, SweepOptions, check_sweep, run_sweep
from sweeps.running.trainable import NODE_TAG, RESUMED_TAG
from xlt_schema import CONFIG_KEY_TAG, FAILURE_TAG, TRIAL_ID_TAG


def _settings(argv: list[str]) -> list[str]:
    return [value for flag, value in zip(argv[::2], argv[1::2]) if flag == "--set"]


@pytest.mark.slow
def test_worker_node_killed_mid_sweep_and_a_diverging_trial(tmp_path, monkeypatch):
    """Trials on a killed node restart on the other from their checkpoints, reusing their runs;
    a NaN loss fails only its own trial, with the reason on its run."""
    from ray.cluster_utils import Cluster

    monkeypatch.chdir(tmp_path)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    # Long enough for the kill to land mid-training: twenty evaluations, a checkpoint each,
    # some 10 s of training on a quiet machine after the trial's start (six epochs gave the
    # poll a window of about 2 s).
    overrides = [
        *_settings(TINY),
        *_settings(ONE_EAR),
        "seeds=0",
        "epochs=20",
        "max_train_examples=600",
        "evals_per_epoch=1",
    ]
    spec = smoke_spec("ear_xnli", overrides)
    spec = dataclasses.replace(
        spec,
        points=[
            *spec.points,
            # A second EAR configuration that diverges at step 2 (a sweep has one baseline).
            {"method": "ear", "alpha": 1.0, "beta": 0.1, "layer": 2, "learning_rate": 1e30},
        ],
    )
    check_sweep(spec)

    import ray

    # Its nodes run trials at normal priority, as a local sweep's do: at Ray's default
    # niceness (15) the trials got a few per cent of a core beside other work (517 s loaded).
    cluster = Cluster(
        initialize_head=True,
        head_node_args={
            "num_cpus": 0,
            "include_dashboard": False,
            "_system_config": LOCAL_RAY_CONFIG,
        },
    )
    # The driver attaches to the head (the only node yet): Ray refuses to remove the driver's node.
    cluster.connect()
    workers = [cluster.add_node(num_cpus=1) for _ in range(2)]
    cluster.wait_for_nodes()
    outcome = {}
    driver = threading.Thread(
        target=lambda: outcome.update(
            failed=run_sweep(
                spec, SweepOptions(tracking_uri=uri, address=cluster.address, max_failures=2)
            )
        )
    )
    try:
        driver.start()

        def training_run_with_checkpoint():
            """A running, converging trial with a checkpoint that Tune has registered. Keeping
            one checkpoint, the driver deletes a trial's `checkpoint_000000` as it registers
            the next, so a trial folder with a checkpoint but without that one qualifies.
            (Its result.json shows nothing while it trains: Tune writes it at its experiment
            snapshots, which follow Tune's own period since 0.4.0.) The folders are read
            first, so the store is asked only once there is a candidate."""
            assert driver.is_alive(), (
                f"the sweep ended (failed trials: {outcome.get('failed')}) before the poll saw a "
                "training trial with a registered checkpoint: the window closed; train longer"
            )
            registered = [
                folder.name
                for folder in tmp_path.glob("ray_results/*/run_tracked_trial_*")
                if list(folder.glob("checkpoint_*")) and not (folder / "checkpoint_000000").exists()
            ]
            for run in child_runs(uri) if registered else []:
                if (
                    run.info.status == "RUNNING"
                    and float(run.data.params.get("learning_rate", 0)) < 1
                    and any(f"_{run.data.tags[TRIAL_ID_TAG]}_" in name for name in registered)
                ):
                    return run
            return None

        victim = wait_for(
            training_run_with_checkpoint,
            300,
            "a trial with a registered checkpoint",
            interval_s=0.05,
        )
        node = next(w for w in workers if w.node_id == victim.data.tags[NODE_TAG])
        cluster.remove_node(node)
        driver.join(timeout=scaled_timeout(400))
        assert not driver.is_alive(), "the sweep did not finish after the node was killed"
    finally:
        ray.shutdown()
        cluster.shutdown()

    assert outcome["failed"] == 1  # the diverging trial, and only it
    runs = child_runs(uri)
    assert (
        len(runs) == 3 and len({r.data.tags[TRIAL_ID_TAG] for r in runs}) == 3
    )  # nothing duplicated
    diverged = [r for r in runs if float(r.data.params["learning_rate"]) > 1]
    assert len(diverged) == 1 and diverged[0].info.status == "FAILED"
    assert diverged[0].data.tags[FAILURE_TAG].startswith("TrainingDiverged: loss became nan")
    others = [r for r in runs if r not in diverged]
    assert all(r.info.status == "FINISHED" and "test/es/accuracy" in r.data.metrics for r in others)
    restarted = next(r for r in runs if r.info.run_id == victim.info.run_id)
    assert restarted.data.tags[RESUMED_TAG] == "True"
    assert restarted.data.tags[NODE_TAG] != victim.data.tags[NODE_TAG]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start_mlflow_server(root: Path, port: int) -> subprocess.Popen:
    log = open(root / "mlflow-server.log", "a")
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mlflow",
            "server",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            "1",
            "--backend-store-uri",
            f"sqlite:///{root / 'server.db'}",
            "--artifacts-destination",
            str(root / "artifacts"),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, **JOBS_OFF},
        start_new_session=True,
    )

    def healthy():
        try:
            return requests.get(f"http://127.0.0.1:{port}/health", timeout=scaled_timeout(2)).ok
        except requests.exceptions.RequestException:
            return False

    wait_for(healthy, 120, "the MLflow server to answer")
    return server


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=scaled_timeout(30))
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _trial_results(workdir: Path) -> list[dict]:
    """The last result each trial reported to Ray (from Tune's result.json files)."""
    last = []
    for path in workdir.glob("ray_results/*/*/result.json"):
        lines = path.read_text().strip().splitlines()
        if lines:
            last.append(json.loads(lines[-1]))
    return last


@pytest.mark.slow
def test_tracking_server_outage_loses_no_finished_trial(tmp_path):
    port = _free_port()
    server = _start_mlflow_server(tmp_path, port)
    uri = f"http://127.0.0.1:{port}"
    workdir = tmp_path / "work"
    workdir.mkdir()
    # No MLflow-level retries: the sweep's own fallback (results in the Ray checkpoint) is
    # what is tested.
    env = {
        **os.environ,
        "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0",
        "RAY_TMPDIR": tempfile.mkdtemp(prefix="xr", dir="/tmp"),
    }
    driver = start_script(
        workdir,
        "--tracking-uri",
        uri,
        *TINY,
        *ONE_EAR,
        "--set",
        "seeds=0",
        "--set",
        "epochs=3",
        "--set",
        # about 140 steps a trial: long enough that the poll below, over HTTP on a busy
        # machine, sees both trials training before either ends (600 examples, 57 steps,
        # once let both finish unseen)
        "max_train_examples=1500",
        env=env,
    )

    def training():
        runs = child_runs(uri)
        # A trial that ends before the poll saw both training closes the window for good:
        # fail now rather than at the timeout.
        ended = [r.info.run_name for r in runs if r.info.status != "RUNNING"]
        assert not ended and driver.poll() is None, (
            f"trials {ended} ended (driver exit code {driver.poll()}) before the poll saw both "
            "training: the outage window closed; train longer"
        )
        return sum("train/loss" in r.data.metrics for r in runs)

    def unlogged():
        results = _trial_results(workdir)
        return sum(
            bool(r.get("trial_complete")) and r.get("mlflow_logged") is False for r in results
        )

    try:
        wait_for(lambda: training() == 2, 300, "both trials to report a curve point")
        _stop(server)
        wait_for(lambda: unlogged() == 2, 300, "both trials to finish while the server is down")
        server = _start_mlflow_server(tmp_path, port)
        assert driver.wait(timeout=scaled_timeout(300)) == 0, (workdir / "driver.log").read_text()[
            -3000:
        ]
    finally:
        _stop(driver)
        _stop(server)

    stored = f"sqlite:///{tmp_path / 'server.db'}"  # what the server stored, read directly
    client = MlflowClient(stored)
    runs = child_runs(stored)
    assert len(runs) == 2 and all(r.info.status == "FINISHED" for r in runs)
    for run in runs:
        assert {"dev/en/accuracy", "test/es/accuracy", "train/best_step"} <= set(run.data.metrics)
        curve = client.get_metric_history(run.info.run_id, "train/loss")
        assert len(curve) >= 3 and len({point.step for point in curve}) == len(
            curve
        )  # outage points arrived, once each
        assert list(
            (tmp_path / "artifacts").glob(f"*/{run.info.run_id}/artifacts/predictions/test-es.json")
        )
    log = (workdir / "driver.log").read_text()
    assert "from its Ray checkpoint" in log and "Selected configuration" in log


def _interrupt(driver, signum: int, log: Path, code: int, when, what: str) -> None:
    """Send `signum` to the driver alone (as a terminal's Ctrl-C or `kill` would) once `when()`
    holds, and check that it exits with `code`."""
    try:
        wait_for(when, 300, what, interval_s=0.1)
        os.kill(driver.pid, signum)
        assert driver.wait(timeout=scaled_timeout(180)) == code, log.read_text()[-3000:]
    finally:
        _stop(driver)


def _check_interrupted(uri: str, complete: bool = False) -> dict:
    """What every interruption leaves: no report, nothing registered, no RUNNING run, every
    run that is not FINISHED marked `xlt.status=interrupted`; the parent incomplete (KILLED)
    unless its trials had all ended. Returns the FINISHED runs by id."""
    (parent,) = parent_runs(uri)
    client = MlflowClient(uri)
    assert client.list_artifacts(parent.info.run_id, "report") == []
    assert client.search_model_versions("name = 'ear_xnli'") == []
    assert "xlt.reported" not in parent.data.tags
    if complete:
        assert parent.data.tags["xlt.complete"] == "true" and parent.info.status == "FINISHED"
    else:
        assert "xlt.complete" not in parent.data.tags
        assert parent.info.status == "KILLED" and parent.data.tags["xlt.status"] == "interrupted"
    finished = {}
    for run in child_runs(uri):
        if run.info.status == "FINISHED":
            assert "xlt.status" not in run.data.tags
            finished[run.info.run_id] = run
        else:
            assert run.info.status == "KILLED" and run.data.tags["xlt.status"] == "interrupted"
    return finished


@pytest.mark.slow
def test_signals_at_every_moment_then_resume_finishes_with_one_run_per_trial(tmp_path):
    """One sweep (baseline + one EAR configuration, one seed; one trial at a time, so there is
    a moment between trials) stopped four times: SIGINT before the first trial, SIGTERM
    mid-trial, SIGINT between trials, SIGINT during the report. Each time the driver exits
    128 + the signal and prints a `--resume` command; the last one finishes the sweep."""
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    log = tmp_path / "driver.log"
    env = {**os.environ, "RAY_TMPDIR": tempfile.mkdtemp(prefix="xr", dir="/tmp")}
    args = [
        *TINY,
        *ONE_EAR,
        *("--set", "seeds=0", "--set", "epochs=2", "--set", "max_train_examples=400"),
        *("--set", f"cpus_per_trial={os.cpu_count()}"),  # one trial at a time
    ]

    def resume():
        command = printed_resume_command(log.read_text())
        assert command[-1] == "--resume" and command.count("--resume") == 1
        return subprocess.Popen(
            command,
            cwd=tmp_path,
            env=env,
            stdout=open(log, "a"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    # 1. Before the first trial: the parent run exists, no trial has reported.
    driver = start_script(tmp_path, "--tracking-uri", uri, *args, env=env)
    _interrupt(
        driver,
        signal.SIGINT,
        log,
        130,
        lambda: parent_runs(uri),
        "the parent run",
    )
    assert _check_interrupted(uri) == {}

    # 2. Mid-trial: SIGTERM once a trial has reported a curve point.
    _interrupt(
        resume(),
        signal.SIGTERM,
        log,
        143,
        lambda: any("train/loss" in run.data.metrics for run in child_runs(uri)),
        "a trial to report a curve point",
    )
    assert _check_interrupted(uri) == {}
    assert "SIGTERM received" in log.read_text()

    # 3. Between trials: the first has finished, the second not.
    _interrupt(
        resume(),
        signal.SIGINT,
        log,
        130,
        lambda: sum(run.info.status == "FINISHED" for run in child_runs(uri)) == 1,
        "the first trial to finish",
    )
    first = _check_interrupted(uri)
    assert len(first) == 1

    # 4. During the report: every trial ended (the parent is complete), the report not written.
    written = len(log.read_text())
    _interrupt(
        resume(),
        signal.SIGINT,
        log,
        130,
        lambda: "trials of the reported phase finished" in log.read_text()[written:],
        "the report to start",
    )
    assert len(_check_interrupted(uri, complete=True)) == 2

    # Then --resume writes the report; nothing ran twice.
    final = resume()
    assert final.wait(timeout=scaled_timeout(600)) == 0, log.read_text()[-3000:]
    assert "Selected configuration" in log.read_text()[written:]
    runs = child_runs(uri)
    assert len(runs) == 2 and all(run.info.status == "FINISHED" for run in runs)
    assert len({(r.data.tags[CONFIG_KEY_TAG], r.data.params["seed"]) for r in runs}) == 2
    (run_id, before), *_ = first.items()
    after = next(run for run in runs if run.info.run_id == run_id)
    assert after.info.end_time == before.info.end_time  # the first trial was not re-run
    (parent,) = parent_runs(uri)
    assert parent.info.status == "FINISHED" and parent.data.tags["xlt.reported"] == "true"
    assert MlflowClient(uri).list_artifacts(parent.info.run_id, "report")
    # At most one version: a rebuilt report reuses it. (A sweep this small is at chance level,
    # so analysis.sanity usually holds the registration back altogether.)
    assert len(MlflowClient(uri).search_model_versions("name = 'ear_xnli'")) <= 1


class _Flaky:
    """An action that raises `error` the first `failures` times, then returns "done"."""

    def __init__(self, error: BaseException, failures: int):
        self.error, self.failures, self.calls = error, failures, 0

    def __call__(self):
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error
        return "done"


def _no_sleep(monkeypatch) -> list[float]:
    waits = []
    monkeypatch.setattr(tracking.time, "sleep", waits.append)
    return waits


def test_with_retries_raises_a_disk_error_at_once(monkeypatch):
    waits = _no_sleep(monkeypatch)
    action = _Flaky(PermissionError(13, "Permission denied", "mlartifacts/x/model.bin"), 1)
    with pytest.raises(PermissionError):
        tracking.with_retries(action, deadline_s=600, what="trial results")
    assert action.calls == 1 and waits == []


def test_with_retries_waits_for_a_server_that_does_not_answer(monkeypatch):
    waits = _no_sleep(monkeypatch)
    action = _Flaky(requests.exceptions.ConnectionError("connection refused"), 3)
    assert tracking.with_retries(action, deadline_s=600, what="trial results") == "done"
    assert action.calls == 4 and waits == [1.0, 2.0, 4.0]  # exponential backoff


def test_with_retries_gives_up_at_the_deadline(monkeypatch):
    _no_sleep(monkeypatch)
    action = _Flaky(requests.exceptions.Timeout("no answer"), 100)
    with pytest.raises(requests.exceptions.Timeout):
        tracking.with_retries(action, deadline_s=0.5, what="report")
    assert action.calls == 1


def _wrapped(cause: BaseException, error: MlflowException) -> MlflowException:
    """`error` raised while handling `cause`, as MLflow raises its wrappers."""
    try:
        try:
            raise cause
        except type(cause):
            raise error
    except MlflowException as raised:
        return raised


def test_what_counts_as_the_tracking_server_not_answering(monkeypatch):
    import sqlalchemy.exc

    # MlflowClient against a port nobody listens on: the real wrapped connection error.
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again before the request
    with pytest.raises(MlflowException) as down:
        MlflowClient(f"http://127.0.0.1:{port}").get_run("0" * 32)
    assert tracking.is_tracking_outage(down.value)

    def sql_error(message: str) -> MlflowException:
        # MLflow's SQL store wraps sqlalchemy's OperationalError, which wraps sqlite3's.
        try:
            try:
                raise sqlite3.OperationalError(message)
            except sqlite3.OperationalError as dbapi:
                raise sqlalchemy.exc.OperationalError("UPDATE runs", {}, dbapi) from dbapi
        except sqlalchemy.exc.OperationalError as wrapped:
            try:
                raise MlflowException(str(wrapped), error_code=TEMPORARILY_UNAVAILABLE) from wrapped
            except MlflowException as raised:
                return raised

    assert tracking.is_tracking_outage(sql_error("database is locked"))
    assert not tracking.is_tracking_outage(sql_error("disk I/O error"))
    assert tracking.is_tracking_outage(
        MlflowException("503 from the server", error_code=TEMPORARILY_UNAVAILABLE)
    )
    # The server answered and refused: waiting does not help.
    assert not tracking.is_tracking_outage(
        MlflowException("Run '0' not found", error_code=RESOURCE_DOES_NOT_EXIST)
    )
    assert not tracking.is_tracking_outage(
        _wrapped(PermissionError(13, "Permission denied"), MlflowException("could not log"))
    )
    assert not tracking.is_tracking_outage(OSError(28, "No space left on device"))
    assert not tracking.is_tracking_outage(KeyError("dev/en/accuracy"))
