"""The SIGINT drill (`sweeps/drills/sigint.py`, issue 22 item 12) at two random moments: a
smoke sweep started from a launcher that ignores SIGINT, sent SIGINT to its process group,
either stops with exit 130 and then finishes with one FINISHED run per (configuration, seed),
or had finished before the signal. `python -m sweeps.drills.sigint --runs 20` runs it at 20.
The same with SIGTERM to the whole group (issue 41, item 2): exit 143, then the same ending;
`python -m sweeps.drills.sigint --runs 10 --signal TERM` runs it at 10."""

import random
import signal
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


@pytest.mark.slow
def test_sigterm_to_the_group_at_random_moments_stops_cleanly_and_resumes(tmp_path):
    """As `timeout -s TERM`, systemd and Slurm send it: before, Ray's GCS died with the group
    and the driver exited 1 after 60 s, its runs left RUNNING and no `--resume` line."""
    rng = random.Random(SEED + 1)
    # One moment in the sweep's first seconds, one within its trials (Ray's GCS up: it died
    # with the group before), counted from when the parent run exists.
    moments = [(rng.uniform(0.0, 8.0), False), (rng.uniform(3.0, 15.0), True)]
    for index, (delay, after_parent) in enumerate(moments):
        workdir = tmp_path / f"run-{index}"
        timeout = scaled_timeout(600)
        run = drill_once(workdir, delay, SETTINGS, timeout, signal.SIGTERM, after_parent)
        assert not run.problems, f"seed {SEED + 1}, run {index}: {run.describe()}"
        if run.exit_code == 143 and run.continued_with == "--resume":
            log = (workdir / "driver.log").read_text()
            assert "interrupted (SIGTERM received; " in log and "continue with:" in log


def test_the_drill_command_sends_the_signal_it_is_given_and_prints_its_seed(
    monkeypatch, tmp_path, capsys
):
    """`python -m sweeps.drills.sigint --runs 10 --signal TERM`'s wiring, without sweeps: each
    run gets SIGTERM at a moment drawn from the printed seed; a failed run makes it exit 1."""
    from sweeps.drills import sigint

    calls = []

    def fake_drill(workdir, delay, settings, timeout, signum):
        calls.append((delay, signum))
        run = sigint.DrillRun(delay, signum, exit_code=143, resume_code=0)
        run.problems = ["a problem"] if len(calls) == 2 else []
        return run

    monkeypatch.setattr(sigint, "drill_once", fake_drill)
    argv = ["--runs", "3", "--signal", "TERM", "--seed", "7", "--max-delay", "5"]
    assert sigint.main([*argv, "--workdir", str(tmp_path)]) == 1
    expected = random.Random(7)
    assert calls == [(expected.uniform(0.0, 5.0), signal.SIGTERM) for _ in range(3)]
    out = capsys.readouterr().out
    assert "SIGTERM drill: 3 runs, seed 7" in out and "2 of 3 runs passed (seed 7)" in out
    assert "run 2/3: SIGTERM at " in out and "FAILED: a problem" in out
