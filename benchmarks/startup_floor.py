"""The start-up floor of a local sweep: what stands between a sweep command and its first
trial's run however little the sweep itself does, each part timed alone in this process.

- Ray start: `ray.init` of a private local Ray, as the sweep driver starts it
  (`sweeps.running.runner.LOCAL_RAY_CONFIG`, no dashboard), until it returns;
- a bare actor: from asking Ray for an actor that does nothing to its first answer (Ray
  starts a worker process for it, as for each trial actor);
- a trial worker's imports: what the worker imports before it creates its trial's MLflow run,
  beyond Ray itself (which the bare actor's worker imported too): `sweeps.running.trainable`, which
  brings Ray Tune and MLflow, and torch.

Run as `python -m benchmarks.startup_floor` (a fresh Python, so that nothing is imported
yet): prints the three figures in seconds as one JSON object. The sweep case
(`benchmarks/sweep.py`) reports their sum beside the first trial's start. A floor, not a
forecast: the parts run one after another on an idle machine here, while a sweep's driver,
trial workers and Ray's daemons share the CPUs, and the driver's own start and Tune's
set-up come on top.
"""

from __future__ import annotations

import json
import time


def _timed(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def _ray_start_and_bare_actor() -> tuple[float, float]:
    import ray

    from sweeps.running.runner import LOCAL_RAY_CONFIG

    @ray.remote
    class Bare:
        def ready(self) -> bool:
            return True

    try:
        ray_start = _timed(
            lambda: ray.init(
                address="local", include_dashboard=False, _system_config=LOCAL_RAY_CONFIG
            )
        )
        bare_actor = _timed(lambda: ray.get(Bare.remote().ready.remote()))
    finally:
        ray.shutdown()
    return ray_start, bare_actor


def _worker_imports() -> None:
    import torch  # noqa: F401

    import sweeps.running.trainable  # noqa: F401


def main() -> None:
    import ray  # noqa: F401  (a Ray worker has it before it runs an actor)

    imports = _timed(_worker_imports)
    ray_start, bare_actor = _ray_start_and_bare_actor()
    print(json.dumps({"ray_start": ray_start, "bare_actor": bare_actor, "imports": imports}))


if __name__ == "__main__":
    main()
