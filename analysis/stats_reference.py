"""Plain reference implementations of the fast paths of :mod:`analysis.stats`: one loop per
resample, per iteration or per cell, written to be read rather than run. Only the agreement
tests (tests/analysis/test_stats_reference.py) call them.

Each draws the same random numbers, in the same order, as the general path of its fast
counterpart does in one block of draws (resamples x items up to 4,000,000): on that path the
two agree to rounding. On the grouped path (discrete scores: multinomial and binomial draws)
they agree in distribution, within Monte Carlo error.
"""

import math

import numpy as np
from scipy import stats

from analysis.stats import (
    CONFIDENCE_LEVEL,
    DEFAULT_RESAMPLES,
    TIE_TOLERANCE,
    ZERO_TOLERANCE,
    PairedTestResult,
    Statistic,
)


def _seed_averaged_differences(system, baseline) -> np.ndarray:
    """(seeds, examples) scores -> per example, the system's mean over seeds minus the
    baseline's."""
    system, baseline = np.asarray(system, dtype=float), np.asarray(baseline, dtype=float)
    return system.mean(axis=0) - baseline.mean(axis=0)


def _t_statistic(sample: np.ndarray) -> float:
    """mean / (sd / sqrt(n)); without spread 0 (no shift) or an infinity of the mean's sign."""
    mean, sd = float(sample.mean()), float(sample.std(ddof=1))
    if sd > 0:
        return mean / (sd / math.sqrt(len(sample)))
    return 0.0 if mean == 0 else math.copysign(math.inf, mean)


def _share_as_extreme(resampled: list[float], observed: float) -> float:
    """(1 + #{|resampled| >= |observed|}) / (B + 1), a tie within TIE_TOLERANCE counted."""
    threshold = abs(observed) * (1 - TIE_TOLERANCE)
    reached = sum(1 for value in resampled if abs(value) >= threshold)
    return (1 + reached) / (len(resampled) + 1)


def _percentiles(values: list[float], level: float) -> tuple[float, float]:
    low, high = np.quantile(values, [(1 - level) / 2, (1 + level) / 2])
    return float(low), float(high)


def paired_ttest_reference(system, baseline, level: float = CONFIDENCE_LEVEL) -> PairedTestResult:
    """:func:`analysis.stats.paired_ttest` from the textbook formulas: t, Student's p on n - 1
    df and the t interval of the seed-averaged per-example differences."""
    d = _seed_averaged_differences(system, baseline)
    n, mean = len(d), float(d.mean())
    t = _t_statistic(d)
    half_width = stats.t.ppf((1 + level) / 2, n - 1) * float(d.std(ddof=1)) / math.sqrt(n)
    p = 2 * float(stats.t.sf(abs(t), n - 1))
    seeds = np.shape(system)[0]
    return PairedTestResult(mean, mean - half_width, mean + half_width, t, p, n, seeds, "ttest")


def _bootstrap_draws(n: int, n_resamples: int, seed: int) -> np.ndarray:
    """(n_resamples, n): the items each resample draws, with replacement."""
    return np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))


def bootstrap_ttest_reference(
    system,
    baseline,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    level: float = CONFIDENCE_LEVEL,
) -> PairedTestResult:
    """:func:`analysis.stats.bootstrap_ttest` as its documentation says, a resample at a time:
    t recomputed on n of the null-centred differences drawn with replacement; the interval
    from the means of the same draws of the differences themselves."""
    d = _seed_averaged_differences(system, baseline)
    n, observed = len(d), _t_statistic(d)
    centred = d - d.mean()
    draws = _bootstrap_draws(n, n_resamples, seed)
    resampled_t = [_t_statistic(centred[items]) for items in draws]
    low, high = _percentiles([float(d[items].mean()) for items in draws], level)
    p = _share_as_extreme(resampled_t, observed)
    seeds = np.shape(system)[0]
    return PairedTestResult(
        float(d.mean()), low, high, observed, p, n, seeds, "bootstrap", n_resamples
    )


def bootstrap_ci_reference(
    system,
    baseline,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    level: float = CONFIDENCE_LEVEL,
) -> PairedTestResult:
    """:func:`analysis.stats.bootstrap_ci` a resample at a time: the percentile interval of the
    resampled mean differences, and twice the smaller share of them on either side of 0."""
    d = _seed_averaged_differences(system, baseline)
    n, mean = len(d), float(d.mean())
    means = [float(d[items].mean()) for items in _bootstrap_draws(n, n_resamples, seed)]
    low, high = _percentiles(means, level)
    zero = ZERO_TOLERANCE * max(1.0, abs(mean))
    below = sum(1 for value in means if value <= zero)
    above = sum(1 for value in means if value >= -zero)
    p = min(1.0, 2 * (1 + min(below, above)) / (n_resamples + 1))
    seeds = np.shape(system)[0]
    return PairedTestResult(mean, low, high, mean, p, n, seeds, "bootstrap_ci", n_resamples)


