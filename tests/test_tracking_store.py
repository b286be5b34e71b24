"""The tracking store: two sweeps that create one new SQLite store at the same moment."""

import subprocess
import sys

from sweep_helpers import REPO

# What a sweep does with the store before Ray starts: check (and create) it, then write.
SWEEP_START = """
import sys
from mlflow.tracking import MlflowClient
from sweeps.tracking import check_tracking_uri, ensure_experiment
uri, name = sys.argv[1], sys.argv[2]
check_tracking_uri(uri)
client = MlflowClient(uri)
client.create_run(ensure_experiment(client, name, uri))
"""


def test_two_sweeps_creating_one_new_sqlite_store_together_both_start(tmp_path):
    # Without the lock, MLflow's schema creation races: one of two fails most times
    # ("table ... already exists"; 5 of 6 processes in 3 tries here).
    for attempt in range(3):
        uri = f"sqlite:///{tmp_path}/mlflow-{attempt}.db"
        starts = [
            subprocess.Popen(
                [sys.executable, "-c", SWEEP_START, uri, f"sweep_{k}"],
                cwd=REPO,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            for k in range(2)
        ]
        for start in starts:
            output, _ = start.communicate(timeout=120)
            assert start.returncode == 0, output


def test_a_store_that_cannot_be_written_is_refused_before_ray_starts(tmp_path, capsys):
    import shutil

    import pytest

    from sweeps import ear_xnli
    from sweeps.cli import main
    from sweeps.tracking import check_tracking_uri

    chattr = shutil.which("chattr")
    database = tmp_path / "mlflow.db"
    uri = f"sqlite:///{database}"
    check_tracking_uri(uri)  # creates the store
    capsys.readouterr()
    # Root writes through file modes, so the file is made immutable instead.
    if chattr is None or subprocess.run([chattr, "+i", str(database)]).returncode != 0:
        pytest.skip("chattr +i is not available on this file system")
    try:
        assert main(ear_xnli, ["--tracking-uri", uri, "--set", "seeds=0"]) == 2
    finally:
        subprocess.run([chattr, "-i", str(database)], check=True)
    error = capsys.readouterr().err.strip()
    assert "Traceback" not in error and error.splitlines()[-1].startswith("error: "), error
    assert "a SQLite file this user can write" in error and "readonly" in error
