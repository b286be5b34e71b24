"""What a researcher sees of a sweep in the MLflow UI: the address that opens its runs, the
command that serves them, and the sweep's summary on its parent run (so that the runs
table compares sweeps at a glance)."""

import json
import math
import shlex
import time
from collections.abc import Mapping

import pandas as pd
from mlflow import MlflowClient
from mlflow.entities import Metric, RunTag

from analysis.select import Selection
from analysis.verdict import Verdict, outcomes
from xlt_schema.tracking_store import strip_credentials

LOCAL_UI = "http://127.0.0.1:5000"
# The runs table's columns show no metric or tag until a user picks them; a "shared view" (an
# experiment tag MLflow's UI reads when the address names its key) picks the summary's.
SUMMARY_VIEW = "xlt-sweep-summary"
SHARED_VIEW_TAG = f"mlflow.sharedViewState.{SUMMARY_VIEW}"
# The summary's tags on the parent run (its metrics are `selected/...`, `vs_baseline/...`).
SELECTED_CONFIG_TAG = "xlt.selected_config"
VERDICT_TAG = "xlt.verdict"
SANITY_WARNINGS_TAG = "xlt.sanity_warnings"
# + <split>/<lang>: gain, loss, no significant difference, or no verdict (one seed)
VS_BASELINE_TAG_PREFIX = "xlt.vs_baseline/"
# MLflow 3.17 opens an experiment on its GenAI overview unless the address asks for model
# training (the mode is a per-browser setting; the experiment's kind tag alone does not do it).
RUNS_PATH = (
    "#/experiments/{experiment_id}/runs?workflowType=machine_learning"
    f"&viewStateShareKey={SUMMARY_VIEW}"
)


def ui_address(tracking_uri: str, experiment_id: str) -> str:
    """The address of the experiment's runs table: on the tracking server itself, or on the
    local `mlflow ui` of :func:`ui_command` for a database store."""
    # The address goes into the report (an artifact too): never a server's password.
    server = tracking_uri.startswith(("http://", "https://"))
    base = strip_credentials(tracking_uri) if server else LOCAL_UI
    return f"{base.rstrip('/')}/{RUNS_PATH.format(experiment_id=experiment_id)}"


def ui_command(tracking_uri: str) -> str:
    """The command that serves :func:`ui_address`; "" when the tracking URI is a server."""
    if tracking_uri.startswith(("http://", "https://")):
        return ""
    # Quoted: a store in a folder with a space must still paste into a shell as one word.
    return f"mlflow ui --backend-store-uri {shlex.quote(tracking_uri)}"


def summary_metrics(
    selection: Selection, baseline_mean: float, evaluation: pd.DataFrame | None, split: str
) -> dict[str, float]:
    """The parent run's metrics: the selected configuration's and the baseline's mean on
    the selection metric, and per language of ``split`` the difference to the baseline and
    its corrected p-value (none on one seed: no test claims anything there)."""
    metrics = {
        f"selected/{selection.metric}": selection.mean,
        f"baseline/{selection.metric}": baseline_mean,
    }
    if evaluation is not None:
        for row in evaluation.itertuples(index=False):
            metrics[f"vs_baseline/{split}/{row.lang}/{row.metric}"] = row.mean_difference
            if not math.isnan(row.p_corrected):
                metrics[f"vs_baseline_p/{split}/{row.lang}/{row.metric}"] = row.p_corrected
    return metrics


def summary_tags(
    selection: Selection,
    verdict: Verdict,
    evaluation: pd.DataFrame | None,
    split: str,
    warnings: tuple[str, ...],
) -> dict[str, str]:
    """The parent run's tags: the selected configuration, the verdict (decided on the test
    split's mean over its languages, not on the split that selected; ``no verdict`` on one
    seed), per language of ``split`` a significant gain, loss, neither or no verdict
    (analysis.verdict.outcomes), and how many sanity warnings the sweep has."""
    tags = {
        SELECTED_CONFIG_TAG: selection.config_label,
        VERDICT_TAG: verdict.outcome,
        SANITY_WARNINGS_TAG: str(len(warnings)),
    }
    if evaluation is not None:
        for row, result in zip(evaluation.itertuples(index=False), outcomes(evaluation)):
            tags[f"{VS_BASELINE_TAG_PREFIX}{split}/{row.lang}"] = result
    return tags


def summary_view(metrics: Mapping[str, float], tags: Mapping[str, str]) -> str:
    """The shared view (JSON, as MLflow's UI stores one) whose columns are the summary's
    tags and its metrics but the p-values (the gain/loss tags say what they decide)."""
    columns = [f"tags.`{key}`" for key in tags] + [
        f"metrics.`{key}`" for key in metrics if not key.startswith("vs_baseline_p/")
    ]
    return json.dumps({"selectedColumns": columns})


def log_summary(
    client: MlflowClient,
    run_id: str,
    experiment_id: str,
    metrics: Mapping[str, float],
    tags: Mapping[str, str],
) -> None:
    """Put the summary on the parent run (a rebuilt report logs it again: latest wins) and
    its columns in the experiment's shared view (the newest report's)."""
    now = int(time.time() * 1000)
    client.log_batch(
        run_id,
        metrics=[Metric(key, float(value), now, 0) for key, value in metrics.items()],
        tags=[RunTag(key, value) for key, value in tags.items()],
    )
    client.set_experiment_tag(experiment_id, SHARED_VIEW_TAG, summary_view(metrics, tags))