def _pooled_units(array) -> np.ndarray:
    """(seeds, examples[, k]) -> (seeds * examples, k): the runs' predictions one after another."""
    array = np.asarray(array, dtype=float)
    if array.ndim == 2:
        array = array[..., None]
    return array.reshape(-1, array.shape[-1])


def permutation_test_reference(
    system,
    baseline,
    n_iterations: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    statistic: Statistic | None = None,
    level: float = CONFIDENCE_LEVEL,
) -> PairedTestResult:
    """:func:`analysis.stats.permutation_test` an iteration at a time: each unit's system and
    baseline outputs swapped on a fair coin, the metric recomputed from the swapped sums; the
    interval from units drawn with replacement (each from its own stream of ``seed``)."""
    system_units, baseline_units = _pooled_units(system), _pooled_units(baseline)
    n_units = len(system_units)

    def metric(units: np.ndarray) -> float:
        sums = units.sum(axis=0)
        return float(sums[0] / n_units if statistic is None else statistic(sums))

    observed = metric(system_units) - metric(baseline_units)
    permutation_stream, bootstrap_stream = np.random.SeedSequence(seed).spawn(2)
    coins = np.random.default_rng(permutation_stream).integers(0, 2, size=(n_iterations, n_units))
    permuted = []
    for swapped in coins.astype(bool)[:, :, None]:
        permuted_system = np.where(swapped, baseline_units, system_units)
        permuted_baseline = np.where(swapped, system_units, baseline_units)
        permuted.append(metric(permuted_system) - metric(permuted_baseline))
    draws = np.random.default_rng(bootstrap_stream).integers(
        0, n_units, size=(n_iterations, n_units)
    )
    resampled = [metric(system_units[items]) - metric(baseline_units[items]) for items in draws]
    low, high = _percentiles(resampled, level)
    p = _share_as_extreme(permuted, observed)
    seeds, examples = np.shape(system)[:2]
    return PairedTestResult(
        observed, low, high, observed, p, examples, seeds, "permutation", n_iterations
    )


def mean_squares_reference(differences) -> tuple[float, float, float]:
    """:func:`analysis.stats.mean_squares` of one (seeds, examples) array, cell by cell: the
    two-way ANOVA without replication's (examples, seeds, residual) mean squares."""
    d = np.asarray(differences, dtype=float)
    seeds, examples = d.shape
    cells = [(s, i) for s in range(seeds) for i in range(examples)]
    grand = sum(d[s, i] for s, i in cells) / len(cells)
    example_means = [sum(d[s, i] for s in range(seeds)) / seeds for i in range(examples)]
    seed_means = [sum(d[s, i] for i in range(examples)) / examples for s in range(seeds)]
    ss_examples = seeds * sum((mean - grand) ** 2 for mean in example_means)
    ss_seeds = examples * sum((mean - grand) ** 2 for mean in seed_means)
    ss_residual = sum((d[s, i] - example_means[i] - seed_means[s] + grand) ** 2 for s, i in cells)
    return (
        ss_examples / (examples - 1),
        ss_seeds / (seeds - 1),
        ss_residual / ((examples - 1) * (seeds - 1)),
    )


def holm_reference(p_values) -> np.ndarray:
    """Holm's adjusted p-values from the definition: the i-th smallest (1-based) of m becomes
    the largest, over j <= i, of min(1, (m - j + 1) p_(j)); ties keep the input order."""
    p = [float(value) for value in p_values]
    m = len(p)
    order = sorted(range(m), key=lambda index: p[index])
    adjusted = [0.0] * m
    for i, index in enumerate(order, start=1):
        adjusted[index] = max(min(1.0, (m - j + 1) * p[order[j - 1]]) for j in range(1, i + 1))
    return np.array(adjusted)


def benjamini_hochberg_reference(p_values) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values from the definition: the i-th smallest (1-based)
    of m becomes the smallest, over j >= i, of min(1, m p_(j) / j)."""
    p = [float(value) for value in p_values]
    m = len(p)
    order = sorted(range(m), key=lambda index: p[index])
    adjusted = [0.0] * m
    for i, index in enumerate(order, start=1):
        adjusted[index] = min(min(1.0, m * p[order[j - 1]] / j) for j in range(i, m + 1))
    return np.array(adjusted)
