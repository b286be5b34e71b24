"""The effect sizes over seeds (analysis/effect_sizes.py) against worked examples, scipy and
deepsig's own outputs."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis.effect_sizes import (
    AVERAGE,
    effect_size_table,
    epsilon_min,
    probability_of_improvement,
    violation_ratio,
)

# Fixed per-seed scores, and what deepsig 1.2.8 (numpy 2.4.6, scipy 1.17.1, in a clean venv)
# gave for them: `deepsig.aso.compute_violation_ratio(a, b, dt=0.0001)`, and the mean of
# `deepsig.aso(a, b, seed=s, dt=0.001, show_progress=False)` (confidence_level 0.95 and 1,000
# bootstrap iterations, its defaults) over s in (0, 10000, ..., 40000) (NORMALS_10: up to
# 140000, 15 draws): deepsig seeds iteration i with s + i, so the draws use disjoint seeds.
# One draw's sd over seeds is 0.011-0.017, the mean's 0.004-0.006.
OVERLAP_3V4 = ([0.70, 0.74, 0.69], [0.71, 0.70, 0.73, 0.68])
NORMALS_10 = (
    [0.8456, 1.3216, 0.8304, -0.8032, 1.4054, 0.9464, -0.037, 1.0811, 0.8646, 0.7941],
    [0.1891, -0.5227, -0.4131, -2.4415, 1.7997, 1.1442, -0.3254, 0.7738, 0.2812, -0.5538],
)
FIVE_VS_FIVE = ([0.812, 0.825, 0.807, 0.831, 0.819], [0.801, 0.815, 0.798, 0.822, 0.810])
DEEPSIG_VIOLATION_RATIO = {"overlap": 0.16655558517728666, "normals": 0.01768529510187722}


# ---------------------------------------------------------------- P(new seed beats baseline)


def test_probability_of_improvement_is_the_mann_whitney_share_of_pairs():
    # Pairs (x, y): 1 beats 0; 2 beats 0 and ties both 2s; 3 beats all three -> 6 of 9.
    estimate, low, high = probability_of_improvement([1.0, 2.0, 3.0], [2.0, 2.0, 0.0])
    assert estimate == pytest.approx(6 / 9)
    assert 0 <= low < high <= 1  # from 3 seeds per side, an interval
    _, low, high = probability_of_improvement([1.0, 2.0, 3.0], [2.0, 0.0])
    assert np.isnan(low) and np.isnan(high)  # 2 baseline seeds: none
    rng = np.random.default_rng(4)
    for n, m in ((5, 5), (6, 9), (12, 7)):
        system = rng.integers(60, 70, n) / 100  # ties on purpose
        baseline = rng.integers(58, 68, m) / 100
        u = stats.mannwhitneyu(system, baseline).statistic
        assert probability_of_improvement(system, baseline)[0] == pytest.approx(u / (n * m))


def test_probability_of_improvement_at_the_extremes():
    assert probability_of_improvement([0.9, 0.8], [0.7, 0.6])[0] == 1.0
    assert probability_of_improvement([0.6, 0.7], [0.8, 0.9])[0] == 0.0
    assert probability_of_improvement([0.8, 0.8], [0.8, 0.8])[0] == 0.5
    assert all(np.isnan(probability_of_improvement([0.9], [0.5, 0.6])))


def test_probability_interval_from_five_seeds_brackets_the_estimate():
    estimate, low, high = probability_of_improvement(*FIVE_VS_FIVE)
    assert estimate == pytest.approx(19 / 25)  # 3 + 5 + 2 + 5 + 4 of the 25 pairs
    assert 0 <= low < estimate < high <= 1
    assert probability_of_improvement(*FIVE_VS_FIVE) == (estimate, low, high)  # no draws


@pytest.mark.parametrize("seeds", [(3, 3), (5, 5), (5, 3)])
def test_probability_interval_covers_the_true_probability(seeds):
    # Normal seed scores one sd apart: P(X > Y) = Phi(1 / sqrt 2) = 0.760. The percentile
    # bootstrap of 0.5.0 covered it 90% of the time at 5 seeds and 70% at 3 (its docs); the
    # noncentral-t interval is exact for normal scores but for Welch's df. 300 repeats: a
    # binomial sd of 1.3 points at 95%.
    truth = stats.norm.cdf(1 / np.sqrt(2))
    rng = np.random.default_rng(sum(seeds))
    covered = 0
    for _ in range(300):
        system, baseline = rng.normal(1, 1, seeds[0]), rng.normal(0, 1, seeds[1])
        _, low, high = probability_of_improvement(system, baseline)
        covered += low <= truth <= high
    assert 0.91 <= covered / 300 <= 0.995


def test_probability_interval_holds_one_half_exactly_when_welchs_test_does_not_reject():
    # At P = 0.5 the noncentrality is 0: the interval's test is Welch's t-test (scipy's).
    rng = np.random.default_rng(11)
    for repeat in range(60):
        n, m = rng.integers(3, 8, size=2)
        system = rng.normal(rng.uniform(0, 2), rng.uniform(0.2, 2), n)
        baseline = rng.normal(0, rng.uniform(0.2, 2), m)
        _, low, high = probability_of_improvement(system, baseline)
        welch = stats.ttest_ind(system, baseline, equal_var=False).pvalue
        assert (low <= 0.5 <= high) == (welch >= 0.05), (repeat, welch, low, high)


def test_probability_interval_of_equal_seed_counts_is_the_noncentral_t_bound():
    # n = m: lambda = sqrt(n) Phi^-1(P), and the bounds put 2.5% of the noncentral t above
    # and below the observed t (scipy's nct, Welch's df).
    system, baseline = np.array(FIVE_VS_FIVE[0]), np.array(FIVE_VS_FIVE[1])
    _, low, high = probability_of_improvement(system, baseline)
    t, df = _welch(system, baseline)
    for bound, tail in ((low, 0.975), (high, 0.025)):
        noncentrality = np.sqrt(5) * stats.norm.ppf(bound)
        assert stats.nct.cdf(t, df, noncentrality) == pytest.approx(tail, abs=1e-6)


def _welch(system, baseline) -> tuple[float, float]:
    """Welch's t and df, by hand."""
    a, b = system.var(ddof=1) / system.size, baseline.var(ddof=1) / baseline.size
    t = (system.mean() - baseline.mean()) / np.sqrt(a + b)
    return t, (a + b) ** 2 / (a**2 / (system.size - 1) + b**2 / (baseline.size - 1))


