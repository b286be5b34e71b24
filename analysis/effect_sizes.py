"""Effect sizes over training seeds: how likely a new seed of a method beats a new seed of the
baseline on this test set, and Almost Stochastic Order's epsilon_min (Dror, Shlomov &
Reichart 2019, "Deep Dominance - How to Properly Compare Deep Neural Models", ACL). Pure
functions on the per-seed scores (one run-level score per seed, e.g. each seed's test
accuracy); the report's table of them is :func:`effect_size_table`.

Both figures condition on the test set: a seed's score is its run's score on these
examples, so they speak of a new seed evaluated on the same examples, not on another
sample of the language.
"""

from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy import optimize, stats

CONFIDENCE_LEVEL = 0.95
N_BOOTSTRAP = 1000  # deepsig's default number of bootstrap iterations for epsilon_min
MIN_SEEDS = 2  # per side: with one seed neither figure says anything about seeds
# Per side: the interval of P(improvement) needs each side's seed variance; from 3 seeds
# it covered at least 95% in every cell of the calibration (docs/statistics.md).
MIN_SEEDS_FOR_INTERVAL = 3
# The interval's noncentrality is searched within +- this many (scaled) standard normal
# units: P = Phi(8) is 1 to 15 digits, so a bound beyond it is the same figure.
_NONCENTRALITY_LIMIT = 8.0
DEFAULT_SEED = 0  # epsilon_min's bootstrap generator seed: a report is reproducible
AVERAGE = "avg"  # the lang of the table's row on the mean over the languages


def _checked_scores(name: str, scores) -> np.ndarray:
    """``scores`` as a 1-D float array, refused with its name when empty or not finite."""
    array = np.asarray(scores, dtype=float)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"{name}: expected a non-empty 1-D array of per-seed scores")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name}: per-seed scores must be finite, got {array.tolist()}")
    return array


def improvement(system: np.ndarray, baseline: np.ndarray, axis: int = -1) -> np.ndarray:
    """P(X > Y) + 0.5 P(X = Y) over all (system seed, baseline seed) pairs along ``axis``
    (vectorised for scipy.stats.bootstrap): the Mann-Whitney U of the system over n m."""
    x = np.moveaxis(system, axis, -1)[..., :, None]
    y = np.moveaxis(baseline, axis, -1)[..., None, :]
    return ((x > y) + 0.5 * (x == y)).mean(axis=(-2, -1))


def probability_of_improvement(system, baseline) -> tuple[float, float, float]:
    """The probability that a new seed of the system scores higher than a new seed of the
    baseline on this test set, with its 95% interval: (estimate, low, high).

    The estimate is the Mann-Whitney / AUC estimator over every pair of one system seed and
    one baseline seed, P(X > Y) + 0.5 P(X = Y) (ties count half), as rliable's probability
    of improvement (Agarwal et al. 2021). The interval is :func:`normal_interval`'s (the
    seeds' scores read as normal); it needs ``MIN_SEEDS_FOR_INTERVAL`` seeds per side (NaN
    below). All three are NaN with fewer than ``MIN_SEEDS`` seeds on a side.
    """
    system = _checked_scores("system", system)
    baseline = _checked_scores("baseline", baseline)
    if min(system.size, baseline.size) < MIN_SEEDS:
        return np.nan, np.nan, np.nan
    estimate = float(improvement(system, baseline))
    if min(system.size, baseline.size) < MIN_SEEDS_FOR_INTERVAL:
        return estimate, np.nan, np.nan
    return (estimate, *normal_interval(system, baseline))


def _noncentrality_at(t: float, df: float, quantile: float, limit: float) -> float:
    """The noncentrality at which the noncentral t (``df``) puts ``quantile`` below ``t``,
    clipped to [-limit, limit] (the cdf falls as the noncentrality grows)."""

    def gap(noncentrality: float) -> float:
        cdf = float(stats.nct.cdf(t, df, noncentrality))
        if np.isnan(cdf):  # scipy gives up far in a tail (t >> noncentrality): there it is 1
            cdf = 1.0 if noncentrality < t else 0.0
        return cdf - quantile

    if gap(-limit) <= 0:
        return -limit
    if gap(limit) >= 0:
        return limit
    return float(optimize.brentq(gap, -limit, limit))


