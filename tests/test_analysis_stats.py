"""Tests for analysis.stats.paired_ttest against scipy and hand computations."""

import math

import numpy as np
import pytest
from scipy import stats

from analysis.stats import paired_ttest

# 2 seeds x 6 examples of 0/1 scores, chosen so the differences vary.
SYSTEM = np.array([[1, 1, 0, 1, 1, 0], [1, 0, 1, 1, 1, 1]], dtype=float)
BASELINE = np.array([[0, 1, 0, 0, 1, 0], [1, 0, 0, 0, 1, 1]], dtype=float)


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
    assert result.mean_difference == pytest.approx(
        np.mean(system_means - baseline_means), abs=1e-12
    )
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


# --------------------------------------------------------------------------- the suite

from analysis.stats import (  # noqa: E402
    benjamini_hochberg,
    bootstrap_ci,
    bootstrap_ci_batch,
    bootstrap_ttest,
    bootstrap_ttest_batch,
    entity_f1,
    holm,
    permutation_test,
    permutation_test_batch,
    run_significance_test,
    ttest_batch,
)

RNG = np.random.default_rng(7)
# 3 seeds x 40 examples of continuous scores with a small planted gain.
CONT_BASE = RNG.normal(0.5, 0.2, size=(3, 40))
CONT_SYS = CONT_BASE + RNG.normal(0.05, 0.2, size=(3, 40))


def test_permutation_agrees_with_scipy_exact_permutation_test():
    # 1 seed x 12 examples: scipy enumerates all 2^12 sign swaps exactly.
    system, baseline = CONT_SYS[:1, :12], CONT_BASE[:1, :12]
    expected = stats.permutation_test(
        (system[0], baseline[0]),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        n_resamples=np.inf,
        alternative="two-sided",
    )
    result = permutation_test(system, baseline, n_iterations=20_000, seed=3)
    assert result.mean_difference == pytest.approx(expected.statistic, abs=1e-12)
    # Monte Carlo error of 20,000 iterations: sd <= 0.0036.
    assert result.p_value == pytest.approx(expected.pvalue, abs=0.015)


def test_bootstrap_interval_agrees_with_scipy_paired_percentile_bootstrap():
    system, baseline = CONT_SYS, CONT_BASE
    expected = stats.bootstrap(
        (system.mean(axis=0), baseline.mean(axis=0)),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        paired=True,
        n_resamples=20_000,
        method="percentile",
        random_state=1,
    )
    result = bootstrap_ci(system, baseline, n_resamples=20_000, seed=2)
    width = expected.confidence_interval.high - expected.confidence_interval.low
    assert result.ci_low == pytest.approx(expected.confidence_interval.low, abs=0.03 * width)
    assert result.ci_high == pytest.approx(expected.confidence_interval.high, abs=0.03 * width)
    assert result.mean_difference == pytest.approx((system - baseline).mean(), abs=1e-12)


def test_bootstrap_ttest_p_value_is_close_to_the_t_test_on_normal_differences():
    # With normal differences the bootstrap-t null distribution approximates Student's t.
    differences = np.random.default_rng(11).normal(0.15, 1.0, size=(1, 200))
    result = bootstrap_ttest(differences, np.zeros_like(differences), n_resamples=20_000)
    expected = stats.ttest_1samp(differences[0], 0.0)
    assert result.statistic == pytest.approx(expected.statistic, rel=1e-10)
    assert result.p_value == pytest.approx(expected.pvalue, abs=0.02)


def test_bootstrap_ttest_resamples_as_documented():
    # Rebuild the documented procedure with the same draws (same generator, same order).
    system, baseline = CONT_SYS, CONT_BASE
    d = system.mean(axis=0) - baseline.mean(axis=0)
    n, resamples = d.size, 500
    draws = np.random.default_rng(5).integers(0, n, size=(resamples, n))
    centred = (d - d.mean())[draws]
    t_star = centred.mean(axis=1) / (centred.std(axis=1, ddof=1) / np.sqrt(n))
    t_obs = d.mean() / (d.std(ddof=1) / np.sqrt(n))
    expected_p = (1 + np.sum(np.abs(t_star) >= abs(t_obs))) / (resamples + 1)
    result = bootstrap_ttest(system, baseline, n_resamples=resamples, seed=5)
    assert result.p_value == pytest.approx(expected_p, abs=1e-12)
    assert result.statistic == pytest.approx(t_obs, rel=1e-12)
    expected_ci = np.quantile(d[draws].mean(axis=1), [0.025, 0.975])
    assert (result.ci_low, result.ci_high) == pytest.approx(tuple(expected_ci), abs=1e-12)


