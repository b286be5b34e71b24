"""The CPUs this process may run on, which a lone trial sizes torch's thread pool by."""

from __future__ import annotations

import os


def available_cpus() -> int:
    """The CPUs of this process's affinity mask (what `nproc` prints: fewer than the
    machine's under taskset or a container's cpuset), else the machine's count."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity on this platform (macOS, Windows)
        return os.cpu_count() or 1


# OpenMP's own setting, which a user sets to share a machine with other CPU-bound work.
THREADS_VARIABLE = "OMP_NUM_THREADS"


def torch_threads(requested: int | None = None) -> int:
    """Torch's intra-op threads for a lone trial: `requested` (`--threads`), else an explicit
    OMP_NUM_THREADS (a positive integer; anything else is ignored, as OpenMP ignores it),
    else the CPUs of the affinity mask."""
    if requested:
        return requested
    explicit = os.environ.get(THREADS_VARIABLE, "").strip()
    if explicit.isdigit() and int(explicit) > 0:
        return int(explicit)
    return available_cpus()
