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


# --------------------------------------------------------------------------- grouped path

import analysis.stats as stats_module  # noqa: E402


def _accuracy_scores(rng, seeds, examples, gain=0.0):
    """0/1 scores of two systems on examples of varied difficulty (NLI-like)."""
    difficulty = rng.beta(2.0, 1.0, size=(1, examples))
    baseline = (rng.uniform(size=(seeds, examples)) < difficulty).astype(float)
    system = (rng.uniform(size=(seeds, examples)) < np.minimum(difficulty + gain, 1)).astype(float)
    return system, baseline


@pytest.fixture
def paths(monkeypatch):
    """Records which resampling paths run: a set of "grouped"/"general" per resampler."""
    taken = set()
    for name in (
        "_grouped_bootstrap_moments",
        "_general_bootstrap_moments",
        "_grouped_permutations",
        "_general_permutations",
        "_grouped_unit_bootstrap",
        "_general_unit_bootstrap",
    ):
        original = getattr(stats_module, name)

        def spy(*args, _original=original, _name=name, **kwargs):
            taken.add(_name.strip("_"))
            return _original(*args, **kwargs)

        monkeypatch.setattr(stats_module, name, spy)
    return taken


def _general_only(monkeypatch):
    monkeypatch.setattr(stats_module, "GROUPED_MAX_VALUES", 0)


def test_discrete_scores_take_the_grouped_path(paths):
    system, baseline = _accuracy_scores(np.random.default_rng(1), 3, 400)
    bootstrap_ttest(system, baseline)
    bootstrap_ci(system, baseline)
    permutation_test(system, baseline)
    assert paths == {
        "grouped_bootstrap_moments",
        "grouped_permutations",
        "grouped_unit_bootstrap",
    }


def test_continuous_scores_take_the_general_path(paths):
    rng = np.random.default_rng(2)
    baseline = rng.uniform(size=(3, 400))  # e.g. per-example F1 or reciprocal rank
    system = np.clip(baseline + rng.normal(0.02, 0.1, size=baseline.shape), 0, 1)
    bootstrap_ttest(system, baseline)
    bootstrap_ci(system, baseline)
    permutation_test(system, baseline)
    assert paths == {
        "general_bootstrap_moments",
        "general_permutations",
        "general_unit_bootstrap",
    }


def test_path_follows_the_number_of_distinct_values(paths, monkeypatch):
    # Differences on a grid of exactly 10 values, 40 examples each.
    values = np.repeat(np.arange(10) / 10, 40)
    system, baseline = values[None], np.zeros((1, 400))
    monkeypatch.setattr(stats_module, "GROUPED_MAX_VALUES", 10)
    bootstrap_ttest(system, baseline)
    assert paths == {"grouped_bootstrap_moments"}
    paths.clear()
    monkeypatch.setattr(stats_module, "GROUPED_MAX_VALUES", 9)
    bootstrap_ttest(system, baseline)
    assert paths == {"general_bootstrap_moments"}
    paths.clear()
    # Values equal to 9 decimals count as one value.
    monkeypatch.setattr(stats_module, "GROUPED_MAX_VALUES", 64)
    bootstrap_ttest(system + 1e-12 * np.random.default_rng(0).uniform(size=400), baseline)
    assert paths == {"grouped_bootstrap_moments"}
    paths.clear()
    # Fewer than 8 items per value (40 items, 10 values): the general path.
    bootstrap_ttest(system[:, ::10], baseline[:, ::10])
    assert paths == {"general_bootstrap_moments"}


def _mc_tolerance(p, resamples, doubled=False):
    """Five standard errors of the difference of two independent Monte Carlo p-values: each a
    share of B resamples, or twice a share (``doubled``, the bootstrap interval's p)."""
    if doubled:
        share = min(p / 2, 0.5)
        return 10 * np.sqrt(2 * share * (1 - share) / resamples) + 4 / resamples
    return 5 * np.sqrt(2 * p * (1 - p) / resamples) + 2 / resamples


