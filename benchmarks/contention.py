"""Contention case: one trial on a machine shared with other CPU-bound work.

The smoke sweep's trial (`sweeps.spec.experiment.SMOKE_TRAINING`: the tiny model on synthetic
XNLI, one epoch here) runs as `python -m xlt_core` three times after an untimed run that
fills the caches (tokenizer, encodings): quiet, with torch's default threads; then beside
BUSY_PROCESSES pure-Python busy loops (started by the case, killed in a `finally`), once
with OMP_NUM_THREADS set to the CPUs they leave free (at least 1), as docs/usage.md advises,
and once without it (torch takes every CPU: its threads wait on each other at every
parallel region while the busy loops hold the CPUs, the collapse the advice avoids). The
figures are the trial's wall time and the two slowdowns against the quiet run; the target
is the CPU share the trial gets: about 2x on 2 cores beside two busy loops.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

from benchmarks.common import REPO, Result, Settings, cpu_count, measured
from sweeps.spec.experiment import SMOKE_TRAINING
from xlt_core.cpus import THREADS_VARIABLE

BUSY_PROCESSES = 2
# Busy while the process that started it (`{parent}`, its pid, given: a benchmark killed before
# the loop's first line would otherwise be missed) lives: a benchmark killed by a signal (no
# `finally`) leaves none running for ever.
BUSY_LOOP = "import os\nwhile os.getppid() == {parent}:\n    for _ in range(1_000_000): pass"
TRIAL_SETTINGS = {**SMOKE_TRAINING, "epochs": 1.0}
# --quick: a 2-layer model on 200 pairs for half an epoch: seconds, a check that it runs.
QUICK_SETTINGS = {
    **SMOKE_TRAINING,
    "epochs": 0.5,
    "max_train_examples": 200,
    "max_eval_examples": 50,
    "tiny_layers": 2,
    "layer": 2,
}
SLOWDOWN_TARGET = ("<=", 2.2)
TIMEOUT_S = 600  # the run without threads set can take many times the quiet one


def trial_command(settings: dict, cache_dir: Path) -> list[str]:
    assignments = {**settings, "cache_dir": str(cache_dir)}
    sets = [part for key, value in assignments.items() for part in ("--set", f"{key}={value}")]
    return [sys.executable, "-m", "xlt_core", *sets]


def trial_environment(threads: int | None) -> dict[str, str]:
    """This process's environment with OMP_NUM_THREADS = `threads`, or without it (None:
    torch's default, every CPU); the repository importable."""
    env = {k: v for k, v in os.environ.items() if k != THREADS_VARIABLE}
    if threads is not None:
        env[THREADS_VARIABLE] = str(threads)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def timed_trial(command: list[str], env: dict[str, str], workdir: Path) -> tuple[float, float]:
    """Run the trial; its wall seconds and the training seconds it reports."""
    started = time.perf_counter()
    done = subprocess.run(
        command, cwd=workdir, env=env, capture_output=True, text=True, timeout=TIMEOUT_S
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr[-3000:]}")
    # The trial's closing JSON: the last lines of stdout, from the line that opens it.
    lines = done.stdout.splitlines()
    opening = max(i for i, line in enumerate(lines) if line == "{")
    return wall, json.loads("\n".join(lines[opening:]))["train_seconds"]


@contextlib.contextmanager
def busy_processes(count: int) -> Iterator[list[subprocess.Popen]]:
    """`count` CPU-bound Python processes for the duration of the block, killed after it
    (also when the block fails); each ends by itself once this process is gone."""
    processes: list[subprocess.Popen] = []
    try:
        for _ in range(count):
            processes.append(
                subprocess.Popen([sys.executable, "-c", BUSY_LOOP.format(parent=os.getpid())])
            )
        yield processes
    finally:
        for process in processes:
            process.kill()
        for process in processes:
            process.wait()


def contention(settings: Settings) -> Iterator[Result]:
    cpus = cpu_count()
    workdir = settings.scratch / "contention"
    workdir.mkdir()
    command = trial_command(QUICK_SETTINGS if settings.quick else TRIAL_SETTINGS, workdir / "cache")
    advised = max(1, cpus - BUSY_PROCESSES)
    timed_trial(command, trial_environment(None), workdir)  # fills the caches
    quiet = timed_trial(command, trial_environment(None), workdir)
    with busy_processes(BUSY_PROCESSES):
        explicit = timed_trial(command, trial_environment(advised), workdir)
        default = timed_trial(command, trial_environment(None), workdir)
    size = "quick" if settings.quick else "smoke trial, 1 epoch"
    yield measured(
        f"trial wall, quiet ({size}, {cpus} threads)",
        quiet[0],
        "s",
        note=f"training {quiet[1]:.1f} s",
    )
    busy = f"beside {BUSY_PROCESSES} busy loops on {cpus} CPUs"
    yield measured(
        f"trial slowdown {busy}, {THREADS_VARIABLE}={advised}",
        explicit[0] / quiet[0],
        "x",
        None if settings.quick else SLOWDOWN_TARGET,
        f"{explicit[0]:.1f} s wall, training {explicit[1]:.1f} s",
    )
    yield measured(
        f"trial slowdown {busy}, threads not set ({cpus})",
        default[0] / quiet[0],
        "x",
        note=f"{default[0]:.1f} s wall, training {default[1]:.1f} s: what the advice avoids",
    )
