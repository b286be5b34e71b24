"""The Ray Tune function trainable: one trial of `xlt_core`, tracked in its own MLflow run.

Fault tolerance: a restarted trial (FailureConfig, `--resume`) finds its run by the Ray
trial id and continues from its last `tune.Checkpoint`; a trial whose loss stops being
finite ends with the reason on its run, without a pointless retry; the final results go
into the trial's last Ray checkpoint before MLflow, so a tracking outage loses nothing
(the runner re-logs them: see `MLFLOW_LOGGED`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import logging
import math
import os
import shutil
import traceback
from pathlib import Path
from typing import Callable, Mapping

import ray
from mlflow.tracking import MlflowClient
from ray import tune

from sweeps.records import tracking
from sweeps.records.model_logging import save_mlflow_models
from sweeps.records.run_context import inherited_source_tags, library_versions
from sweeps.safety.storage_checks import full_disk_error, log_disk_full_quietly
from sweeps.spec.trial_contract import (
    FAILURE,
    MLFLOW_LOGGED,
    MLFLOW_RUN_ID,
    TRIAL_COMPLETE,
    TrialRequest,
    checkpoint_copy,
    failure_text,
)
from xlt_core.config import TrialConfig
from xlt_core.errors import ConfigError, DataError, TrainingDiverged
from xlt_core.temp_folders import owned_temporary_directory
from xlt_schema import (
    ADAPTATION_TAG,
    CONFIG_KEY_TAG,
    CONFIG_LABEL_TAG,
    DEV_CURVE,
    FAILURE_TAG,
    HYPERPARAMETERS_TAG,
    METHOD_TAG,
    PHASE_TAG,
)
from xlt_schema.log import configure_from_environment

logger = logging.getLogger(__name__)

# Errors a retry from the same checkpoint would meet again: a diverged loss, bad data or
# settings (FailureConfig's retries are for transient faults such as a lost node).
NOT_RETRIED = (TrainingDiverged, DataError, ConfigError)
# `module:function` run in place of xlt_core.trial.run_trial, read from the worker's environment
# (a local Ray's workers inherit the driver's): the driver-scaling benchmark's no-op trial.
TRIAL_FUNCTION_ENV = "XLT_TRIAL_FUNCTION"
# Where a trial that logs its model saves it (`save_pretrained`) before it becomes the run's
# MLflow model (`tracking.MODEL_DIR`).
TRAINED_DIR = "trained"
# Where a trial's latest attempt runs: its Ray node, its device, and whether it continued
# from a checkpoint (a restarted trial).
NODE_TAG = "xlt.ray_node_id"
DEVICE_TAG = "xlt.device"
RESUMED_TAG = "xlt.resumed_from_checkpoint"


class RayMlflowReporter:
    """Reports each evaluation to Ray Tune (with its checkpoint) and to the trial's MLflow run."""

    def __init__(self, client: MlflowClient, run_id: str, label: str):
        self.client, self.run_id, self.label = client, run_id, label
        # Curve points MLflow has not taken yet (tracking server unreachable); Ray has them.
        self.pending: list[list] = []
        # The restored checkpoint's local copy (`latest_checkpoint`), deleted by `close`.
        self._restored = contextlib.ExitStack()
        self._restored_dir: str | None = None

    def report(
        self, step: int, metrics: Mapping[str, float], checkpoint_dir: str | None = None
    ) -> None:
        self.pending.append([step, dict(metrics)])
        self.flush()
        checkpoint = tune.Checkpoint.from_directory(checkpoint_dir) if checkpoint_dir else None
        tune.report(dict(metrics), checkpoint=checkpoint)
        logger.info(
            f"[{self.label}] step {step}: train/loss={metrics['train/loss']:.4f} "
            f"{DEV_CURVE}={metrics[DEV_CURVE]:.4f}"
        )

    def flush(self) -> None:
        """Send the pending curve points; on a tracking outage keep them for later."""
        try:
            while self.pending:
                step, metrics = self.pending[0]
                tracking.log_metrics(self.client, self.run_id, metrics, step)
                self.pending.pop(0)
        except Exception as error:
            if not tracking.is_tracking_outage(error):
                raise
            logger.warning(
                f"[{self.label}] tracking server not answering ({type(error).__name__}); "
                f"{len(self.pending)} curve points kept"
            )

    def latest_checkpoint(self) -> str | None:
        """The checkpoint Tune restored this attempt from, copied once (every language stage
        asks again, and Tune may delete the original once a newer one is reported)."""
        checkpoint = tune.get_checkpoint()
        if checkpoint is not None and self._restored_dir is None:
            self._restored_dir = self._restored.enter_context(checkpoint_copy(checkpoint))
        return self._restored_dir

    def close(self) -> None:
        """Delete the restored checkpoint's copy."""
        self._restored.close()
        self._restored_dir = None


