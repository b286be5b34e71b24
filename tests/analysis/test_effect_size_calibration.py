"""`python -m analysis.effect_size_calibration`, the command behind docs/statistics.md's
coverage table of P(new seed beats the baseline): its truth on a test set against runs drawn
one by one, and its table at a tiny size."""

import numpy as np
import pytest

from analysis.calibration_model import NOISE_SD, Cell
from analysis.effect_size_calibration import CoverageCell, main, simulate, true_probability


def test_the_truth_on_a_test_set_is_what_fresh_runs_on_it_give():
    # One fixed test set of 1,000 examples; the system helps some examples more than others.
    rng = np.random.default_rng(5)
    baseline = rng.standard_normal(1000) + 0.5
    system = baseline + 0.3 * rng.standard_normal(1000) + 0.02
    tau = 0.03
    truth = true_probability(system[None], baseline[None], tau)[0]

    def accuracies(means: np.ndarray, runs: int) -> np.ndarray:
        shift = tau * rng.standard_normal((runs, 1))
        return (means + shift + NOISE_SD * rng.standard_normal((runs, means.size)) > 0).mean(1)

    x, y = accuracies(system, 3000), accuracies(baseline, 3000)
    drawn = ((x[:, None] > y[None]) + 0.5 * (x[:, None] == y[None])).mean()
    # 3,000 runs a side: the pairs' share has a standard error of about 0.007 here.
    assert 0.55 < truth < 0.9  # 0.611
    assert drawn == pytest.approx(truth, abs=0.025)


def test_without_a_difference_or_own_example_effects_the_truth_is_one_half():
    setting = CoverageCell(Cell(400, 3, 0.6, 0.7, False), 3, 3)
    system, baseline, truth = simulate(np.random.default_rng(0), setting, 4)
    assert system.shape == (4, 3) and baseline.shape == (4, 3)
    assert truth == pytest.approx(0.5, abs=1e-9)


def test_the_table_has_a_row_per_cell_with_both_intervals_coverage(capsys):
    main(["--repeats", "6", "--examples", "200", "--seeds", "3:3,5:3", "--seed-sd", "0.6"])
    lines = capsys.readouterr().out.splitlines()
    rows = [line for line in lines if line.startswith(("| 3 / 3 |", "| 5 / 3 |"))]
    # 2 seed counts x (the methods agree, disagree) x (no difference, 1 point).
    assert len(rows) == 8
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert all(0 <= float(cell) <= 100 for cell in cells[5:7])


def test_seed_counts_below_two_are_refused():
    with pytest.raises(SystemExit):
        main(["--seeds", "1:3"])
