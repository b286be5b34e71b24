"""Whether the Ray a sweep runs on can give its trials what they ask for
(sweeps/planning/trial_resources.py): GPUs present, a node with the CPUs a trial asks."""

from __future__ import annotations

from typing import Mapping

from xlt_core.errors import ConfigError


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


def check_cpus_fit(
    cpus: float, cluster: Mapping[str, float], node_cpus: list[float], joined_cluster: bool
) -> None:
    """Refuse a trial that asks for more CPUs than any node has: Ray would keep it pending for
    ever. A local Ray is one node (`cluster`, `ray.cluster_resources()`); a joined cluster is
    checked against its largest node (`node_cpus`, the CPUs of each node alive) once one with
    CPUs has started: before that, its autoscaler's nodes are not known here."""
    if joined_cluster:
        largest = max(node_cpus, default=0.0)
        where = f"the largest node of this cluster has {largest:g}"
    else:
        largest = cluster.get("CPU", 0.0)
        where = f"this machine's Ray has {largest:g}"
    if largest and cpus > largest:
        raise ConfigError("cpus_per_trial", cpus, f"at most {largest:g} ({where})")


def alive_node_cpus() -> list[float]:
    """The CPUs of each node of the connected Ray that is alive."""
    import ray

    return [node["Resources"].get("CPU", 0.0) for node in ray.nodes() if node["Alive"]]