def run_tracked_trial(
    space: dict, tracking_uri: str, credentials: Mapping[str, str] | None = None
) -> None:
    """Entry point Ray calls with one trial: its `space` (a `TrialRequest`, which Tune writes
    to disk); apart from it, where to track and the server's `credentials` (MLflow's
    variables: sweeps/running/tune_phases.py `TunePhases.trainable`)."""
    configure_from_environment()  # the driver's -v/-q; Ray forwards the worker's stdout
    log_disk_full_quietly()  # MLflow's traceback of a full SQLite store: one line
    request = TrialRequest.from_space(space)
    # The driver imports this module only to hand this function to Tune: the trial path
    # (torch, transformers) is imported here, by the worker, on its first trial.
    import torch

    config = request.config()
    torch.set_num_threads(max(1, int(request.threads)))
    os.environ.update(credentials or {})
    client = MlflowClient(tracking_uri)
    label = request.run_name()
    run = client.get_run(_trial_run_id(client, request, config, label))
    if run.info.status == "FINISHED":
        # Finished and logged, but the driver died before Tune recorded it: report, don't redo.
        _report_logged_run(run, config.selection_metric())
        return
    tracking.continue_run(client, run)  # interrupted before (SIGINT/SIGTERM): running again
    _run_attempt(client, run.info.run_id, label, config, request.log_model)


def _trial_run_id(
    client: MlflowClient, request: TrialRequest, config: TrialConfig, label: str
) -> str:
    """The trial's MLflow run: the one a previous attempt of this Ray trial made, else new."""
    return tracking.find_or_create_trial_run(
        client,
        request.experiment_id,
        request.parent_run_id,
        trial_id=tune.get_context().get_trial_id(),
        tags={**trial_tags(config, request.phase), **_provenance(client, request)},
        run_name=label,
    )


def _provenance(client: MlflowClient, request: TrialRequest) -> dict[str, str]:
    """The parent's source tags (script, git commit, user: the driver's, as a worker has
    none of its own) and this worker's library versions (a cluster's nodes may differ)."""
    parent_tags = client.get_run(request.parent_run_id).data.tags
    return {**inherited_source_tags(parent_tags), **library_versions()}


def _report_logged_run(run, dev_key: str) -> None:
    """Report to Tune the results a finished run holds in MLflow."""
    metrics = {
        key: value for key, value in run.data.metrics.items() if not key.startswith("train/")
    }
    tune.report(
        {
            **metrics,
            DEV_CURVE: metrics[dev_key],
            TRIAL_COMPLETE: True,
            MLFLOW_LOGGED: True,
            MLFLOW_RUN_ID: run.info.run_id,
        }
    )


def _run_attempt(
    client: MlflowClient, run_id: str, label: str, config: TrialConfig, log_model: bool
) -> None:
    """This attempt of the trial: tagged with where it runs, its settings logged, then
    trained, or only logged when its checkpoint holds the results of a previous attempt."""
    checkpoint = tune.get_checkpoint()
    reporter = RayMlflowReporter(client, run_id, label)
    # Where this attempt runs; `resumed_from_checkpoint` marks a restarted trial.
    tracking.set_tags(
        client,
        run_id,
        {
            NODE_TAG: ray.get_runtime_context().get_node_id(),
            DEVICE_TAG: _device_name(),
            RESUMED_TAG: checkpoint is not None,
        },
    )
    tracking.log_params(client, run_id, flat_params(config))
    dev_key = config.selection_metric()
    with contextlib.closing(reporter), owned_temporary_directory("xlt-results-") as out:
        restored = reporter.latest_checkpoint()
        if restored is not None and tracking.has_trial_results(restored):
            # Trained and evaluated: only logging is left.
            _finish(client, run_id, label, Path(restored), dev_key)
            return
        _train_and_finish(client, reporter, config, log_model, Path(out))


def _train_and_finish(
    client: MlflowClient, reporter, config: TrialConfig, log_model: bool, results_dir: Path
) -> None:
    """Train into `results_dir` and, unless the trial failed, log and report the results."""
    run_id, label = reporter.run_id, reporter.label
    # Output folders are set on a copy, so the run's config key stays the configuration's.
    trained = results_dir / TRAINED_DIR
    trial_config = dataclasses.replace(
        config,
        save_model_dir=str(trained) if log_model else None,
        probing_dir=str(results_dir / tracking.PROBING_DIR),
    )
    if _train(client, reporter, trial_config, results_dir):
        if log_model:  # the run's `model/`: an MLflow model, so MLflow's loaders open it
            save_mlflow_models(trained, results_dir / tracking.MODEL_DIR, config.task)
            shutil.rmtree(trained, ignore_errors=True)
        _finish(client, run_id, label, results_dir, config.selection_metric())


