"""Each fast path of analysis.stats agrees with its plain reference in
analysis.stats_reference: to rounding (1e-12, t to 1e-9 relative) where both draw the same
random numbers (the general path), within five Monte Carlo standard errors where they draw
differently (the grouped path on discrete scores). Inputs: random continuous scores, 0/1
scores full of ties, one seed of three examples, two seeds of five, no difference at all and
the same difference on every example."""

import math

import numpy as np
import pytest

import analysis.stats as stats_module
from analysis.stats import (
    benjamini_hochberg,
    bootstrap_ci,
    bootstrap_ttest,
    entity_f1,
    holm,
    mean_squares,
    paired_ttest,
    permutation_test,
)
from analysis.stats_reference import (
    benjamini_hochberg_reference,
    bootstrap_ci_reference,
    bootstrap_ttest_reference,
    holm_reference,
    mean_squares_reference,
    paired_ttest_reference,
    permutation_test_reference,
)

EXACT = 1e-12  # absolute, for means, intervals and p-values computed from the same draws
T_RELATIVE = 1e-9  # t: the fast path's moments come from sums, the reference's from samples


def _inputs() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(43)
    baseline = rng.normal(0.5, 0.2, size=(3, 40))
    quarters = rng.integers(0, 4, size=(2, 30)) / 4  # exact in binary: differences stay 0.5
    return {
        "random": (baseline + rng.normal(0.04, 0.2, size=(3, 40)), baseline),
        "ties": (
            (rng.uniform(size=(3, 60)) < 0.7).astype(float),
            (rng.uniform(size=(3, 60)) < 0.6).astype(float),
        ),
        "one seed, three examples": (rng.uniform(size=(1, 3)), rng.uniform(size=(1, 3))),
        "two seeds, five examples": (rng.uniform(size=(2, 5)), rng.uniform(size=(2, 5))),
        "no difference": (baseline, baseline.copy()),
        "the same difference": (quarters + 0.5, quarters),
    }


INPUTS = _inputs()


def _entity_counts(seed: int, sentences: int) -> tuple[np.ndarray, np.ndarray]:
    """(2 seeds, sentences, [tp, fp, fn]) of two NER systems; short sentences repeat counts."""
    rng = np.random.default_rng(seed)
    entities = rng.integers(0, 3, size=(2, sentences))

    def counts(recall):
        tp = rng.binomial(entities, recall)
        return np.stack([tp, rng.binomial(1, 0.1, size=entities.shape), entities - tp], axis=-1)

    return counts(0.8).astype(float), counts(0.72).astype(float)


def _assert_agree(fast, reference, p_tolerance=EXACT, ci_tolerance=EXACT):
    assert fast.mean_difference == pytest.approx(reference.mean_difference, abs=EXACT)
    if math.isinf(reference.statistic):
        assert fast.statistic == reference.statistic
    else:
        assert fast.statistic == pytest.approx(reference.statistic, rel=T_RELATIVE, abs=EXACT)
    assert fast.p_value == pytest.approx(reference.p_value, abs=p_tolerance)
    assert fast.ci_low == pytest.approx(reference.ci_low, abs=ci_tolerance)
    assert fast.ci_high == pytest.approx(reference.ci_high, abs=ci_tolerance)
    assert (fast.n_examples, fast.n_seeds, fast.test) == (
        reference.n_examples,
        reference.n_seeds,
        reference.test,
    )


@pytest.fixture
def general_path(monkeypatch):
    """Every comparison on the general path, which draws as the references do."""
    monkeypatch.setattr(stats_module, "GROUPED_MAX_VALUES", 0)


@pytest.mark.parametrize("name", INPUTS)
def test_batched_ttest_agrees_with_the_textbook_formulas(name):
    system, baseline = INPUTS[name]
    _assert_agree(paired_ttest(system, baseline), paired_ttest_reference(system, baseline))


@pytest.mark.parametrize("name", INPUTS)
def test_count_matrix_bootstrap_agrees_with_a_loop_over_resamples(name, general_path):
    system, baseline = INPUTS[name]
    for fast, reference in (
        (bootstrap_ttest, bootstrap_ttest_reference),
        (bootstrap_ci, bootstrap_ci_reference),
    ):
        _assert_agree(fast(system, baseline, 500, seed=3), reference(system, baseline, 500, 3))


@pytest.mark.parametrize("name", INPUTS)
def test_matrix_of_swaps_agrees_with_a_loop_over_iterations(name, general_path):
    system, baseline = INPUTS[name]
    fast = permutation_test(system, baseline, 500, seed=4)
    _assert_agree(fast, permutation_test_reference(system, baseline, 500, 4))


def test_matrix_of_swaps_on_entity_counts_agrees_with_a_loop(general_path):
    system, baseline = _entity_counts(1, 60)
    fast = permutation_test(system, baseline, 500, seed=5, statistic=entity_f1)
    reference = permutation_test_reference(system, baseline, 500, 5, statistic=entity_f1)
    _assert_agree(fast, reference)


