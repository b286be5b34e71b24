"""What each trial asks Ray for: CPUs, and a fraction of a GPU with `--trials-per-gpu K`
(from the settings and the cluster's resources, as numbers: no Ray here)."""

from __future__ import annotations

import math
from typing import Mapping

from xlt_core.errors import ConfigError

DEFAULT_CPUS = 1.0


def trial_resources(
    cpus_per_trial: float | None, trials_per_gpu: int | None, cluster: Mapping[str, float]
) -> dict[str, float]:
    """Ray resources of one trial.

    Without `trials_per_gpu`: `cpus_per_trial` CPUs (default 1) and no GPU. With it, each
    trial takes 1/K of a GPU, so K trials share one GPU, and, unless `cpus_per_trial` is
    given, a K-th of the CPUs that come with each GPU in `cluster` (`ray.cluster_resources()`),
    at least 1: a g5.xlarge (4 CPUs, 1 GPU) with K=4 runs 4 trials of 1 CPU each. A cluster
    that shows no GPU yet (an autoscaler that has not started its GPU workers) gives 1 CPU.
    """
    if cpus_per_trial is not None and not (math.isfinite(cpus_per_trial) and cpus_per_trial > 0):
        raise ConfigError("cpus_per_trial", cpus_per_trial, "a finite number > 0")
    if trials_per_gpu is None:
        return {"cpu": cpus_per_trial or DEFAULT_CPUS}
    if trials_per_gpu < 1:
        raise ConfigError("--trials-per-gpu", trials_per_gpu, "an integer >= 1")
    cpu = cpus_per_trial
    if cpu is None:
        gpus = cluster.get("GPU", 0.0)
        cpu = (
            max(DEFAULT_CPUS, int(cluster.get("CPU", 0.0) / gpus / trials_per_gpu))
            if gpus
            else DEFAULT_CPUS
        )
    return {"cpu": cpu, "gpu": 1.0 / trials_per_gpu}