def _train(client: MlflowClient, reporter, config: TrialConfig, results_dir: Path) -> bool:
    """Train and evaluate, the results written to `results_dir`; False when the trial ended
    on an error a retry would meet again (recorded on its run and reported to Tune)."""
    run_id = reporter.run_id
    try:
        result = trial_function()(config, reporter)
    except NOT_RETRIED as error:
        _record_failure(client, run_id, error)
        # From the same checkpoint it would fail again: end the trial rather than raise
        # (which FailureConfig would retry). NaN tells the searcher the trial failed.
        tune.report(
            {
                DEV_CURVE: math.nan,
                FAILURE: failure_text(error),
                TRIAL_COMPLETE: True,
                MLFLOW_RUN_ID: run_id,
            }
        )
        return False
    except Exception as error:
        full = full_disk_error(error, [Path.cwd(), results_dir, Path(config.cache_dir or ".")])
        if full is not None:  # not the trial's fault: its run stays resumable
            logger.warning(f"[{reporter.label}] stopped: the disk is full ({full})")
            if full is error:
                raise
            raise full from error
        _record_failure(client, run_id, error)
        traceback.print_exc()
        raise
    final = {
        **result.metrics,
        "train/best_step": result.best_step,
        "train/seconds": result.train_seconds,
    }
    tracking.write_trial_results(
        results_dir, final, result.best_step, result.example_scores, reporter.pending
    )
    return True


def trial_function() -> Callable:
    """What trains and evaluates a trial: `xlt_core.trial.run_trial`, unless $XLT_TRIAL_FUNCTION
    names another `module:function` of the same signature."""
    name = os.environ.get(TRIAL_FUNCTION_ENV)
    if not name:
        from xlt_core.trial import run_trial

        return run_trial
    module, _, function = name.partition(":")
    return getattr(importlib.import_module(module), function)


def _finish(client: MlflowClient, run_id: str, label: str, directory: Path, dev_key: str) -> None:
    """Log the results in `directory` to MLflow (if it answers) and report them to Ray with
    the directory as the trial's last checkpoint, from which the runner can re-log them."""
    try:
        tracking.log_trial_results(client, run_id, directory)
        logged = True
    except Exception as error:
        if not tracking.is_tracking_outage(error):
            raise
        logger.warning(
            f"[{label}] tracking server not answering ({type(error).__name__}); "
            "results kept in the Ray checkpoint"
        )
        logged = False
    metrics = tracking.read_trial_metrics(directory)
    logger.info(
        f"[{label}] finished: "
        + ", ".join(
            f"{k}={v:.3f}" for k, v in sorted(metrics.items()) if not k.startswith("train/")
        )
    )
    # The curve's last value is the selected model's dev score (what ASHA and Optuna rank by).
    tune.report(
        {
            **metrics,
            DEV_CURVE: metrics[dev_key],
            TRIAL_COMPLETE: True,
            MLFLOW_LOGGED: logged,
            MLFLOW_RUN_ID: run_id,
        },
        checkpoint=tune.Checkpoint.from_directory(str(directory)),
    )


def _record_failure(client: MlflowClient, run_id: str, error: Exception) -> None:
    try:
        tracking.set_tags(client, run_id, {FAILURE_TAG: failure_text(error)[:4000]})
        client.set_terminated(run_id, status="FAILED")
    except Exception as failure:
        if not tracking.is_tracking_outage(failure):
            raise
        logger.warning(
            f"could not record the failure on run {run_id}: tracking server not answering"
        )


def _device_name() -> str:
    import torch  # already imported by run_tracked_trial, its caller

    gpu_ids = ray.get_gpu_ids()
    return (
        f"cuda (Ray GPU {','.join(map(str, gpu_ids))})"
        if gpu_ids and torch.cuda.is_available()
        else "cpu"
    )


def trial_tags(config: TrialConfig, phase: str) -> dict[str, str]:
    """What identifies a trial's run: objective, adaptation, configuration, its own
    hyperparameters' names (for `analysis`) and the sweep phase."""
    return {
        METHOD_TAG: config.method,
        ADAPTATION_TAG: config.adaptation,
        CONFIG_KEY_TAG: config.config_key(),
        CONFIG_LABEL_TAG: config.config_label(),
        HYPERPARAMETERS_TAG: ",".join(config.hyperparameter_names()),
        PHASE_TAG: phase,
    }


def flat_params(config: TrialConfig) -> dict:
    """The settings that apply to the trial as MLflow params: other methods' and
    adaptations' hyperparameters and unset settings are left out (`applicable_settings`)."""
    params = config.applicable_settings()
    params["target_langs"] = ",".join(config.target_langs)
    return params
