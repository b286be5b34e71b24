"""The tracking server keeps every point concurrent trials log: a real `mlflow server` on
loopback over a real PostgreSQL (started here with Debian's initdb / pg_ctl, stopped after;
skipped with the reason where PostgreSQL or its driver is missing) and over SQLite, driven
by simulated trials (benchmarks/tracking_load.py; the figures are in docs/tracking-load.md).
Nothing here asserts on a timing: that depends on the machine and its load."""

import sys
from pathlib import Path

import pytest
from tracking_stores import tracking_store

REPO = Path(__file__).resolve().parents[2]
# `benchmarks` is a folder of the repository, not an installed package.
sys.path.insert(0, str(REPO))

from benchmarks.tracking_load import (  # noqa: E402
    CURVE_KEYS,
    TrialLog,
    curve_value,
    lost_points,
    run_load,
)
from benchmarks.tracking_servers import postgres_unavailable, tracking_server  # noqa: E402

TRIALS, EVALUATIONS = 8, 15


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["postgresql", "sqlite"])
def test_server_keeps_every_point_of_concurrent_trials(backend, tmp_path):
    if backend == "postgresql" and (reason := postgres_unavailable()):
        pytest.skip(reason)
    # Two server workers, not the head's four: two processes writing one store are already
    # concurrent, and each worker costs an MLflow import at start on a two-core CI machine.
    with tracking_server(backend, tmp_path, workers=2) as uri:
        result = run_load(uri, TRIALS, EVALUATIONS, interval_s=0.2, time_limit_s=120)
    assert result.errors == []
    assert result.problems == []
    assert result.calls == TRIALS * EVALUATIONS
    assert len(result.latencies_s) == TRIALS * EVALUATIONS


def test_lost_points_names_what_the_store_does_not_hold(tmp_path):
    """The check the load test relies on can fail: a run left RUNNING, a point acknowledged
    but absent, a wrong value, a point never logged."""
    from mlflow.tracking import MlflowClient

    from sweeps.records.tracking import log_metrics

    uri = tracking_store(tmp_path)
    client = MlflowClient(uri)
    run_id = client.create_run(client.create_experiment("check")).info.run_id
    point = {key: curve_value(1, 1, index) for index, key in enumerate(CURVE_KEYS)}
    point[CURVE_KEYS[-1]] += 1  # stored under the right key and step, with a wrong value
    log_metrics(client, run_id, point, step=1)

    claimed = TrialLog(trial=1, run_id=run_id, attempted=[1, 2], acknowledged=[1, 2])
    running, *per_key = lost_points(uri, [claimed])
    assert running == f"trial 1: run {run_id} is RUNNING"
    assert len(per_key) == len(CURVE_KEYS)
    assert all("missing steps [2]" in problem for problem in per_key)
    assert "wrong values at [1]" in per_key[-1]
    assert all("wrong values at []" in problem for problem in per_key[:-1])

    client.set_terminated(run_id)
    nothing_logged = TrialLog(trial=1, run_id=run_id)
    assert all("never logged [1]" in problem for problem in lost_points(uri, [nothing_logged]))
    truthful = TrialLog(trial=1, run_id=run_id, attempted=[1], acknowledged=[1])
    assert lost_points(uri, [truthful]) == [
        f"trial 1 {CURVE_KEYS[-1]}: 1 points stored, 1 acknowledged; missing steps [], "
        "never logged [], 0 duplicated, wrong values at [1]"
    ]


def test_missing_postgresql_is_a_reason_to_skip(tmp_path, monkeypatch):
    from benchmarks import tracking_servers

    monkeypatch.setattr(tracking_servers, "DEBIAN_POSTGRES", tmp_path)  # no <version>/bin
    monkeypatch.setenv("PATH", str(tmp_path))  # no initdb on the PATH either
    assert "PostgreSQL is not installed" in postgres_unavailable()
