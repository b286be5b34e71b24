import gc
import math
import os
import re
import subprocess
from pathlib import Path

import pytest

# The hubs are unreachable here: fail fast instead of waiting on the network.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

# Every wall-clock limit a test puts on a wait (a subprocess, a driver, a condition polled) is
# `scaled_timeout(base)`: `base` is a few times what the wait takes on an idle 2-core machine,
# multiplied by XLT_TEST_TIMEOUT_SCALE (default 3), and never under MIN_TIMEOUT_S, so that a
# busy 2-core machine passes and a slower one only needs this one setting raised; a hang
# still fails, after that limit.
TIMEOUT_SCALE_VARIABLE = "XLT_TEST_TIMEOUT_SCALE"
DEFAULT_TIMEOUT_SCALE = 3.0
MIN_TIMEOUT_S = 600.0


def scaled_timeout(base_s: float) -> float:
    """`base_s` seconds times XLT_TEST_TIMEOUT_SCALE (a positive finite number; default 3),
    at least MIN_TIMEOUT_S."""
    raw = os.environ.get(TIMEOUT_SCALE_VARIABLE, "").strip()
    try:
        scale = float(raw) if raw else DEFAULT_TIMEOUT_SCALE
    except ValueError:
        scale = math.nan
    if not (math.isfinite(scale) and scale > 0):
        raise pytest.UsageError(f"{TIMEOUT_SCALE_VARIABLE}={raw!r}: a positive number, e.g. 3")
    return max(base_s * scale, MIN_TIMEOUT_S)


def what_went_wrong(completed: subprocess.CompletedProcess) -> str:
    """A failed command's exit status, the lines of its output that name a failure (a failed
    trial's one line is often far above the tail), then the tails of its output."""
    output = completed.stdout + completed.stderr
    named = [line for line in output.splitlines() if re.search(r"failed:|Error\b|Traceback", line)]
    return (
        f"exited {completed.returncode}; lines naming a failure:\n"
        + "\n".join(named[:40])
        + "\n--- the output's tails ---\n"
        + completed.stdout[-3000:]
        + completed.stderr[-3000:]
    )


# The shared data samples beside the repository (`../shared/data` from its root).
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def require_shared_data(*subdirs: str) -> Path:
    """SHARED_DATA, or skip the calling test naming the sample that is missing."""
    for subdir in subdirs:
        if not (SHARED_DATA / subdir).is_dir():
            pytest.skip(f"the shared data sample {SHARED_DATA / subdir} is missing")
    return SHARED_DATA


@pytest.fixture
def shared_data() -> Path:
    return require_shared_data("xnli")


@pytest.fixture(autouse=True)
def default_logging():
    """Each test starts with the project's logging as a command sets it up by default
    (xlt_schema/log.py: INFO, on the current stdout), whatever -q or -v a test before it
    passed to a command it ran in process."""
    from xlt_schema.log import configure

    configure(0)


@pytest.fixture(scope="session")
def session_root(tmp_path_factory, worker_id) -> Path:
    """A directory of this test session that every pytest-xdist worker sees (the parent of the
    workers' own temporary directories), for what they share."""
    base = tmp_path_factory.getbasetemp()
    return base if worker_id == "master" else base.parent


# The smoke sweeps shared by the whole session: each is run once, by the first worker whose
# test asks for it, and read by every test that only reads a finished sweep
# (sweep_helpers.SharedSweep).
@pytest.fixture(scope="session")
def ear_xnli_smoke(session_root):
    """`python sweeps/ear_xnli.py --preset smoke` (what `make demo` runs), shrunk by
    sweep_helpers.DEMO_SETTINGS; it makes its tracking store, as a first `make demo` does."""
    from sweep_helpers import DEMO_SETTINGS, run_shared_sweep

    return run_shared_sweep("ear_xnli", session_root, DEMO_SETTINGS, new_store=True)


@pytest.fixture(scope="session")
def robust_xnli_smoke(ear_xnli_smoke, session_root):
    """`python sweeps/robust_xnli.py --preset smoke` (ROBUST_SETTINGS) tracked in a copy of
    the demo's store, as the README runs the two sweeps before `analysis compare`."""
    from sweep_helpers import ROBUST_SETTINGS, run_shared_sweep

    return run_shared_sweep("robust_xnli", session_root, ROBUST_SETTINGS, ear_xnli_smoke)


@pytest.fixture(scope="session")
def adjust_xnli_smoke(session_root):
    """`python sweeps/adjust_xnli.py --preset smoke`, shrunk by ADJUST_SETTINGS."""
    from sweep_helpers import ADJUST_SETTINGS, run_shared_sweep

    return run_shared_sweep("adjust_xnli", session_root, ADJUST_SETTINGS)


def pytest_unconfigure(config):
    """Leave the objects the tests made to the end of the process, uncollected: Python's
    final garbage collection over them took each pytest-xdist worker seconds to exit (1.2
    CPU-s for a process that only imported torch and transformers' BERT; the controller waited
    up to 5.5 s for the workers at the end of `make test-fast`). Only pytest's own objects
    remain; files the tests wrote are closed by then."""
    gc.freeze()


def pytest_collection_modifyitems(items):
    """Slow tests first. `make test` hands whole files to its pytest-xdist workers in the
    order of their first test (`--dist loadfile --no-loadscope-reorder`), so the files with
    sweeps start first and both workers end on short tests, rather than one running a sweep
    while the other waits. By file, since a worker runs a module's shared fixture (a sweep)
    for the tests it is sent: pytest-xdist's finer `--dist loadgroup` has no effect under
    pytest 9 (its group suffix is written to a node attribute pytest no longer reads)."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