def test_batch_rows_equal_single_tests_with_the_same_seed():
    batch_s = np.stack([CONT_SYS, CONT_BASE, CONT_SYS[::-1]])
    batch_b = np.stack([CONT_BASE, CONT_SYS, CONT_BASE])
    for single, batched in (
        (paired_ttest, ttest_batch),
        (bootstrap_ttest, bootstrap_ttest_batch),
        (bootstrap_ci, bootstrap_ci_batch),
        (permutation_test, permutation_test_batch),
    ):
        results = batched(batch_s, batch_b)
        for row in range(3):
            one = single(batch_s[row], batch_b[row])
            assert one.p_value == pytest.approx(results.p_value[row], abs=1e-12), single.__name__
            assert one.ci_low == pytest.approx(results.ci_low[row], abs=1e-12), single.__name__


def test_tests_are_deterministic_given_the_seed_and_vary_with_it():
    first = permutation_test(CONT_SYS, CONT_BASE, seed=4)
    assert permutation_test(CONT_SYS, CONT_BASE, seed=4) == first
    assert bootstrap_ttest(CONT_SYS, CONT_BASE, seed=4) == bootstrap_ttest(
        CONT_SYS, CONT_BASE, seed=4
    )
    assert permutation_test(CONT_SYS, CONT_BASE, seed=5).p_value != first.p_value


def test_entity_f1_worked_example_and_permutation_on_counts():
    # Per-sentence [tp, fp, fn]; sums [5, 2, 3] -> F1 = 10 / (10 + 2 + 3) = 2/3.
    counts = np.array([[2, 1, 0], [3, 0, 2], [0, 1, 1]])
    assert entity_f1(counts.sum(axis=0)) == pytest.approx(2 / 3)
    assert entity_f1(np.zeros(3)) == 0.0
    rng = np.random.default_rng(0)
    system = rng.integers(0, 4, size=(2, 60, 3)).astype(float)
    baseline = rng.integers(0, 4, size=(2, 60, 3)).astype(float)
    result = permutation_test(system, baseline, statistic=entity_f1)
    # The observed difference is the F1 of the seed-concatenated counts.
    expected = entity_f1(system.sum(axis=(0, 1))) - entity_f1(baseline.sum(axis=(0, 1)))
    assert result.mean_difference == pytest.approx(expected, abs=1e-12)
    assert 0 < result.p_value <= 1
    assert result.n_seeds == 2 and result.n_examples == 60
    with pytest.raises(ValueError, match="need a statistic"):
        permutation_test(system, baseline)


def test_run_significance_test_dispatches_and_refuses_unknown_names():
    assert run_significance_test("ttest", CONT_SYS, CONT_BASE).test == "ttest"
    assert run_significance_test("bootstrap", CONT_SYS, CONT_BASE).test == "bootstrap"
    assert run_significance_test("permutation", CONT_SYS, CONT_BASE).test == "permutation"
    with pytest.raises(ValueError, match="significance_test='wilcoxon'.*ttest"):
        run_significance_test("wilcoxon", CONT_SYS, CONT_BASE)


def test_holm_matches_hand_computation():
    # Sorted 0.01, 0.03, 0.04, 0.2 -> 4*0.01, max(.04, 3*.03), max(.09, 2*.04), max(.09, .2).
    assert holm([0.04, 0.01, 0.2, 0.03]) == pytest.approx([0.09, 0.04, 0.2, 0.09])
    assert holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])


def test_benjamini_hochberg_matches_hand_computation_and_scipy():
    # Sorted 0.01, 0.03, 0.04, 0.2 -> min over j >= i of 4 p_(j) / j: .04, .0533, .0533, .2.
    p_values = [0.04, 0.01, 0.2, 0.03]
    assert benjamini_hochberg(p_values) == pytest.approx([0.16 / 3, 0.04, 0.2, 0.16 / 3])
    random_p = np.random.default_rng(3).uniform(size=25) ** 3
    assert benjamini_hochberg(random_p) == pytest.approx(
        stats.false_discovery_control(random_p, method="bh"), abs=1e-12
    )


def test_corrections_refuse_values_outside_zero_one():
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        holm([0.1, 1.5])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        benjamini_hochberg([float("nan")])


def test_bad_resample_count_and_level_are_named():
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_ttest(CONT_SYS, CONT_BASE, n_resamples=0)
    with pytest.raises(ValueError, match="n_iterations"):
        permutation_test(CONT_SYS, CONT_BASE, n_iterations=-5)
    with pytest.raises(ValueError, match="level"):
        bootstrap_ci(CONT_SYS, CONT_BASE, level=1.5)