def _monte_carlo(p: float, resamples: int, doubled: bool = False) -> float:
    """Five standard errors of the difference of two independent Monte Carlo p-values, each a
    share of ``resamples`` (``doubled``: twice a share, the bootstrap interval's p)."""
    share = min(p / 2, 0.5) if doubled else p
    scale = 2 if doubled else 1
    return scale * 5 * math.sqrt(2 * share * (1 - share) / resamples) + 2 * scale / resamples


def _accuracy(seed: int, gain: float) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    difficulty = rng.beta(2.0, 1.0, size=(1, 400))
    baseline = (rng.uniform(size=(3, 400)) < difficulty).astype(float)
    system = (rng.uniform(size=(3, 400)) < np.minimum(difficulty + gain, 1)).astype(float)
    return system, baseline


@pytest.mark.parametrize("gain", [0.0, 0.03])
def test_grouped_draws_agree_with_the_loops_within_monte_carlo_error(gain):
    system, baseline = _accuracy(int(gain * 100) + 1, gain)
    assert stats_module._value_groups((system - baseline).reshape(-1, 1)) is not None
    resamples = 10_000
    for fast, reference, doubled in (
        (bootstrap_ttest, bootstrap_ttest_reference, False),
        (bootstrap_ci, bootstrap_ci_reference, True),
        (permutation_test, permutation_test_reference, False),
    ):
        slow = reference(system, baseline, resamples, 1)
        width = slow.ci_high - slow.ci_low
        _assert_agree(
            fast(system, baseline, resamples, seed=2),
            slow,
            p_tolerance=_monte_carlo(slow.p_value, resamples, doubled),
            ci_tolerance=0.05 * width,
        )


def test_grouped_draws_on_entity_counts_agree_with_the_loop_within_monte_carlo_error():
    system, baseline = _entity_counts(2, 400)
    units = np.concatenate([system, baseline], axis=-1).reshape(-1, 6)
    assert stats_module._value_groups(units) is not None
    slow = permutation_test_reference(system, baseline, 10_000, 1, statistic=entity_f1)
    fast = permutation_test(system, baseline, 10_000, seed=2, statistic=entity_f1)
    width = slow.ci_high - slow.ci_low
    _assert_agree(
        fast, slow, p_tolerance=_monte_carlo(slow.p_value, 10_000), ci_tolerance=0.05 * width
    )


@pytest.mark.parametrize("name", [name for name in INPUTS if INPUTS[name][0].shape[0] > 1])
def test_closed_form_mean_squares_agree_with_sums_over_cells(name):
    system, baseline = INPUTS[name]
    fast = mean_squares(system - baseline)
    reference = mean_squares_reference(system - baseline)
    assert tuple(map(float, fast)) == pytest.approx(reference, rel=1e-10, abs=EXACT)


P_VALUES = {
    "random": np.random.default_rng(5).uniform(size=11),
    "ties": np.array([0.01, 0.04, 0.01, 0.04, 0.2]),
    "one": np.array([0.3]),
    "edges": np.array([0.0, 1.0, 0.5, 0.0]),
    "near one": np.array([0.9, 0.95, 0.99]),
}


@pytest.mark.parametrize("name", P_VALUES)
def test_running_extrema_corrections_agree_with_their_definitions(name):
    p = P_VALUES[name]
    assert holm(p) == pytest.approx(holm_reference(p), abs=1e-15)
    assert benjamini_hochberg(p) == pytest.approx(benjamini_hochberg_reference(p), abs=1e-15)


def test_swar_bit_count_agrees_with_python():
    words = np.random.default_rng(6).integers(0, 2**64 - 1, size=500, dtype=np.uint64)
    words = np.concatenate([words, np.array([0, 1, 2**63, 2**64 - 1], dtype=np.uint64)])
    expected = [int(word).bit_count() for word in words]
    assert stats_module._popcount(words).tolist() == expected


@pytest.mark.parametrize("k", [1, 3])
def test_value_groups_agree_with_numpy_unique(k):
    items = np.random.default_rng(7).integers(0, 3, size=(400, k)) / 3
    values, counts = stats_module._value_groups(items)
    unique, unique_counts = np.unique(np.round(items, 9), axis=0, return_counts=True)
    found = {tuple(np.round(row, 9)): int(count) for row, count in zip(values, counts)}
    assert found == {tuple(row): int(count) for row, count in zip(unique, unique_counts)}
    continuous = np.random.default_rng(8).uniform(size=(400, k))
    assert stats_module._value_groups(continuous) is None


def test_fair_binomials_follow_the_binomial_distribution():
    counts = np.array([1, 5, 64, 65, 300])
    draws = stats_module._fair_binomials(np.random.default_rng(9), 20_000, counts)
    assert np.all((draws >= 0) & (draws <= counts))
    assert np.all(np.abs(draws.mean(axis=0) - counts / 2) <= 5 * np.sqrt(counts / 4 / 20_000))
    assert draws.var(axis=0) == pytest.approx(counts / 4, rel=0.05)
    five = np.bincount(draws[:, 1].astype(int), minlength=6) / 20_000
    pmf = np.array([math.comb(5, j) for j in range(6)]) / 32
    assert np.all(np.abs(five - pmf) <= 5 * np.sqrt(pmf * (1 - pmf) / 20_000))
