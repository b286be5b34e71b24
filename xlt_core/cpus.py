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
