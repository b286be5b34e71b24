"""MLflow layout of a sweep: one parent run per invocation, one nested child run per trial.

Child runs are written from inside the trials (Ray workers), through the tracking URI
alone, so workers on other nodes need no shared file system when the URI is a server.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Mapping

from mlflow.entities import Metric, Param, RunTag
from mlflow.tracking import MlflowClient
from mlflow.utils.mlflow_tags import MLFLOW_PARENT_RUN_ID, MLFLOW_RUN_NAME

DEFAULT_TRACKING_URI = "sqlite:///mlflow.db"
ROLE_TAG = "xlt.role"
TRIAL_ID_TAG = "ray_trial_id"


def resolve_tracking_uri(cli_value: str | None) -> str:
    """--tracking-uri, else MLFLOW_TRACKING_URI, else ./mlflow.db; local SQLite paths are
    made absolute because Ray runs each trial in its own working directory."""
    uri = cli_value or os.environ.get("MLFLOW_TRACKING_URI") or DEFAULT_TRACKING_URI
    if uri.startswith("sqlite:///") and not uri.startswith("sqlite:////"):
        uri = "sqlite:///" + str(Path(uri.removeprefix("sqlite:///")).resolve())
    return uri


def ensure_experiment(client: MlflowClient, name: str, tracking_uri: str) -> str:
    """The experiment's id, creating it when missing (artifacts beside a local SQLite file)."""
    experiment = client.get_experiment_by_name(name)
    if experiment is not None:
        return experiment.experiment_id
    artifact_location = None
    if tracking_uri.startswith("sqlite:///"):
        artifact_location = (Path(tracking_uri.removeprefix("sqlite:///")).parent / "mlartifacts").as_uri()
    return client.create_experiment(name, artifact_location=artifact_location)


def start_parent_run(client: MlflowClient, experiment_id: str, params: Mapping[str, object], tags: Mapping[str, str]) -> str:
    run = client.create_run(experiment_id, tags={ROLE_TAG: "parent", **tags}, run_name=tags.get(MLFLOW_RUN_NAME))
    log_params(client, run.info.run_id, params)
    return run.info.run_id


def find_or_create_trial_run(client: MlflowClient, experiment_id: str, parent_run_id: str, trial_id: str, tags: Mapping[str, str], run_name: str) -> str:
    """The child run of this Ray trial: a restarted trial finds and reuses its run."""
    existing = client.search_runs(
        [experiment_id],
        filter_string=f"tags.`{MLFLOW_PARENT_RUN_ID}` = '{parent_run_id}' and tags.{TRIAL_ID_TAG} = '{trial_id}'",
        max_results=1,
    )
    if existing:
        return existing[0].info.run_id
    run = client.create_run(
        experiment_id,
        tags={MLFLOW_PARENT_RUN_ID: parent_run_id, ROLE_TAG: "trial", TRIAL_ID_TAG: trial_id, **tags},
        run_name=run_name,
    )
    return run.info.run_id


def log_params(client: MlflowClient, run_id: str, params: Mapping[str, object]) -> None:
    client.log_batch(run_id, params=[Param(key, str(value)) for key, value in params.items()])


def log_metrics(client: MlflowClient, run_id: str, metrics: Mapping[str, float], step: int) -> None:
    timestamp = int(time.time() * 1000)
    client.log_batch(run_id, metrics=[Metric(key, float(value), timestamp, step) for key, value in metrics.items()])


def set_tags(client: MlflowClient, run_id: str, tags: Mapping[str, str]) -> None:
    client.log_batch(run_id, tags=[RunTag(key, str(value)) for key, value in tags.items()])