def normal_interval(system, baseline, level: float = CONFIDENCE_LEVEL) -> tuple[float, float]:
    """The ``level`` interval of P(X > Y) when each side's seed scores are normal:
    P = Phi(delta / sqrt(var_x + var_y)).

    Welch's t of the two means is then noncentral t on Welch's df with noncentrality
    lambda = delta / sqrt(var_x / n + var_y / m) = Phi^-1(P) c, c = sqrt((var_x + var_y) /
    (var_x / n + var_y / m)) (sqrt(n) when n = m; else at the sample variances). The
    interval inverts the noncentral t at the observed t (the exact interval of a
    standardised difference, Steiger & Fouladi 1997) and maps lambda back through c. A
    run's score on thousands of examples is close to normal given its seed, which the
    calibration (docs/statistics.md) checks; a seed that collapses is not. NaN when neither
    side's seeds differ at all (nothing to scale the difference by).
    """
    system = _checked_scores("system", system)
    baseline = _checked_scores("baseline", baseline)
    if np.ptp(system) == 0 and np.ptp(baseline) == 0:  # (a variance of float noise)
        return np.nan, np.nan
    n, m = system.size, baseline.size
    var_x, var_y = system.var(ddof=1), baseline.var(ddof=1)
    error = np.sqrt(var_x / n + var_y / m)
    t = (system.mean() - baseline.mean()) / error
    df = error**4 / ((var_x / n) ** 2 / (n - 1) + (var_y / m) ** 2 / (m - 1))
    scale = np.sqrt(var_x + var_y) / error
    limit = _NONCENTRALITY_LIMIT * scale
    # The noncentral t's cdf is computed at |t| (its tails lose precision far out): a
    # negative t's interval is the mirror image of |t|'s.
    tail = (1 - level) / 2
    low = _noncentrality_at(abs(t), df, 1 - tail, limit)
    high = _noncentrality_at(abs(t), df, tail, limit)
    if t < 0:
        low, high = -high, -low
    return float(stats.norm.cdf(low / scale)), float(stats.norm.cdf(high / scale))


def _quantile_segments(n: int, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pieces of (0, 1) on which both empirical quantile functions (of n and of m
    sorted scores) are constant: their widths and the sorted-score index of each side."""
    edges = np.union1d(np.arange(n + 1) / n, np.arange(m + 1) / m)
    middle = (edges[:-1] + edges[1:]) / 2
    # F^-1(t) = x_(ceil(n t)), the quantile function deepsig and the paper use
    return np.diff(edges), np.ceil(n * middle).astype(int) - 1, np.ceil(m * middle).astype(int) - 1


def violation_ratio(system, baseline) -> np.ndarray:
    """Dror et al.'s violation ratio eps_W2 of the claim "the system stochastically dominates
    the baseline": the share of the squared 2-Wasserstein distance between the two empirical
    score distributions that lies where the system's quantile function is below the
    baseline's (0: the system's every quantile is at least the baseline's; 1: the reverse).

    Integrated exactly over the pieces where both quantile functions are constant (deepsig
    sums a grid of step ``dt``). The last axis holds the seeds, so a batch of bootstrap
    samples is one call. Identical distributions (distance 0) give 0.5, as in deepsig.
    """
    system = np.sort(np.asarray(system, dtype=float), axis=-1)
    baseline = np.sort(np.asarray(baseline, dtype=float), axis=-1)
    widths, system_index, baseline_index = _quantile_segments(system.shape[-1], baseline.shape[-1])
    gap = baseline[..., baseline_index] - system[..., system_index]
    squared = widths * gap**2
    distance = squared.sum(axis=-1)
    violated = np.where(gap > 0, squared, 0.0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(distance > 0, violated / distance, 0.5)


def epsilon_min(
    system,
    baseline,
    confidence_level: float = CONFIDENCE_LEVEL,
    n_bootstrap: int = N_BOOTSTRAP,
    seed: int = DEFAULT_SEED,
) -> float:
    """ASO's epsilon_min (Dror et al. 2019, eq. 6; deepsig's ``aso``): an upper confidence
    bound on the violation ratio of "the system's seeds almost stochastically dominate the
    baseline's". Below 0.5 the system is the better one more often than not; deepsig's
    authors read below 0.2 as a claim (Ulmer et al. 2022). 0.5 means no order either way.

    eps_min = eps_W2 - sqrt((n+m)/(n m)) sigma Phi^-1(1 - confidence_level), where sigma is
    the standard deviation of sqrt(n m/(n+m)) (eps_W2* - eps_W2) over ``n_bootstrap``
    resamples (with replacement) of each side's seeds, clipped to [0, 1]. NaN with fewer
    than ``MIN_SEEDS`` seeds on a side.
    """
    system = _checked_scores("system", system)
    baseline = _checked_scores("baseline", baseline)
    if not 0.5 <= confidence_level < 1:
        raise ValueError(f"confidence_level: expected a value in [0.5, 1), got {confidence_level}")
    n, m = system.size, baseline.size
    if min(n, m) < MIN_SEEDS:
        return np.nan
    observed = violation_ratio(system, baseline)
    rng = np.random.default_rng(seed)
    resampled = violation_ratio(
        rng.choice(system, size=(n_bootstrap, n)), rng.choice(baseline, size=(n_bootstrap, m))
    )
    scale = np.sqrt(n * m / (n + m))
    sigma = np.std(scale * (resampled - observed))
    bound = observed - sigma / scale * stats.norm.ppf(1 - confidence_level)
    return float(np.clip(bound, 0.0, 1.0))


def _seed_scores(trials: pd.DataFrame, config_key: str, columns: list[str]) -> np.ndarray:
    """One configuration's per-seed mean of its logged ``columns`` (one language's metric, or
    every test language's for the average); runs that did not log them all are left out."""
    if not set(columns) <= set(trials.columns):
        return np.array([])
    runs = trials.loc[trials["config_key"] == config_key, columns].astype(float)
    return runs.mean(axis=1, skipna=False).dropna().to_numpy()