def test_probability_interval_is_undefined_without_any_spread_among_the_seeds():
    estimate, low, high = probability_of_improvement([0.8, 0.8, 0.8], [0.7, 0.7, 0.7])
    assert estimate == 1.0 and np.isnan(low) and np.isnan(high)


def test_scores_that_are_not_finite_are_refused_by_name():
    with pytest.raises(ValueError, match="baseline: per-seed scores must be finite"):
        probability_of_improvement([0.7, 0.8], [0.7, float("nan")])
    with pytest.raises(ValueError, match="system: expected a non-empty 1-D array"):
        epsilon_min([], [0.7, 0.8])


# ------------------------------------------------------------------- ASO's epsilon_min


def test_violation_ratio_of_worked_examples():
    # System quantiles 0 on (0, 1/2], 3 after; baseline's 1, 2, 4 on thirds. Gaps (baseline -
    # system) 1, 2, -1, 1 on widths 1/3, 1/6, 1/6, 1/3: squared 1/3, 2/3, 1/6, 1/3, of
    # which all but the third are violations -> (4/3) / (3/2) = 8/9.
    assert violation_ratio([0.0, 3.0], [1.0, 2.0, 4.0]) == pytest.approx(8 / 9)
    assert violation_ratio([0.0, 4.0], [1.0, 2.0]) == pytest.approx(0.5 / 2.5)
    # OVERLAP_3V4 by hand: violated 1e-4 * (1/12 + 1/6) of a distance 1e-4 * 3/2 -> 1/6.
    assert violation_ratio(*OVERLAP_3V4) == pytest.approx(1 / 6)
    assert violation_ratio([0.8, 0.9], [0.6, 0.7]) == 0.0
    assert violation_ratio([0.6, 0.7], [0.8, 0.9]) == 1.0
    assert violation_ratio([0.7, 0.7], [0.7, 0.7]) == 0.5  # no distance: deepsig's 0.5


def test_violation_ratio_matches_deepsig_on_a_fine_grid():
    # deepsig sums a grid of step dt; at dt 0.0001 it is within 2e-4 of the exact integral.
    assert violation_ratio(*OVERLAP_3V4) == pytest.approx(
        DEEPSIG_VIOLATION_RATIO["overlap"], abs=2e-4
    )
    assert violation_ratio(*NORMALS_10) == pytest.approx(
        DEEPSIG_VIOLATION_RATIO["normals"], abs=2e-4
    )


def test_violation_ratio_is_antisymmetric_and_batched():
    system, baseline = NORMALS_10
    assert violation_ratio(system, baseline) + violation_ratio(baseline, system) == (
        pytest.approx(1.0)
    )
    batch = violation_ratio(np.array([system, baseline]), np.array([baseline, system]))
    assert batch == pytest.approx(
        [float(violation_ratio(system, baseline)), float(violation_ratio(baseline, system))]
    )


