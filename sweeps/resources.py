"""What each trial asks Ray for: CPUs, and a fraction of a GPU with `--trials-per-gpu K`."""

from __future__ import annotations

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


def check_gpus_present(
    trials_per_gpu: int | None, cluster: Mapping[str, float], joined_cluster: bool
) -> None:
    """A local Ray without GPUs would leave GPU trials pending forever: refuse it. A cluster
    that was joined may still start GPU workers (autoscaling), so it is not checked."""
    if trials_per_gpu is not None and not joined_cluster and not cluster.get("GPU"):
        raise ConfigError(
            "--trials-per-gpu",
            trials_per_gpu,
            "a Ray with GPUs (this local Ray has none; drop the flag to run on CPUs, "
            "or give --address of a GPU cluster)",
        )