@pytest.mark.parametrize("seeds,gain", [(1, 0.04), (3, 0.02), (5, 0.01)])
def test_grouped_and_general_paths_give_the_same_p_values_and_intervals(seeds, gain, monkeypatch):
    system, baseline = _accuracy_scores(np.random.default_rng(seeds), seeds, 400, gain)
    resamples = 10_000
    tests = {
        "bootstrap": lambda: bootstrap_ttest(system, baseline, resamples, seed=1),
        "bootstrap_ci": lambda: bootstrap_ci(system, baseline, resamples, seed=1),
        "permutation": lambda: permutation_test(system, baseline, resamples, seed=1),
    }
    grouped = {name: run() for name, run in tests.items()}
    _general_only(monkeypatch)
    general = {name: run() for name, run in tests.items()}
    for name in tests:
        fast, slow = grouped[name], general[name]
        assert fast.mean_difference == pytest.approx(slow.mean_difference, abs=1e-12)
        assert fast.statistic == pytest.approx(slow.statistic, rel=1e-9), name
        tolerance = _mc_tolerance(slow.p_value, resamples, doubled=name == "bootstrap_ci")
        assert fast.p_value == pytest.approx(slow.p_value, abs=tolerance), name
        width = slow.ci_high - slow.ci_low
        assert fast.ci_low == pytest.approx(slow.ci_low, abs=0.05 * width), name
        assert fast.ci_high == pytest.approx(slow.ci_high, abs=0.05 * width), name


def _captured(monkeypatch, function_name, argument):
    """Spy on a helper of analysis.stats and keep the given positional argument of each call."""
    kept = []
    original = getattr(stats_module, function_name)

    def spy(*args):
        kept.append(np.array(args[argument]))
        return original(*args)

    monkeypatch.setattr(stats_module, function_name, spy)
    return kept


@pytest.mark.parametrize("grouped", [True, False])
def test_resampled_means_and_t_follow_bootstrap_theory(grouped, monkeypatch):
    system, baseline = _accuracy_scores(np.random.default_rng(8), 3, 500, 0.03)
    d = system.mean(axis=0) - baseline.mean(axis=0)
    n, resamples = d.size, 20_000
    if not grouped:
        _general_only(monkeypatch)
    means = _captured(monkeypatch, "_percentile_interval", 0)
    bootstrap_ci(system, baseline, resamples, seed=3)
    resampled = means[0][0]
    # A bootstrap mean of n draws from the empirical distribution: E = mean(d),
    # Var = var(d) / n with the plug-in (ddof=0) variance; its sample variance over B
    # resamples has a relative sd of about sqrt(2 / B) = 1%.
    expected_var = d.var() / n
    assert resampled.mean() == pytest.approx(d.mean(), abs=4 * np.sqrt(expected_var / resamples))
    assert resampled.var() == pytest.approx(expected_var, rel=0.05)
    # The null-centred bootstrap t is roughly standard (n = 500): mean 0, variance near 1.
    t_values = _captured(monkeypatch, "_two_sided_p", 0)
    bootstrap_ttest(system, baseline, resamples, seed=3)
    t_star = t_values[0][0]
    assert abs(t_star.mean()) < 0.05
    assert t_star.var() == pytest.approx(1.0, abs=0.08)


def test_grouped_bootstrap_t_has_the_general_paths_distribution(monkeypatch):
    system, baseline = _accuracy_scores(np.random.default_rng(9), 5, 400, 0.02)
    t_values = _captured(monkeypatch, "_two_sided_p", 0)
    means = _captured(monkeypatch, "_percentile_interval", 0)
    bootstrap_ttest(system, baseline, 20_000, seed=4)
    _general_only(monkeypatch)
    bootstrap_ttest(system, baseline, 20_000, seed=4)
    (grouped_t, general_t), (grouped_means, general_means) = t_values, means
    # Two samples of the same distribution (KS is conservative for the discrete means).
    assert stats.ks_2samp(grouped_t[0], general_t[0]).pvalue > 1e-3
    assert stats.ks_2samp(grouped_means[0], general_means[0]).pvalue > 1e-3


@pytest.mark.parametrize("grouped", [True, False])
def test_permuted_differences_follow_permutation_theory(grouped, monkeypatch):
    system, baseline = _accuracy_scores(np.random.default_rng(10), 2, 500, 0.03)
    units = (system - baseline).ravel()
    iterations = 20_000
    if not grouped:
        _general_only(monkeypatch)
    permuted = _captured(monkeypatch, "_two_sided_p", 0)
    permutation_test(system, baseline, iterations, seed=2)
    values = permuted[0][0]
    # Swapping unit u with probability 1/2 flips the sign of its difference: the permuted
    # mean difference has mean 0 and variance sum(d_u^2) / N^2.
    expected_var = np.sum(units**2) / units.size**2
    assert values.mean() == pytest.approx(0.0, abs=4 * np.sqrt(expected_var / iterations))
    assert values.var() == pytest.approx(expected_var, rel=0.05)


