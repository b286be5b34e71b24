"""A local Ray runs the sweep's trials at normal priority: Ray's own default (niceness 15)
leaves them a few per cent of a core beside any other CPU-bound process."""

import contextlib
import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from sweeps import runner


class _Signals:
    def take_over(self) -> None:
        pass


@pytest.mark.slow
def test_a_local_rays_workers_run_at_the_drivers_niceness(monkeypatch):
    import ray

    monkeypatch.delenv("RAY_ADDRESS", raising=False)

    @ray.remote(num_cpus=1)
    def niceness() -> int:
        return os.nice(0)

    with contextlib.ExitStack() as stack:
        pool = stack.enter_context(ThreadPoolExecutor(1))
        stack.enter_context(runner._ray_session(None, _Signals(), pool))
        assert ray.get(niceness.remote()) == os.nice(0)
    ray.shutdown()
