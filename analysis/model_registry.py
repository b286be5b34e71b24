"""Register the selected configuration's model in the MLflow model registry (client API only).

A trial logs its trained model as the MLflow transformers model `model/` of its run when
the sweep asks for it (``log_models``; sweeps/records/model_logging.py). The registry then points a
new model version at that folder and moves the alias (``champion``) to it when its sweep is
complete and ended after the sweep holding the alias now, and its model is not worse on the
dev selection metric than the one holding the alias (unless asked: ``--register-anyway``).
The champion loads with MLflow's own loaders:
``mlflow.transformers.load_model("models:/<experiment>@champion")`` (a pipeline) or
``mlflow.pyfunc.load_model`` (a DataFrame of ``text``, ``text_pair`` in, labels out).
"""

from dataclasses import dataclass

import pandas as pd
from mlflow import MlflowClient
from mlflow.exceptions import MlflowException
from mlflow.protos.databricks_pb2 import RESOURCE_ALREADY_EXISTS, ErrorCode

from analysis.frames import AnalysisError
from analysis.publication import AliasHolder, Registration

MODEL_ARTIFACT = "model"
# The sweep's parent-run param that says whether its trials logged their models.
LOG_MODELS_PARAM = "log_models"
CHAMPION_ALIAS = "champion"


# Model version tags that record which sweep a version came from, so that the champion alias
# moves only to the selection of the newest complete sweep.
SWEEP_RUN_TAG = "xlt.sweep_parent_run"
SWEEP_END_TAG = "xlt.sweep_end_time"  # the parent run's end time, ms since the epoch
SWEEP_COMPLETE_TAG = "xlt.sweep_complete"


@dataclass(frozen=True)
class SweepStamp:
    """The sweep a selection comes from: its parent run, when it ended and whether it ran to
    its end (tag ``xlt.complete``)."""

    parent_run_id: str
    end_time: int  # ms since the epoch; 0 while the run has not ended
    complete: bool


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


def _no_model_reason(client: MlflowClient, run_id: str, parent_run_id: str) -> str:
    """Why the run has no model to register: its sweep did not log models (its parent's
    `log_models` param), or it did and the run's `model/` is gone from the artifact store."""
    missing = f"run {run_id} has no '{MODEL_ARTIFACT}/' artifact"
    logged = client.get_run(parent_run_id).data.params.get(LOG_MODELS_PARAM)
    if logged == "True":
        location = client.get_run(run_id).info.artifact_uri
        return (
            f"{missing}, though its sweep logged models ({LOG_MODELS_PARAM}=True): it was "
            f"deleted or moved from the run's artifacts ({location}); restore it there, or "
            "rerun the sweep"
        )
    return f"{missing}: the sweep did not log models (rerun with --set log_models=true)"


def alias_holder(client: MlflowClient, model_name: str, alias: str) -> AliasHolder | None:
    """The version ``alias`` points to, or None when the model or the alias does not exist."""
    try:
        version = client.get_model_version_by_alias(model_name, alias)
    except MlflowException:
        return None
    end = version.tags.get(SWEEP_END_TAG)
    return AliasHolder(
        version=str(version.version),
        sweep_run_id=version.tags.get(SWEEP_RUN_TAG),
        sweep_end_time=int(end) if end else None,
        run_id=version.run_id or None,
    )


def moves_alias(sweep: SweepStamp, holder: AliasHolder | None) -> str:
    """Why a version from ``sweep`` may not take the alias from ``holder``; "" when it may.

    Only a complete sweep takes it, and only from a sweep that ended before it (or from
    itself, or from a version no sweep recorded)."""
    if not sweep.complete:
        return f"sweep {sweep.parent_run_id} is not complete (no xlt.complete=true)"
    if (
        holder is None
        or holder.sweep_end_time is None
        or holder.sweep_run_id == sweep.parent_run_id
        or holder.sweep_end_time < sweep.end_time
    ):
        return ""
    return (
        f"it belongs to sweep {holder.sweep_run_id}, which ended after this one "
        f"({holder.sweep_end_time} >= {sweep.end_time} ms)"
    )


def _dev_score(client: MlflowClient, run_id: str | None, metric: str) -> float | None:
    """The run's value of the dev metric ``metric``; None when the run or the value is gone."""
    try:
        return client.get_run(run_id).data.metrics.get(metric) if run_id else None
    except MlflowException:
        return None