def test_grouped_permutation_agrees_with_the_exact_sign_flip_test(paths):
    # 0/1 scores, one seed: only discordant examples (a wins, b losses) matter, and the
    # exact permutation distribution of (wins - losses) is 2 Z - (a + b), Z ~ Bin(a + b, 1/2).
    system, baseline = _accuracy_scores(np.random.default_rng(12), 1, 500, 0.03)
    wins = int(np.sum(system > baseline))
    losses = int(np.sum(system < baseline))
    discordant = wins + losses
    z = np.arange(discordant + 1)
    extreme = np.abs(2 * z - discordant) >= abs(wins - losses)
    exact_p = stats.binom.pmf(z, discordant, 0.5)[extreme].sum()
    result = permutation_test(system, baseline, n_iterations=20_000, seed=6)
    assert "grouped_permutations" in paths
    assert result.mean_difference == pytest.approx((wins - losses) / 500, abs=1e-12)
    assert result.p_value == pytest.approx(exact_p, abs=_mc_tolerance(exact_p, 20_000) / 1.4)


def test_entity_counts_with_repeating_vectors_take_the_grouped_path(paths, monkeypatch):
    # Short sentences: at most one entity, so per-sentence [tp, fp, fn] repeat a lot.
    rng = np.random.default_rng(13)
    has_entity = rng.uniform(size=(2, 400)) < 0.6

    def counts(recall):
        tp = has_entity & (rng.uniform(size=has_entity.shape) < recall)
        fp = rng.uniform(size=has_entity.shape) < 0.1
        return np.stack([tp, fp, has_entity & ~tp], axis=-1).astype(float)

    system, baseline = counts(0.8), counts(0.74)
    grouped = permutation_test(system, baseline, 10_000, seed=1, statistic=entity_f1)
    assert paths == {"grouped_permutations", "grouped_unit_bootstrap"}
    _general_only(monkeypatch)
    general = permutation_test(system, baseline, 10_000, seed=1, statistic=entity_f1)
    assert grouped.mean_difference == pytest.approx(general.mean_difference, abs=1e-12)
    p = general.p_value
    assert grouped.p_value == pytest.approx(p, abs=_mc_tolerance(p, 10_000))
    width = general.ci_high - general.ci_low
    assert grouped.ci_low == pytest.approx(general.ci_low, abs=0.05 * width)
    assert grouped.ci_high == pytest.approx(general.ci_high, abs=0.05 * width)


def test_batch_rows_equal_single_tests_whatever_path_each_row_takes(paths):
    rng = np.random.default_rng(14)
    discrete = [_accuracy_scores(rng, 3, 400, gain) for gain in (0.0, 0.03)]
    continuous = rng.uniform(size=(3, 400)), rng.uniform(size=(3, 400))
    rows = [discrete[0], continuous, discrete[1]]
    batch_s = np.stack([s for s, _ in rows])
    batch_b = np.stack([b for _, b in rows])
    for single, batched in (
        (bootstrap_ttest, bootstrap_ttest_batch),
        (bootstrap_ci, bootstrap_ci_batch),
        (permutation_test, permutation_test_batch),
    ):
        results = batched(batch_s, batch_b, 2000, 7)
        for row, (system, baseline) in enumerate(rows):
            one = single(system, baseline, 2000, 7)
            assert one.p_value == pytest.approx(results.p_value[row], abs=1e-12), single.__name__
            assert one.ci_low == pytest.approx(results.ci_low[row], abs=1e-12), single.__name__
            assert one.ci_high == pytest.approx(results.ci_high[row], abs=1e-12), single.__name__
    assert any(name.startswith("grouped") for name in paths)
    assert any(name.startswith("general") for name in paths)
    # Deterministic given the seed on the grouped path too, and varying with it.
    first = permutation_test(*discrete[1], seed=4)
    assert permutation_test(*discrete[1], seed=4) == first
    assert bootstrap_ttest(*discrete[1], seed=5) == bootstrap_ttest(*discrete[1], seed=5)
    assert bootstrap_ttest(*discrete[1], seed=5) != bootstrap_ttest(*discrete[1], seed=6)
