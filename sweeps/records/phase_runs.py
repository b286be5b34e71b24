"""The trial runs a phase's fit left open or unlogged, set right in MLflow once it returns:
runs of trials ASHA stopped closed KILLED, runs of trials whose worker died closed FAILED,
and results a trial could not log (tracking server down) logged from its checkpoint.

Each write is retried for up to `wait_s` seconds (`tracking.with_retries`)."""

from __future__ import annotations

import logging

from sweeps.records import tracking
from sweeps.spec.trial_contract import (
    MLFLOW_LOGGED,
    MLFLOW_RUN_ID,
    TRIAL_COMPLETE,
    checkpoint_copy,
    failure_text,
)
from xlt_schema import FAILURE_TAG, STOPPED_EARLY_TAG, TRIAL_ID_TAG

logger = logging.getLogger(__name__)


def close_stopped_trials(
    client, experiment_id: str, parent_run_id: str, results, statuses: dict[str, str], wait_s: float
) -> None:
    """Trials ASHA stopped never reach their end: close their runs as KILLED."""

    for result in results:
        metrics = result.metrics or {}
        if _stopped_early(result, statuses, TRIAL_COMPLETE):
            tracking.with_retries(
                lambda: _mark_stopped(client, experiment_id, parent_run_id, metrics),
                wait_s,
                "stopped trial",
            )


def _stopped_early(result, statuses: dict[str, str], complete_key: str) -> bool:
    """Whether Tune ended this trial (TERMINATED in the saved state) before it reached its own
    end: not the trainable's `complete_key`, which its final report sets (ASHA stopped it)."""
    metrics = result.metrics or {}
    return (
        statuses.get(metrics.get("trial_id")) == "TERMINATED"
        and result.error is None
        and not metrics.get(complete_key)
    )


def _mark_stopped(client, experiment_id: str, parent_run_id: str, metrics: dict) -> None:
    runs = client.search_runs(
        [experiment_id],
        filter_string=tracking.trial_run_filter(parent_run_id, metrics["trial_id"]),
        max_results=1,
    )
    for run in runs:
        # Interrupted: a second signal stopped the fit before this was recorded.
        if run.info.status == "RUNNING" or tracking.was_interrupted(run):
            evaluations = metrics.get("training_iteration")
            tracking.continue_run(client, run)
            tracking.set_tags(
                client,
                run.info.run_id,
                {STOPPED_EARLY_TAG: f"ASHA after {evaluations} evaluations"},
            )
            client.set_terminated(run.info.run_id, status="KILLED")


def close_lost_trials(client, parent_run_id: str, results, wait_s: float) -> None:
    """A trial whose worker died (Tune's ActorDiedError once `--max-failures` is used up)
    never closed its own run: FAILED, its `failure` tag Tune's error. Runs still RUNNING
    after a fit no signal stopped are those (ASHA's stops are closed before)."""
    errors = {
        (result.metrics or {}).get("trial_id"): result.error
        for result in results
        if result.error is not None
    }
    if not errors:
        return
    parent = client.get_run(parent_run_id)
    for run in tracking.trial_runs(client, parent, status="RUNNING"):
        error = errors.get(run.data.tags.get(TRIAL_ID_TAG), errors.get(None))
        if error is not None:
            tracking.with_retries(
                lambda: _mark_failed(client, run.info.run_id, error), wait_s, "failed trial"
            )


def _mark_failed(client, run_id: str, error: BaseException) -> None:

    tracking.set_tags(client, run_id, {FAILURE_TAG: failure_text(error)[:4000]})
    client.set_terminated(run_id, status="FAILED")
    logger.warning(f"Trial run {run_id} failed: {str(error).splitlines()[0][:200]}")


def relog_results(client, results, wait_s: float) -> None:
    """Results a trial could not log (tracking server down) go to MLflow from its checkpoint."""

    for result in results:
        if (result.metrics or {}).get(MLFLOW_LOGGED) is False and result.checkpoint is not None:
            run_id = result.metrics[MLFLOW_RUN_ID]
            logger.info(f"Logging the results of trial run {run_id} from its Ray checkpoint")
            with checkpoint_copy(result.checkpoint) as directory:
                tracking.with_retries(
                    lambda: tracking.log_trial_results(client, run_id, directory),
                    wait_s,
                    "trial results",
                )
