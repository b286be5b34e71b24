"""Faults a real sweep meets, on one machine: a worker node of a multi-node Ray cluster dies
mid-sweep; a trial's loss becomes NaN; the MLflow tracking server (a real `mlflow server`
process over HTTP) goes away while trials finish and comes back."""

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import requests
from mlflow.tracking import MlflowClient
from sweep_helpers import ONE_EAR, TINY, child_runs, start_script, wait_for

from sweeps.cli import apply_overrides, resolve_paths
from sweeps.presets import PRESETS
from sweeps.runner import SweepOptions, check_sweep, run_sweep
from xlt_core.config import parse_assignments


def _settings(argv: list[str]) -> list[str]:
    return [value for flag, value in zip(argv[::2], argv[1::2]) if flag == "--set"]


def test_worker_node_killed_mid_sweep_and_a_diverging_trial(tmp_path, monkeypatch):
    """Trials on a killed node restart on the other from their checkpoints, reusing their runs;
    a NaN loss fails only its own trial, with the reason on its run."""
    from ray.cluster_utils import Cluster

    monkeypatch.chdir(tmp_path)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    # Long enough (5 evaluations) for the kill to land mid-training.
    overrides = [
        *_settings(TINY),
        *_settings(ONE_EAR),
        "seeds=0",
        "epochs=2",
        "max_train_examples=600",
        "evals_per_epoch=3",
    ]
    spec = PRESETS["ear_xnli"]("smoke", None)
    spec = resolve_paths(apply_overrides(spec, parse_assignments(overrides)))
    spec.points = [
        *spec.points,
        {"method": "finetune", "learning_rate": 1e30},
    ]  # diverges at step 2
    check_sweep(spec)

    import ray

    cluster = Cluster(
        initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False}
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
            """A running, converging trial whose first checkpoint Tune has recorded (the driver
            wrote its result.json line, which it does after registering the checkpoint)."""
            for run in child_runs(uri):
                if (
                    run.info.status == "RUNNING"
                    and float(run.data.params.get("learning_rate", 0)) < 1
                ):
                    for trial_dir in tmp_path.glob(
                        f"ray_results/*/*{run.data.tags['ray_trial_id']}*"
                    ):
                        results = trial_dir / "result.json"
                        if (
                            list(trial_dir.glob("checkpoint_*"))
                            and results.is_file()
                            and results.read_text().strip()
                        ):
                            return run
            return None

        victim = wait_for(
            training_run_with_checkpoint, 300, "a trial with a checkpoint", interval_s=0.2
        )
        node = next(w for w in workers if w.node_id == victim.data.tags["ray_node_id"])
        cluster.remove_node(node)
        driver.join(timeout=400)
        assert not driver.is_alive(), "the sweep did not finish after the node was killed"
    finally:
        ray.shutdown()
        cluster.shutdown()

    assert outcome["failed"] == 1  # the diverging trial, and only it
    runs = child_runs(uri)
    assert (
        len(runs) == 3 and len({r.data.tags["ray_trial_id"] for r in runs}) == 3
    )  # nothing duplicated
    diverged = [r for r in runs if float(r.data.params["learning_rate"]) > 1]
    assert len(diverged) == 1 and diverged[0].info.status == "FAILED"
    assert diverged[0].data.tags["failure"].startswith("TrainingDiverged: loss became nan")
    others = [r for r in runs if r not in diverged]
    assert all(r.info.status == "FINISHED" and "test/es/accuracy" in r.data.metrics for r in others)
    restarted = next(r for r in runs if r.info.run_id == victim.info.run_id)
    assert restarted.data.tags["resumed_from_checkpoint"] == "True"
    assert restarted.data.tags["ray_node_id"] != victim.data.tags["ray_node_id"]


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
        start_new_session=True,
    )

    def healthy():
        try:
            return requests.get(f"http://127.0.0.1:{port}/health", timeout=2).ok
        except requests.exceptions.RequestException:
            return False

    wait_for(healthy, 120, "the MLflow server to answer")
    return server


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
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


def test_tracking_server_outage_loses_no_finished_trial(tmp_path):
    port = _free_port()
    server = _start_mlflow_server(tmp_path, port)
    uri = f"http://127.0.0.1:{port}"
    workdir = tmp_path / "work"
    workdir.mkdir()
    # No MLflow-level retries: the sweep's own fallback (results in the Ray checkpoint) is what is tested.
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
        "max_train_examples=600",
        env=env,
    )
    try:
        both_training = lambda: (
            len(
                [
                    r
                    for r in child_runs(uri)
                    if r.info.status == "RUNNING" and "train/loss" in r.data.metrics
                ]
            )
            == 2
        )
        wait_for(both_training, 300, "both trials to report a curve point")
        _stop(server)
        unlogged = lambda: (
            len(
                [
                    r
                    for r in _trial_results(workdir)
                    if r.get("trial_complete") and r.get("mlflow_logged") is False
                ]
            )
            == 2
        )
        wait_for(unlogged, 300, "both trials to finish while the server is down")
        server = _start_mlflow_server(tmp_path, port)
        assert driver.wait(timeout=300) == 0, (workdir / "driver.log").read_text()[-3000:]
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
