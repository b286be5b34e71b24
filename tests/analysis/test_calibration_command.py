"""`python -m analysis.calibration`, the command behind docs/statistics.md's calibration table,
at a tiny size: its table has a row per cell and a rate per test, and refuses bad options."""

import subprocess
import sys

import pytest
from conftest import scaled_timeout
from sweep_helpers import REPO

from analysis.calibration import main

TINY = ["--examples", "50", "--seeds", "3", "--seed-sd", "0.6", "--accuracy", "0.7"]
TINY += ["--repeats", "20", "--resamples", "20"]


def _rates(line: str) -> list[float]:
    cells = [cell.strip() for cell in line.strip("|").split("|")]
    return [float(cell) for cell in cells[7:] if cell != "–"]


def test_the_table_has_a_row_per_cell_and_a_rate_per_test(capsys):
    main([*TINY, "--kinds", "accuracy,ner"])
    lines = capsys.readouterr().out.splitlines()
    assert "| crossed | ttest | bootstrap | permutation |" in lines[1]
    rows = [line for line in lines if line.startswith("| accuracy") or line.startswith("| ner")]
    # 2 kinds x 2 (the methods agree or disagree); NER has no seed-averaged score tests.
    assert len(rows) == 4
    for row in rows:
        rates = _rates(row)
        assert len(rates) == (2 if row.startswith("| ner") else 4)
        assert all(0 <= rate <= 100 for rate in rates)


def test_unknown_tests_are_refused():
    with pytest.raises(SystemExit):
        main([*TINY, "--tests", "wilcoxon"])


@pytest.mark.slow
def test_the_documented_command_runs():
    completed = subprocess.run(
        [sys.executable, "-m", "analysis.calibration", *TINY, "--tests", "crossed,ttest"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=scaled_timeout(300),
    )
    assert completed.returncode == 0, completed.stderr
    assert "| accuracy | 50 | 3 | 0.6 | 0.7 | no | 0 |" in completed.stdout
