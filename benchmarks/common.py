"""What every case shares: the result row and its verdict, the run's settings, the machine.

Standard library only, so that a worker process (`benchmarks.significance`) can import it
before numpy loads and still hold BLAS to one thread.
"""

from __future__ import annotations

import os
import platform
import re
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from xlt_core.cpus import available_cpus  # standard library only, as this module

REPO = Path(__file__).resolve().parents[1]
# The shared data sample, beside the repository (../shared/data from its root).
DEFAULT_DATA_DIR = REPO.parent / "shared" / "data"

# A target is a comparison and a bound: ("<=", 2.1) means the figure must be at most 2.1.
Target = tuple[str, float]


class Result(NamedTuple):
    """One printed line: the figure measured, its unit, the target (None: no target) and
    whether it was met (None: no target, or the case was skipped)."""

    name: str
    figure: float | None
    unit: str
    target: Target | None
    passed: bool | None
    note: str = ""


def measured(
    name: str, figure: float, unit: str, target: Target | None = None, note: str = ""
) -> Result:
    """A measured figure, checked against its target when it has one."""
    return Result(name, figure, unit, target, meets(figure, target), note)


def skipped(name: str, reason: str) -> Result:
    """A case that could not run here (its data is missing, say): no figure, no verdict."""
    return Result(name, None, "", None, None, f"skipped: {reason}")


def meets(figure: float, target: Target | None) -> bool | None:
    if target is None:
        return None
    comparison, bound = target
    if comparison == "<=":
        return figure <= bound
    if comparison == ">=":
        return figure >= bound
    raise ValueError(f"unknown comparison {comparison!r}")


def verdict(result: Result) -> str:
    if result.figure is None:
        return "SKIP"
    if result.passed is None:
        return "-"
    return "PASS" if result.passed else "MISS"


def format_figure(value: float | None) -> str:
    """Three or four significant digits, no exponent for the figures this suite prints."""
    if value is None:
        return "-"
    size = abs(value)
    if size >= 100:
        return f"{value:.0f}"
    if size >= 10:
        return f"{value:.1f}"
    if size >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def format_target(result: Result) -> str:
    if result.target is None:
        return "-"
    comparison, bound = result.target
    return f"{comparison} {format_figure(bound)} {result.unit}".rstrip()


@dataclass(frozen=True)
class Settings:
    """What every case is given: quick (tiny sizes: checks that the case runs, measures
    nothing), where the shared data is, a scratch directory for caches (tokenizer,
    encodings) shared by the cases and their worker processes."""

    quick: bool
    data_dir: Path
    scratch: Path

    @property
    def xnli_train(self) -> Path:
        return self.data_dir / "xnli" / "train-en.tsv"

    @property
    def xnli_test(self) -> Path:
        return self.data_dir / "xnli" / "test-en.tsv"


def cpu_count() -> int:
    """The CPUs this process may run on (what `nproc` prints), as `python -m xlt_core`
    counts them."""
    return available_cpus()


def status_bytes(field: str) -> int:
    """A memory figure of this process from `/proc/self/status` (`VmRSS`, `VmHWM`), in bytes.
    `VmHWM` is the peak of this process's own memory since its exec; `ru_maxrss` is not: it
    keeps the peak of whatever process forked it, across the exec."""
    text = Path("/proc/self/status").read_text()
    return int(re.search(rf"^{field}:\s+(\d+) kB", text, re.MULTILINE).group(1)) * 1024


def cpu_model() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.processor() or platform.machine()
    found = re.search(r"^model name\s*:\s*(.+)$", text, re.MULTILINE)
    return found.group(1).strip() if found else platform.machine()


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def run_in_own_session(
    command: list[str], workdir: Path, env: dict, log_path: Path, timeout_s: int
):
    """Run `command` in `workdir` with its output in `log_path`, in its own session so that it
    and the Ray it starts are stopped together on a timeout: (exit code, or "killed after N
    s", start and end times since the epoch)."""
    with open(log_path, "w") as log:
        started = time.time()
        process = subprocess.Popen(
            command, cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        try:
            code = process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            code = f"killed after {timeout_s} s"
    return code, started, time.time()
