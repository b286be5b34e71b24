"""`run_sweep`: validate every trial, open the parent MLflow run, run the grid on Ray Tune,
then build the report from MLflow."""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from sweeps import tracking
from sweeps.presets import SweepSpec
from xlt_core.config import TrialConfig
from xlt_core.trial import check_resources

RAY_RESULTS = "ray_results"
REPORTS = "reports"


@dataclass(frozen=True)
class SweepOptions:
    tracking_uri: str
    address: str | None = None


def expand_trials(spec: SweepSpec) -> list[TrialConfig]:
    """Every trial of the grid, validated: each point with each seed (seeds are paired
    across configurations, the baseline included). Raises ConfigError on the first bad value."""
    return [TrialConfig.from_dict({**spec.base, **point, "seed": seed}) for point in spec.points for seed in spec.seeds]


def check_sweep(spec: SweepSpec) -> list[TrialConfig]:
    """All checks that can fail before Ray starts: values, data files, languages, model depth."""
    trials = expand_trials(spec)
    checked = set()
    for trial in trials:
        if trial.config_key() not in checked:
            check_resources(trial)
            checked.add(trial.config_key())
    return trials


def run_sweep(spec: SweepSpec, options: SweepOptions) -> int:
    """Run a sweep that `check_sweep` accepted; returns the number of failed trials."""
    import ray
    from mlflow.tracking import MlflowClient
    from ray import tune

    from analysis.report import format_summary, report_sweep
    from sweeps.trainable import run_tracked_trial

    trials = expand_trials(spec)
    client = MlflowClient(options.tracking_uri)
    experiment_id = tracking.ensure_experiment(client, spec.experiment, options.tracking_uri)
    parent_run_id = tracking.start_parent_run(
        client,
        experiment_id,
        params={"preset": spec.preset, "strategy": spec.strategy, "significance_test": spec.significance_test, "seeds": ",".join(map(str, spec.seeds)), "n_trials": len(trials), "n_configurations": len(spec.points), **{f"base.{k}": v for k, v in spec.base.items()}},
        tags={"mlflow.runName": f"{spec.experiment}-{spec.preset}-{time.strftime('%Y%m%d-%H%M%S')}", "code_version": _code_version(), **spec.extra_tags},
    )
    print(f"Sweep {spec.experiment} ({spec.preset}, {spec.strategy}): {len(spec.points)} configurations x {len(spec.seeds)} seeds = {len(trials)} trials; MLflow {options.tracking_uri}, parent run {parent_run_id}", flush=True)

    if options.address or os.environ.get("RAY_ADDRESS"):
        ray.init(address=options.address)
    else:
        # "local" starts a fresh Ray: with no address, Ray would attach to the last cluster
        # started on this machine (/tmp/ray/ray_current_cluster), which may be dead or not ours.
        ray.init(address="local", include_dashboard=False)
    space = {
        "base": spec.base,
        "point": tune.grid_search(spec.points),
        "seed": tune.grid_search(spec.seeds),
        "threads": spec.cpus_per_trial,
        "tracking_uri": options.tracking_uri,
        "experiment_id": experiment_id,
        "parent_run_id": parent_run_id,
        "phase": spec.strategy,
    }
    tuner = tune.Tuner(
        tune.with_resources(run_tracked_trial, {"cpu": spec.cpus_per_trial}),
        param_space=space,
        run_config=tune.RunConfig(
            name=client.get_run(parent_run_id).info.run_name,
            storage_path=str(Path(RAY_RESULTS).resolve()),
            checkpoint_config=tune.CheckpointConfig(num_to_keep=1),
            verbose=1,
        ),
    )
    results = tuner.fit()
    failed = sum(1 for result in results if result.error is not None)
    client.set_terminated(parent_run_id, status="FINISHED" if failed < len(trials) else "FAILED")
    print(f"{len(trials) - failed} of {len(trials)} trials finished, {failed} failed", flush=True)
    if failed == len(trials):
        return failed

    report = report_sweep(options.tracking_uri, spec.experiment, parent_run_id, out_dir=str(Path(REPORTS) / spec.experiment / parent_run_id))
    print(format_summary(report), flush=True)
    return failed


def _code_version() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True, cwd=Path(__file__).parent).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