def test_epsilon_min_at_the_extremes():
    assert epsilon_min([0.85, 0.87], [0.70, 0.72]) == 0.0  # every resample dominates
    assert epsilon_min([0.70, 0.72], [0.85, 0.87]) == 1.0
    assert epsilon_min([0.8, 0.8, 0.8], [0.8, 0.8, 0.8]) == 0.5
    assert np.isnan(epsilon_min([0.9], [0.5, 0.6]))
    with pytest.raises(ValueError, match="confidence_level"):
        epsilon_min([0.8, 0.9], [0.7, 0.8], confidence_level=0.05)


def test_with_two_seeds_each_epsilon_min_only_says_whether_the_seeds_separate():
    # With 2 seeds per side, eps_min < 0.2 exactly when both system seeds beat both baseline
    # seeds (then it is 0): under no difference 1 of the 6 equally likely orders of the four
    # scores (docs/reports.md#effect-sizes).
    rng = np.random.default_rng(11)
    separated = 0
    for repeat in range(300):
        system, baseline = rng.normal(0, 1, 2), rng.normal(0, 1, 2)
        above = system.min() > baseline.max()
        separated += above
        value = epsilon_min(system, baseline, seed=repeat)
        assert (value < 0.2) == above
        assert (value == 0.0) == above
    assert 0.10 < separated / 300 < 0.24  # 1/6, binomial sd 0.02


@pytest.mark.parametrize(
    ("scores", "deepsig_mean"),
    [(OVERLAP_3V4, 0.8155), (NORMALS_10, 0.2342), (FIVE_VS_FIVE, 0.2571)],
)
def test_epsilon_min_matches_deepsig(scores, deepsig_mean):
    # 20,000 bootstrap samples make ours steady to about 0.002 (sd over generator seeds);
    # 0.02 is about three standard errors of the difference from deepsig's mean.
    assert epsilon_min(*scores, n_bootstrap=20_000) == pytest.approx(deepsig_mean, abs=0.02)


def test_epsilon_min_is_reproducible_and_upper_bounds_the_ratio():
    system, baseline = NORMALS_10
    assert epsilon_min(system, baseline) == epsilon_min(system, baseline)
    assert epsilon_min(system, baseline) > violation_ratio(system, baseline)
    # A stricter confidence level gives a higher bound.
    assert epsilon_min(system, baseline, 0.99) > epsilon_min(system, baseline, 0.95)


# --------------------------------------------------------------------- the report's table


def test_effect_size_table_takes_the_comparison_and_the_seed_scores():
    trials = pd.DataFrame(
        {
            "config_key": ["sel"] * 3 + ["base"] * 3,
            "test/es/accuracy": [0.80, 0.84, 0.82, 0.70, 0.72, 0.83],
            "test/de/accuracy": [0.79, np.nan, 0.78, 0.70, 0.71, 0.69],
        }
    )
    comparison = pd.DataFrame(
        {
            "lang": ["de", "es"],
            "metric": ["accuracy", "accuracy"],
            "mean_difference": [0.085, 0.07],
            "ci_low": [0.01, -0.02],
            "ci_high": [0.16, 0.16],
            "test": ["crossed", "crossed"],
        }
    )
    average = {"mean_difference": 0.0775, "ci_low": 0.001, "ci_high": 0.154, "test": "crossed"}
    table = effect_size_table(comparison, trials, ("sel", "base"), "test", average)
    table = table.set_index("lang")
    assert table.loc["es", "mean_difference"] == 0.07  # the comparison's, as it is
    assert (table.loc["es", "ci_low"], table.loc["es", "ci_high"]) == (-0.02, 0.16)
    # es: 0.80, 0.84, 0.82 against 0.70, 0.72, 0.83 win 2 + 3 + 2 of 9 pairs.
    assert table.loc["es", "p_improvement"] == pytest.approx(7 / 9)
    assert table.loc["es", "epsilon_min"] == epsilon_min([0.80, 0.84, 0.82], [0.70, 0.72, 0.83])
    # de: the seed that logged nothing is left out; two seeds beat three.
    assert (table.loc["de", "n_seeds_system"], table.loc["de", "n_seeds_baseline"]) == (2, 3)
    assert table.loc["de", "p_improvement"] == 1.0
    assert table.loc["de", "epsilon_min"] == 0.0
    assert np.isnan(table.loc["de", "p_improvement_low"])  # fewer than 5 seeds
    # The average: the test's figures as given; seeds' means over de and es, the seed
    # without de left out: (0.795, 0.80) against (0.70, 0.715, 0.76) -> all 6 pairs won.
    assert table.index[-1] == AVERAGE
    assert table.loc[AVERAGE, ["mean_difference", "ci_low", "ci_high"]].tolist() == [
        0.0775,
        0.001,
        0.154,
    ]
    assert (table.loc[AVERAGE, "n_seeds_system"], table.loc[AVERAGE, "p_improvement"]) == (2, 1.0)
    assert table.loc[AVERAGE, "epsilon_min"] == 0.0
