"""K trials sharing one GPU, as a sweep with `--trials-per-gpu K` schedules them: Ray actors,
each asking for the resources `sweeps.planning.trial_resources.trial_resources` gives a trial
(1/K of a GPU and a K-th of the CPUs per GPU), each training an EAR model of mBERT-base's
dimensions on the trials' batches (`xlt_core.train`'s step, length-grouped epochs, bf16
autocast on CUDA).

Ray's fractional GPUs are a scheduling count, not a partition: the K actors run their
kernels on the same device at once, as a sweep's trials do. All K start together (a start
time sent to each, after their warm-up steps) and train for the same window; the figures
are the examples per second summed over the K trials and the largest peak memory of one
trial (the GPU's, or the process's RSS on CPU).

Without CUDA (the test: `--quick` on CPU) the same code runs on a local Ray that declares one
GPU, so that the fractional requests are scheduled as on a GPU node, and Ray's logical CPUs
are at least 4, so that 4 trials fit; the trials then train on the CPU.
"""

from __future__ import annotations

import time
from typing import Iterator

from benchmarks.common import REPO, Result, Settings, cpu_count, measured

SHARES = (1, 2, 4)
METHOD = "ear"  # the sweeps' objective
WINDOW_S = {"quick": 2.0, "full": 30.0}  # seconds each trial trains once all have started
WARMUP_STEPS = 3
START_DELAY_S = 1.0  # from sending the start time to it: every actor is waiting by then


class SharingTrial:
    """One trial's training loop on its share of the device."""

    def __init__(self, settings: Settings):
        from benchmarks.workload import Trainer, xnli_workload
        from xlt_core.train import epoch_batches
        from xlt_core.trial_result import trial_device

        self.device = trial_device()
        workload = xnli_workload(settings, wide_vocabulary=True)
        model = workload.base_model(settings.quick)
        self.trainer = Trainer(model, workload.config, device=self.device)
        layers = model.config.num_hidden_layers
        self.objective, self.training_set = workload.objective(METHOD, layers)
        config = workload.config
        lengths = self.training_set.lengths()
        self.batches = epoch_batches(len(lengths), config.batch_size, config.seed, 0, lengths)
        self.position = 0

    def _step(self) -> int:
        batch = self.batches[self.position % len(self.batches)]
        self.position += 1
        self.trainer.step(self.objective, self.training_set, batch)
        return len(batch)

    def warm_up(self) -> str:
        for _ in range(WARMUP_STEPS):
            self._step()
        return self.device.type

    def train_until(self, start_at: float, window_s: float) -> dict:
        """Wait for `start_at` (epoch seconds), then train whole steps for `window_s`: the
        examples trained, the seconds taken and the trial's peak memory in bytes."""
        import torch

        from benchmarks.common import status_bytes

        time.sleep(max(0.0, start_at - time.time()))
        if self.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(self.device)
        started, examples = time.perf_counter(), 0
        while time.perf_counter() - started < window_s:
            examples += self._step()
        seconds = time.perf_counter() - started
        if self.device.type == "cuda":
            peak = torch.cuda.max_memory_allocated(self.device)
        else:
            peak = status_bytes("VmHWM")
        return {"examples": examples, "seconds": seconds, "peak_bytes": peak}


def _start_ray() -> None:
    import ray
    import torch

    env = {"runtime_env": {"env_vars": {"PYTHONPATH": str(REPO)}}}
    if torch.cuda.is_available():
        ray.init(address="local", include_dashboard=False, **env)
    else:  # the CPU check: a declared GPU, room for 4 trials of one logical CPU
        cpus = max(cpu_count(), max(SHARES))
        ray.init(address="local", include_dashboard=False, num_gpus=1, num_cpus=cpus, **env)


def _share(settings: Settings, trials: int) -> dict:
    """`trials` actors with a trial's resources, trained together for one window."""
    import ray

    from sweeps.planning.trial_resources import trial_resources

    resources = trial_resources(None, trials, ray.cluster_resources())
    actor = ray.remote(SharingTrial).options(num_cpus=resources["cpu"], num_gpus=resources["gpu"])
    actors = [actor.remote(settings) for _ in range(trials)]
    try:
        devices = ray.get([a.warm_up.remote() for a in actors])
        window = WINDOW_S["quick" if settings.quick else "full"]
        start_at = time.time() + START_DELAY_S
        done = ray.get([a.train_until.remote(start_at, window) for a in actors])
    finally:
        for a in actors:
            ray.kill(a)
    return {"devices": devices, "resources": resources, "trials": done}


def gpu_sharing(settings: Settings) -> Iterator[Result]:
    """Examples/s summed over 1, 2 and 4 trials sharing the device, and a trial's peak
    memory at each."""
    import ray

    _start_ray()
    try:
        single = None
        for trials in SHARES:
            shared = _share(settings, trials)
            rate = sum(t["examples"] / t["seconds"] for t in shared["trials"])
            single = single or rate
            peak = max(t["peak_bytes"] for t in shared["trials"]) / 2**30
            device, share = shared["devices"][0], shared["resources"]
            kind = "GPU allocated" if device == "cuda" else "process RSS (CPU)"
            where = f"{trials} {METHOD} trial(s), {share['gpu']:g} GPU + {share['cpu']:g} CPU each"
            yield measured(
                f"gpu sharing examples/s ({where})",
                rate,
                "ex/s",
                note=f"{rate / single:.2f} x one trial's; on {device}, "
                f"{shared['trials'][0]['seconds']:.0f} s window",
            )
            name = f"gpu sharing peak memory per trial ({trials} trials)"
            yield measured(name, peak, "GiB", note=kind)
    finally:
        ray.shutdown()
