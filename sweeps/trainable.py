"""The Ray Tune function trainable: one trial of `xlt_core`, tracked in its own MLflow run."""

from __future__ import annotations

import dataclasses
import tempfile
import traceback
from pathlib import Path
from typing import Mapping

import torch
from mlflow.tracking import MlflowClient
from ray import tune

from sweeps import tracking
from xlt_core.config import METHOD_HYPERPARAMETERS, TrialConfig
from xlt_core.train import DEV_CURVE
from xlt_core.trial import run_trial

# The child run's artifact folder for the trained model (a `save_pretrained` folder).
MODEL_ARTIFACT = "model"


class RayMlflowReporter:
    """Reports each evaluation to Ray Tune (with its checkpoint) and to the trial's MLflow run."""

    def __init__(self, client: MlflowClient, run_id: str, label: str):
        self.client, self.run_id, self.label = client, run_id, label

    def report(self, step: int, metrics: Mapping[str, float], checkpoint_dir: str | None = None) -> None:
        tracking.log_metrics(self.client, self.run_id, metrics, step)
        checkpoint = tune.Checkpoint.from_directory(checkpoint_dir) if checkpoint_dir else None
        tune.report(dict(metrics), checkpoint=checkpoint)
        print(f"[{self.label}] step {step}: train/loss={metrics['train/loss']:.4f} {DEV_CURVE}={metrics[DEV_CURVE]:.4f}", flush=True)

    def latest_checkpoint(self) -> str | None:
        checkpoint = tune.get_checkpoint()
        return checkpoint.to_directory() if checkpoint else None


def run_tracked_trial(space: dict) -> None:
    """Entry point Ray calls with one point of the grid: the sweep's common settings
    (`base`), the method configuration (`point`), the `seed`, where to track, and whether
    to log the trained model (`log_model`)."""
    config = TrialConfig.from_dict({**space["base"], **space["point"], "seed": space["seed"]})
    torch.set_num_threads(max(1, int(space["threads"])))
    client = MlflowClient(space["tracking_uri"])
    label = f"{config.config_label()} seed={config.seed}"
    run_id = tracking.find_or_create_trial_run(
        client,
        space["experiment_id"],
        space["parent_run_id"],
        trial_id=tune.get_context().get_trial_id(),
        tags={"method": config.method, "config_key": config.config_key(), "config_label": config.config_label(), "phase": space["phase"]},
        run_name=label,
    )
    tracking.log_params(client, run_id, _flat_params(config))
    model_dir = tempfile.TemporaryDirectory(prefix="xlt-model-") if space.get("log_model") else None
    probing_dir = tempfile.TemporaryDirectory(prefix="xlt-probing-")
    # Output folders are set on a copy: the tags above stay those of the configuration.
    trial_config = dataclasses.replace(config, save_model_dir=model_dir.name if model_dir else None, probing_dir=probing_dir.name)
    try:
        result = run_trial(trial_config, RayMlflowReporter(client, run_id, label))
    except Exception as error:
        tracking.set_tags(client, run_id, {"failure": f"{type(error).__name__}: {error}"[:4000]})
        client.set_terminated(run_id, status="FAILED")
        traceback.print_exc()
        raise
    for key, payload in result.example_scores.items():
        client.log_dict(run_id, payload, f"predictions/{key}.json")
    with probing_dir:
        for artifact, local in result.figures.items():
            client.log_artifact(run_id, local, str(Path(artifact).parent))
    if model_dir:
        with model_dir:
            client.log_artifacts(run_id, model_dir.name, MODEL_ARTIFACT)
    tracking.log_metrics(client, run_id, {**result.metrics, "train/best_step": result.best_step, "train/seconds": result.train_seconds}, step=result.best_step)
    client.set_terminated(run_id, status="FINISHED")
    print(f"[{label}] finished: " + ", ".join(f"{k}={v:.3f}" for k, v in sorted(result.metrics.items())), flush=True)
    tune.report({**result.metrics, "done": True, "mlflow_run_id": run_id})


def _flat_params(config: TrialConfig) -> dict:
    """Every setting as an MLflow param; another method's hyperparameters read `none`."""
    params = config.to_dict()
    params["target_langs"] = ",".join(config.target_langs)
    own = config.hyperparameters()
    for name in {name for names in METHOD_HYPERPARAMETERS.values() for name in names} - set(own):
        params[name] = "none"
    return params
