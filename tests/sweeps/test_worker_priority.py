"""A local Ray runs the sweep's trials at normal priority: Ray's own default (niceness 15)
leaves them a few per cent of a core beside any other CPU-bound process."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import scaled_timeout

# A fresh interpreter starts Ray as a sweep's driver does (`run_sweep`): its authentication mode
# named before Ray's import. Inside a pytest worker, Ray may already be imported under another
# mode by an earlier test, and its processes would not accept this one's (CI, 2026-12-04).
SCRIPT = """
import contextlib, json, os
from concurrent.futures import ThreadPoolExecutor
from sweeps.running import runner

class Signals:
    def take_over(self):
        pass

runner._name_token_auth(None)
import ray

@ray.remote(num_cpus=1)
def niceness():
    return os.nice(0)

with contextlib.ExitStack() as stack:
    pool = stack.enter_context(ThreadPoolExecutor(1))
    stack.enter_context(runner._ray_session(None, Signals(), pool))
    print(json.dumps({"driver": os.nice(0), "worker": ray.get(niceness.remote())}))
"""


@pytest.mark.slow
def test_a_local_rays_workers_run_at_the_drivers_niceness():
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "RAY_AUTH_MODE")}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        env=env,
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=scaled_timeout(120),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    niceness = json.loads(done.stdout.strip().splitlines()[-1])
    assert niceness["worker"] == niceness["driver"]