def worse_on_dev(client: MlflowClient, run_id: str, holder: AliasHolder | None, metric: str) -> str:
    """Why the model of ``run_id`` may not take the alias from ``holder`` on the dev metric
    ``metric``: it scores lower there, or the holder's score cannot be read; "" when it may."""
    if holder is None or holder.run_id == run_id:
        return ""
    ours, theirs = _dev_score(client, run_id, metric), _dev_score(client, holder.run_id, metric)
    if theirs is None:
        return (
            f"the model holding it (version {holder.version}, run {holder.run_id}) has no "
            f"{metric} to compare with, so this one may be worse (--register-anyway moves it)"
        )
    if ours is None or ours < theirs:
        shown = "no value" if ours is None else f"{100 * ours:.1f} %"
        return (
            f"this model is worse on {metric} ({shown}) than version {holder.version} "
            f"holding it ({100 * theirs:.1f} %); --register-anyway moves it anyway"
        )
    return ""


def _version_of(client: MlflowClient, model_name: str, run_id: str, sweep: SweepStamp):
    """The version this sweep already registered for ``run_id`` (a report rebuilt), or None."""
    versions = client.search_model_versions(f"name = '{model_name}' and run_id = '{run_id}'")
    return next((v for v in versions if v.tags.get(SWEEP_RUN_TAG) == sweep.parent_run_id), None)


def _stamped_version(
    client: MlflowClient, run_id: str, model_name: str, sweep: SweepStamp, description: str
):
    """The run's model as a version of ``model_name`` stamped with the sweep (created, or
    the one a rebuilt report registered before), and the model's source URI."""
    try:
        client.create_registered_model(model_name, description=description or None)
    except MlflowException as error:
        if error.error_code != ErrorCode.Name(RESOURCE_ALREADY_EXISTS):
            raise
    source = f"{client.get_run(run_id).info.artifact_uri.rstrip('/')}/{MODEL_ARTIFACT}"
    stamp = {
        SWEEP_RUN_TAG: sweep.parent_run_id,
        SWEEP_END_TAG: str(sweep.end_time),
        SWEEP_COMPLETE_TAG: str(sweep.complete).lower(),
    }
    version = _version_of(client, model_name, run_id, sweep)
    if version is None:
        version = client.create_model_version(
            model_name, source, run_id=run_id, tags=stamp, description=description or None
        )
    else:  # the sweep may have completed since: its stamp is brought up to date
        for key, value in stamp.items():
            client.set_model_version_tag(model_name, version.version, key, value)
    return version, source


def register_champion(
    client: MlflowClient,
    run_id: str,
    model_name: str,
    sweep: SweepStamp,
    alias: str = CHAMPION_ALIAS,
    description: str = "",
    metric: str | None = None,
    allow_worse: bool = False,
) -> Registration:
    """Register the run's ``model/`` folder as a version of ``model_name`` (once per sweep
    and run; a rebuilt report reuses it) and move ``alias`` to it when :func:`moves_alias`
    allows and, with the dev ``metric``, the model is not worse on it than the alias's
    holder (:func:`worse_on_dev`; ``allow_worse`` skips that check).

    Returns an unregistered :class:`Registration` with the reason when the run has no
    model artifact (the sweep ran without ``log_models``).
    """
    if not _has_model(client, run_id):
        return Registration(
            run_id=run_id,
            registered=False,
            model_name=model_name,
            alias=alias,
            reason=_no_model_reason(client, run_id, sweep.parent_run_id),
            holder=alias_holder(client, model_name, alias),
        )
    version, source = _stamped_version(client, run_id, model_name, sweep, description)
    holder = alias_holder(client, model_name, alias)
    refusal = moves_alias(sweep, holder)
    if not refusal and metric and not allow_worse:
        refusal = worse_on_dev(client, run_id, holder, metric)
    if not refusal:
        client.set_registered_model_alias(model_name, alias, version.version)
    return Registration(
        run_id=run_id,
        registered=True,
        model_name=model_name,
        alias=alias,
        version=str(version.version),
        source=source,
        alias_moved=not refusal,
        holder=alias_holder(client, model_name, alias),
        alias_reason=refusal,
    )