def _effect_size_row(lang: str, metric: str, tested, system, baseline) -> dict:
    """One row of :func:`effect_size_table`: ``tested`` the comparison's result (its
    mean_difference, ci_low, ci_high and test), ``system`` and ``baseline`` the seeds'."""
    measured = system.size > 0 and baseline.size > 0
    beats = probability_of_improvement(system, baseline) if measured else (np.nan,) * 3
    return {
        "lang": lang,
        "metric": metric,
        "mean_difference": tested["mean_difference"],
        "ci_low": tested["ci_low"],
        "ci_high": tested["ci_high"],
        "test": tested["test"],
        "n_seeds_system": system.size,
        "n_seeds_baseline": baseline.size,
        "p_improvement": beats[0],
        "p_improvement_low": beats[1],
        "p_improvement_high": beats[2],
        "epsilon_min": epsilon_min(system, baseline) if measured else np.nan,
    }


def effect_size_table(
    comparison: pd.DataFrame,
    trials: pd.DataFrame,
    keys: tuple[str, str],
    split: str,
    average: Mapping | None = None,
) -> pd.DataFrame:
    """Per row (language) of ``comparison`` (analysis.select.compare_to_baseline's frame on
    ``split``) for ``keys`` (the system's and the baseline's config_key): the difference with
    the comparison test's 95% interval, and over the two configurations' per-seed scores of
    that metric (every finished seed of each, from ``trials``) the probability of
    improvement with its interval and epsilon_min. With ``average`` (analysis.select.
    compare_average's result on ``split``) a last row, lang ``AVERAGE``, does the same for
    the mean over the languages: its test, and each seed's mean over the languages.

    Columns: lang, metric, mean_difference, ci_low, ci_high, test, n_seeds_system,
    n_seeds_baseline, p_improvement, p_improvement_low, p_improvement_high, epsilon_min.
    """
    rows = []
    for row in comparison.itertuples(index=False):
        columns = [f"{split}/{row.lang}/{row.metric}"]
        seeds = (_seed_scores(trials, key, columns) for key in keys)
        rows.append(_effect_size_row(row.lang, row.metric, row._asdict(), *seeds))
    if average is not None:
        columns = [f"{split}/{row.lang}/{row.metric}" for row in comparison.itertuples(index=False)]
        seeds = (_seed_scores(trials, key, columns) for key in keys)
        metric = "/".join(sorted(set(map(str, comparison["metric"]))))
        rows.append(_effect_size_row(AVERAGE, metric, average, *seeds))
    return pd.DataFrame(rows)
