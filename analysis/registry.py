"""Register the selected configuration's model in the MLflow model registry (client API only).

A trial logs its trained model as the `save_pretrained` folder `model/` of its run when
the sweep asks for it (``log_models``). The registry then points a new model version at
that folder and moves the alias (``champion``) to it. MLflow's SQL registry stores the
source URI as given and needs no MLmodel file, so a plain Transformers folder works; the
model is loaded back with ``from_pretrained`` on the downloaded folder.
"""

from dataclasses import dataclass

import pandas as pd
from mlflow import MlflowClient
from mlflow.exceptions import MlflowException
from mlflow.protos.databricks_pb2 import RESOURCE_ALREADY_EXISTS, ErrorCode

from analysis.collect import AnalysisError

MODEL_ARTIFACT = "model"
CHAMPION_ALIAS = "champion"


@dataclass(frozen=True)
class Registration:
    """What happened to the selected model: registered (name, version, alias) or why not."""

    run_id: str
    registered: bool
    model_name: str
    alias: str
    version: str | None = None
    source: str | None = None
    reason: str = ""


def best_seed_run(trials: pd.DataFrame, config_key: str, metric: str) -> str:
    """The run of ``config_key`` with the highest ``metric`` (a dev metric); ties to the lower
    seed."""
    runs = trials[trials["config_key"] == config_key]
    if runs.empty or metric not in runs.columns:
        raise AnalysisError(f"no run of config {config_key!r} logged {metric!r}")
    ranked = runs.assign(score=runs[metric]).sort_values(
        ["score", "seed"], ascending=[False, True], na_position="last"
    )
    return ranked["run_id"].iloc[0]


def _has_model(client: MlflowClient, run_id: str) -> bool:
    return any(True for _ in client.list_artifacts(run_id, MODEL_ARTIFACT))


def register_champion(
    client: MlflowClient,
    run_id: str,
    model_name: str,
    alias: str = CHAMPION_ALIAS,
    description: str = "",
) -> Registration:
    """Register the run's ``model/`` folder as a new version of ``model_name`` under ``alias``.

    Returns an unregistered :class:`Registration` with the reason when the run has no
    model artifact (the sweep ran without ``log_models``).
    """
    if not _has_model(client, run_id):
        return Registration(
            run_id=run_id,
            registered=False,
            model_name=model_name,
            alias=alias,
            reason=f"run {run_id} has no '{MODEL_ARTIFACT}/' artifact: the sweep "
            "did not log models (rerun with --set log_models=true)",
        )
    try:
        client.create_registered_model(model_name, description=description or None)
    except MlflowException as error:
        if error.error_code != ErrorCode.Name(RESOURCE_ALREADY_EXISTS):
            raise
    source = f"{client.get_run(run_id).info.artifact_uri.rstrip('/')}/{MODEL_ARTIFACT}"
    version = client.create_model_version(
        model_name, source, run_id=run_id, description=description or None
    )
    client.set_registered_model_alias(model_name, alias, version.version)
    return Registration(
        run_id=run_id,
        registered=True,
        model_name=model_name,
        alias=alias,
        version=str(version.version),
        source=source,
    )
