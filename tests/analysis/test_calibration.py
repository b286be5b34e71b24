"""Calibration and power of the significance tests on simulated sweeps.

Each simulated comparison is an NLI-like test set: example i has a difficulty p_i, and
every run (system or baseline, each seed) answers it correctly with probability p_i,
independently. Under the null both systems share p_i; 2,000 comparisons are run at once
through the tests' batch forms (the same code as the single tests). A calibrated test
rejects at 0.05 in 5% ± 2% of them; a planted gain must be detected.

Such 0/1 scores take the resampling tests' grouped path (multinomial / binomial draws per
distinct value); the general path (draws per example) is checked on the same data with
the grouped path switched off.
"""

import numpy as np
import pytest

import analysis.stats as stats_module
from analysis.stats import (
    bootstrap_ci_batch,
    bootstrap_ttest_batch,
    entity_f1,
    permutation_test_batch,
    ttest_batch,
)

N_COMPARISONS = 2000
N_SEEDS = 3
N_EXAMPLES = 300
ALPHA = 0.05
RESAMPLES = 500


def _simulate(rng: np.random.Generator, gain: float = 0.0, n_comparisons: int = N_COMPARISONS):
    difficulty = rng.beta(2.0, 1.0, size=(n_comparisons, 1, N_EXAMPLES))
    shape = (n_comparisons, N_SEEDS, N_EXAMPLES)
    baseline = (rng.uniform(size=shape) < difficulty).astype(float)
    system = (rng.uniform(size=shape) < np.minimum(difficulty + gain, 1.0)).astype(float)
    return system, baseline


@pytest.fixture(scope="module")
def null_data():
    return _simulate(np.random.default_rng(2024))


@pytest.fixture(scope="module")
def planted_data():
    # +0.1 capped at 1 is about +7 points of accuracy.
    return _simulate(np.random.default_rng(99), gain=0.1, n_comparisons=200)


TESTS = {
    "ttest": lambda s, b: ttest_batch(s, b),
    "bootstrap": lambda s, b: bootstrap_ttest_batch(s, b, n_resamples=RESAMPLES, seed=1),
    "permutation": lambda s, b: permutation_test_batch(s, b, n_iterations=RESAMPLES, seed=1),
    "bootstrap_ci": lambda s, b: bootstrap_ci_batch(s, b, n_resamples=RESAMPLES, seed=1),
}


@pytest.mark.parametrize("name", sorted(TESTS))
def test_rejects_five_percent_under_the_null(name, null_data):
    rate = np.mean(TESTS[name](*null_data).p_value < ALPHA)
    assert 0.03 <= rate <= 0.07, f"{name} rejected {rate:.3f} of null comparisons"


@pytest.mark.parametrize("name", sorted(set(TESTS) - {"ttest"}))
def test_general_path_rejects_five_percent_under_the_null(name, null_data, monkeypatch):
    monkeypatch.setattr(stats_module, "GROUPED_MAX_VALUES", 0)  # draws per example
    rate = np.mean(TESTS[name](*null_data).p_value < ALPHA)
    assert 0.03 <= rate <= 0.07, f"{name} (general path) rejected {rate:.3f} of null comparisons"


@pytest.mark.parametrize("name", sorted(TESTS))
def test_detects_a_planted_gain(name, planted_data):
    result = TESTS[name](*planted_data)
    assert np.mean(result.p_value < ALPHA) >= 0.9
    assert np.all(result.mean_difference > 0)


def test_confidence_intervals_cover_the_true_difference(null_data):
    # Under the null the true difference is 0: 95% intervals cover it ~95% of the time.
    for result in (ttest_batch(*null_data), bootstrap_ci_batch(*null_data, n_resamples=RESAMPLES)):
        coverage = np.mean((result.ci_low <= 0) & (0 <= result.ci_high))
        assert 0.93 <= coverage <= 0.97


def test_permutation_on_entity_counts_is_calibrated_and_has_power():
    # NER-like: per sentence, entities found (tp) out of 3 and spurious ones (fp).
    rng = np.random.default_rng(5)
    n, seeds, examples = 1000, 2, 150
    recall = rng.beta(4, 2, size=(n, 1, examples))

    def counts(boost):
        tp = rng.binomial(3, np.minimum(recall + boost, 1.0), size=(n, seeds, examples))
        fp = rng.binomial(1, 0.2, size=(n, seeds, examples))
        return np.stack([tp, fp, 3 - tp], axis=-1).astype(float)

    null = permutation_test_batch(
        counts(0.0), counts(0.0), n_iterations=RESAMPLES, statistic=entity_f1
    )
    assert 0.03 <= np.mean(null.p_value < ALPHA) <= 0.07
    planted = permutation_test_batch(
        counts(0.08), counts(0.0), n_iterations=RESAMPLES, statistic=entity_f1
    )
    assert np.mean(planted.p_value < ALPHA) >= 0.9
