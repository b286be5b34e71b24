"""A local Ray as a sweep starts and stops it (`runner._ray_session`): its trials run at
normal priority (Ray's own default, niceness 15, leaves them a few per cent of a core beside
any other CPU-bound process), and it stops with no actor handle left to free (freed by the
report's garbage collection while Ray stops in another thread, one ended the driver with
exit 1)."""

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
import contextlib, gc, json, os
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

@ray.remote(num_cpus=0)
class Actor:
    pass

class Pool(ThreadPoolExecutor):
    def submit(self, fn, *args):
        # Actor handles alive as the shutdown starts (Tune's, in reference cycles).
        handles = sum(isinstance(o, ray.actor.ActorHandle) for o in gc.get_objects())
        print(json.dumps({"handles_at_shutdown": handles}))
        return super().submit(fn, *args)

with contextlib.ExitStack() as stack:
    pool = stack.enter_context(Pool(1))
    stack.enter_context(runner._ray_session(None, Signals(), pool))
    print(json.dumps({"driver": os.nice(0), "worker": ray.get(niceness.remote())}))
    cycle = {"actor": Actor.remote()}
    cycle["self"] = cycle
    del cycle
"""


@pytest.fixture(scope="module")
def session_lines():
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
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return {key: value for line in lines for key, value in line.items()}


@pytest.mark.slow
def test_a_local_rays_workers_run_at_the_drivers_niceness(session_lines):
    assert session_lines["worker"] == session_lines["driver"]


@pytest.mark.slow
def test_ray_stops_with_no_actor_handle_left_to_free(session_lines):
    assert session_lines["handles_at_shutdown"] == 0
