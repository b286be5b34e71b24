"""The seed-race case of `python -m benchmarks` at --quick size: it runs, prints its figures,
and its landscapes are the ones it says."""

import sys
from pathlib import Path

import numpy as np
from quick_runs import run_quick

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))  # `benchmarks` is a folder of the repository

from analysis.seed_race import RaceDesign  # noqa: E402
from benchmarks.race import landscape, oracle_trials  # noqa: E402


def test_a_landscape_has_its_gap_and_spread():
    means = landscape(8, 0.5)
    assert len(means) == 8 and means[0] == 0 and means[1] == -0.5
    assert np.allclose(means[1:], -0.5 - np.linspace(0, 2, 7))


def test_an_oracle_race_drops_every_worse_candidate_after_round_1():
    design = RaceDesign(candidates=8)  # rounds 2, 1, 1, 1
    assert oracle_trials(landscape(8, 0.5), design) == 8 * 2  # the best alone is left
    assert oracle_trials(landscape(8, 0.0), design) == 8 * 2 + 2 * 3  # two tied race to 5


def test_the_race_case_runs_at_quick_size():
    done = run_quick("--only", "race")
    assert "all landscapes: trials grid x5 / race" in done.stdout
    assert "an oracle race (the ceiling)" in done.stdout
    assert "null K=8: verdict rejection on 5 fresh seeds" in done.stdout
    assert "K=8 gap=2.0 sd=0.3: grid x5 / race" in done.stdout
