"""Paired significance test of a system against a baseline on per-example scores."""

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

CONFIDENCE_LEVEL = 0.95


@dataclass(frozen=True)
class PairedTestResult:
    """Outcome of a two-sided paired t-test; differences are system - baseline in the metric's unit."""

    mean_difference: float
    ci_low: float
    ci_high: float
    statistic: float
    p_value: float
    n_examples: int
    n_seeds: int


def paired_ttest(system: np.ndarray, baseline: np.ndarray) -> PairedTestResult:
    """Paired t-test over examples of two score arrays shaped (seeds, examples).

    Scores are first averaged over seeds per example, so the test's unit is the example
    and seed noise is smoothed rather than counted as extra samples.
    """
    system = np.asarray(system, dtype=float)
    baseline = np.asarray(baseline, dtype=float)
    if system.ndim != 2 or system.shape != baseline.shape:
        raise ValueError("system and baseline scores must both be shaped (seeds, examples) with "
                         f"the same shape; got system {system.shape} and baseline {baseline.shape}")
    n_seeds, n_examples = system.shape
    if n_seeds < 1 or n_examples < 2:
        raise ValueError(f"a paired t-test needs at least 1 seed and 2 examples; got {system.shape}")

    system_means = system.mean(axis=0)
    baseline_means = baseline.mean(axis=0)
    differences = system_means - baseline_means
    mean_difference = float(differences.mean())
    if np.all(differences == differences[0]):
        # No spread: t is 0/0 or x/0 and scipy gives NaN; report the limit instead.
        return PairedTestResult(
            mean_difference=mean_difference, ci_low=mean_difference, ci_high=mean_difference,
            statistic=0.0 if mean_difference == 0 else math.copysign(math.inf, mean_difference),
            p_value=1.0 if mean_difference == 0 else 0.0,
            n_examples=n_examples, n_seeds=n_seeds)

    test = stats.ttest_rel(system_means, baseline_means)
    interval = test.confidence_interval(CONFIDENCE_LEVEL)
    return PairedTestResult(
        mean_difference=mean_difference, ci_low=float(interval.low), ci_high=float(interval.high),
        statistic=float(test.statistic), p_value=float(test.pvalue),
        n_examples=n_examples, n_seeds=n_seeds)
