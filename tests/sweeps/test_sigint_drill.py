"""The SIGINT drill (`sweeps/drills/sigint.py`, issue 22 item 12) at two random moments: a
smoke sweep started from a launcher that ignores SIGINT, sent SIGINT to its process group,
either stops with exit 130 and then finishes with one FINISHED run per (configuration, seed),
or had finished before the signal. `python -m sweeps.drills.sigint --runs 20` runs it at 20."""

import random
import subprocess
import sys

import pytest
from conftest import scaled_timeout
from sweep_helpers import ONE_EAR, TINY

from sweeps.drills.sigint import catches_sigint, drill_once, start_ignoring_sigint

# The moments' seed (printed by the test on failure); the tiny sweep lasts about 60 s idle.
SEED = 20261201
SETTINGS = [value for flag, value in zip(TINY + ONE_EAR, (TINY + ONE_EAR)[1:]) if flag == "--set"]


def test_the_launcher_starts_the_driver_with_sigint_ignored(tmp_path):
    code = "import signal, sys; sys.exit(signal.getsignal(signal.SIGINT) is signal.SIG_IGN)"
    process = start_ignoring_sigint([sys.executable, "-c", code], tmp_path)
    assert process.wait(timeout=scaled_timeout(60)) == 1


def test_catches_sigint_reads_the_processs_handler():
    code = (
        "import signal, sys, time\n"
        "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "print('ignoring', flush=True); sys.stdin.readline()\n"
        "signal.signal(signal.SIGINT, lambda *a: None)\n"
        "print('catching', flush=True); sys.stdin.readline()\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout.readline().strip() == "ignoring"
        assert not catches_sigint(process.pid)
        process.stdin.write("\n")
        process.stdin.flush()
        assert process.stdout.readline().strip() == "catching"
        assert catches_sigint(process.pid)
    finally:
        process.kill()
        process.wait()


@pytest.mark.slow
def test_sigint_at_random_moments_stops_cleanly_and_resumes(tmp_path):
    rng = random.Random(SEED)
    # One moment in the sweep's first seconds (Ray starting, the parent run made), one later.
    delays = [rng.uniform(0.0, 8.0), rng.uniform(8.0, 60.0)]
    for index, delay in enumerate(delays):
        run = drill_once(tmp_path / f"run-{index}", delay, SETTINGS, scaled_timeout(600))
        assert not run.problems, f"seed {SEED}, run {index}: {run.describe()}"
