"""Tests for analysis.stats.paired_ttest against scipy and hand computations."""

import math

import numpy as np
import pytest
from scipy import stats

from analysis.stats import paired_ttest

# 2 seeds x 6 examples of 0/1 scores, chosen so the differences vary.
SYSTEM = np.array([[1, 1, 0, 1, 1, 0],
                   [1, 0, 1, 1, 1, 1]], dtype=float)
BASELINE = np.array([[0, 1, 0, 0, 1, 0],
                     [1, 0, 0, 0, 1, 1]], dtype=float)


def test_agrees_with_scipy_on_seed_averaged_scores():
    result = paired_ttest(SYSTEM, BASELINE)
    expected = stats.ttest_rel(SYSTEM.mean(axis=0), BASELINE.mean(axis=0))
    assert result.statistic == pytest.approx(expected.statistic, abs=1e-12)
    assert result.p_value == pytest.approx(expected.pvalue, abs=1e-12)
    assert (result.n_seeds, result.n_examples) == (2, 6)


def test_averages_over_seeds_per_example():
    # Per-example seed means written out by hand.
    system_means = np.array([1.0, 0.5, 0.5, 1.0, 1.0, 0.5])
    baseline_means = np.array([0.5, 0.5, 0.0, 0.0, 1.0, 0.5])
    result = paired_ttest(SYSTEM, BASELINE)
    expected = stats.ttest_rel(system_means, baseline_means)
    assert result.mean_difference == pytest.approx(np.mean(system_means - baseline_means), abs=1e-12)
    assert result.mean_difference == pytest.approx(2.0 / 6.0, abs=1e-12)
    assert result.p_value == pytest.approx(expected.pvalue, abs=1e-12)


def test_confidence_interval_is_the_t_interval_around_the_mean_difference():
    result = paired_ttest(SYSTEM, BASELINE)
    differences = SYSTEM.mean(axis=0) - BASELINE.mean(axis=0)
    n = differences.size
    half_width = stats.t.ppf(0.975, n - 1) * differences.std(ddof=1) / math.sqrt(n)
    assert result.ci_low < result.mean_difference < result.ci_high
    assert result.ci_low == pytest.approx(differences.mean() - half_width, abs=1e-12)
    assert result.ci_high == pytest.approx(differences.mean() + half_width, abs=1e-12)


def test_identical_scores_give_p_value_one():
    result = paired_ttest(SYSTEM, SYSTEM.copy())
    assert result.p_value == 1.0
    assert result.mean_difference == 0.0
    assert result.statistic == 0.0
    assert (result.ci_low, result.ci_high) == (0.0, 0.0)


def test_constant_nonzero_difference_is_certain():
    result = paired_ttest(BASELINE + 0.5, BASELINE)
    assert result.p_value == 0.0
    assert result.statistic == math.inf
    assert result.ci_low == result.ci_high == pytest.approx(0.5)


def test_shape_mismatch_names_both_shapes():
    with pytest.raises(ValueError, match=r"\(2, 6\).*\(2, 5\)"):
        paired_ttest(SYSTEM, BASELINE[:, :5])


def test_one_dimensional_input_is_refused():
    with pytest.raises(ValueError, match="seeds, examples"):
        paired_ttest(SYSTEM[0], BASELINE[0])
