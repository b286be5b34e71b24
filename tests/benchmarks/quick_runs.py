"""`python -m benchmarks --quick ...` as the benchmark tests run it: in the repository, its
exit status 0 and no case failed with an error."""

import subprocess
import sys
from pathlib import Path

from conftest import scaled_timeout, what_went_wrong

REPO = Path(__file__).resolve().parents[2]


def run_quick(*args: str, timeout: int = 900) -> subprocess.CompletedProcess:
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=scaled_timeout(timeout),
    )
    assert completed.returncode == 0, what_went_wrong(completed)
    assert "ERROR" not in completed.stdout, what_went_wrong(completed)
    return completed
