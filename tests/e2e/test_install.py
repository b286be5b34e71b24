"""The analysis-only install, as a researcher from another lab makes it: a fresh virtualenv,
`pip install <repository>` (the base dependencies only, not editable, with the lock
constraints.txt), in which neither torch nor Ray imports, and `python -m analysis report`
rebuilds a sweep's report from its tracking store."""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import scaled_timeout, what_went_wrong

from benchmarks.scale_store import StorePlan, build_store

REPO = Path(__file__).resolve().parents[2]
# A small store of the EAR sweep's paper preset, as the scale benchmark's quick case builds it.
STORE = StorePlan("ear_xnli", 4, 50, seeds=2, languages=2)

pytestmark = pytest.mark.slow


def source_copy(destination: Path) -> Path:
    """The repository's files (tracked, and new ones git does not ignore) copied to
    `destination`: building from the working tree would leave build/ and *.egg-info in it."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        timeout=scaled_timeout(30),
    ).stdout
    for name in filter(None, listed.split("\0")):
        if (REPO / name).is_file():  # not a tracked file deleted in the working tree
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, destination / name)
    return destination


def run(argv: list[str], cwd: Path, base_timeout: float) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    environment.pop("PYTHONPATH", None)  # the fresh venv sees only what it installed
    return subprocess.run(
        argv,
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=scaled_timeout(base_timeout),
    )


def test_analysis_only_install_reports_without_torch_or_ray(tmp_path):
    started = time.monotonic()
    source = source_copy(tmp_path / "source")
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", str(venv)], check=True, timeout=scaled_timeout(60)
    )
    python = str(venv / "bin" / "python")
    constraints = str(source / "constraints.txt")
    installed = run([python, "-m", "pip", "install", str(source), "-c", constraints], tmp_path, 600)
    assert installed.returncode == 0, what_went_wrong(installed)
    install_s = time.monotonic() - started

    for absent in ("torch", "ray"):
        imported = run([python, "-c", f"import {absent}"], tmp_path, 60)
        assert imported.returncode != 0 and f"No module named '{absent}'" in imported.stderr
    # The installed package, not the source tree (cwd is tmp_path, not a checkout).
    where = run([python, "-c", "import analysis; print(analysis.__file__)"], tmp_path, 60)
    assert where.stdout.strip().startswith(str(venv)), where.stdout + where.stderr

    uri, experiment = build_store(STORE, tmp_path)
    out = tmp_path / "report"
    report = [python, "-m", "analysis", "report", "--experiment", experiment]
    report += ["--tracking-uri", uri, "--out", str(out)]
    reported = run(report, tmp_path, 300)
    assert reported.returncode == 0, what_went_wrong(reported)
    assert (out / "report.md").is_file(), reported.stdout[-3000:]
    venv_mb = sum(f.stat().st_size for f in venv.rglob("*") if f.is_file()) / 2**20
    total_s = time.monotonic() - started
    print(f"install {install_s:.0f} s, venv {venv_mb:.0f} MB; install to report {total_s:.0f} s")
