"""The contention case's parts: the busy processes end with the block, the trial's threads
are set or left to torch, its settings are a trial's, its closing JSON is read; and the
case's lines (`--quick`)."""

import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import scaled_timeout, what_went_wrong

REPO = Path(__file__).resolve().parents[2]
# `benchmarks` is a folder of the repository, not an installed package.
sys.path.insert(0, str(REPO))

from benchmarks.contention import (  # noqa: E402
    QUICK_SETTINGS,
    TRIAL_SETTINGS,
    busy_processes,
    timed_trial,
    trial_command,
    trial_environment,
)
from xlt_core.__main__ import parse_arguments  # noqa: E402
from xlt_core.config import TrialConfig, parse_assignments  # noqa: E402


def test_busy_processes_run_in_the_block_and_are_killed_when_it_fails():
    with pytest.raises(RuntimeError, match="the block failed"):
        with busy_processes(2) as processes:
            assert len(processes) == 2
            assert all(process.poll() is None for process in processes)
            raise RuntimeError("the block failed")
    assert all(process.poll() is not None for process in processes)


def _ended(pid: int) -> bool:
    """Gone, or a zombie nobody has reaped yet."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_busy_processes_end_when_a_killed_benchmark_cannot_stop_them():
    code = (
        f"import sys, time; sys.path.insert(0, {str(REPO)!r})\n"
        "from benchmarks.contention import busy_processes\n"
        "with busy_processes(1) as processes:\n"
        "    print(processes[0].pid, flush=True); time.sleep(600)\n"
    )
    benchmark = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    busy = int(benchmark.stdout.readline())
    assert not _ended(busy)
    benchmark.kill()  # SIGKILL: its `finally` never runs
    benchmark.wait()
    deadline = time.monotonic() + scaled_timeout(600)
    while not _ended(busy) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _ended(busy)


def test_threads_are_set_explicitly_or_left_to_torch(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    assert trial_environment(1)["OMP_NUM_THREADS"] == "1"
    assert "OMP_NUM_THREADS" not in trial_environment(None)
    assert str(REPO) in trial_environment(None)["PYTHONPATH"]


@pytest.mark.parametrize("settings", [TRIAL_SETTINGS, QUICK_SETTINGS])
def test_the_command_is_a_valid_trial(settings, tmp_path):
    command = trial_command(settings, tmp_path / "cache")
    assert command[1:3] == ["-m", "xlt_core"]
    args = parse_arguments(command[3:])
    config = TrialConfig.from_dict(parse_assignments(args.set))
    assert config.model == "tiny" and config.cache_dir == str(tmp_path / "cache")
    assert config.epochs == settings["epochs"]


def test_the_trial_s_wall_and_training_seconds_are_read_from_its_output(tmp_path):
    script = (
        "import json; print('step 1: train/loss=1.0'); "
        "print(json.dumps({'metrics': {'a': 1}, 'train_seconds': 3.5}, indent=2))"
    )
    wall, training = timed_trial([sys.executable, "-c", script], {}, tmp_path)
    assert training == 3.5 and wall > 0
    with pytest.raises(RuntimeError, match="exited 3"):
        timed_trial([sys.executable, "-c", "raise SystemExit(3)"], {}, tmp_path)


@pytest.mark.slow
def test_quick_contention_case_prints_its_lines():
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--only", "contention"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=scaled_timeout(400),
    )
    assert done.returncode == 0, what_went_wrong(done)
    for line in (
        "trial wall, quiet (quick",
        "trial slowdown beside 2 busy loops on",
        "OMP_NUM_THREADS=",
        "threads not set",
    ):
        assert line in done.stdout, line
