"""Paired significance tests of a system against a baseline on per-example scores.

Inputs are per-example scores of two systems on the same examples, shaped
(seeds, examples): row s holds the run with seed s, column i the same example in every
run. Three tests, one per paper:

- :func:`paired_ttest`: the adjustment and EAR papers' paired t-test on per-example
  scores averaged over seeds (NLI, QA, retrieval); scipy's ``ttest_rel``.
- :func:`bootstrap_ttest`: the robust-training paper's bootstrapped paired t-test.
- :func:`permutation_test`: the adjustment paper's NER test, a paired permutation test on
  predictions concatenated over seeds, for metrics such as entity F1 that are not means
  of per-example scores.

Each returns a :class:`PairedTestResult` (mean difference, confidence interval, p-value).
:func:`bootstrap_ci` gives the paired bootstrap interval of the mean difference, and
:func:`holm` / :func:`benjamini_hochberg` correct the p-values of many languages.

Every test has a ``*_batch`` form that runs many independent comparisons at once (a
leading batch axis); resampling draws depend only on the seed and the row's own data, so
row b of a batch equals the single test on row b with the same seed. The calibration
tests use the batch forms.

Two resampling paths, the same in distribution. The general path draws per item: which
examples a bootstrap resample holds, which units a permutation swaps. The grouped path
serves discrete scores (0/1 accuracy averaged over a few seeds; entity counts), whose
items take few distinct values: a bootstrap resample of n items is then a multinomial
draw of n over the distinct values' empirical frequencies, and a permutation swaps
Binomial(count, 1/2) of the count units that share a value, so each resample costs one
draw per distinct value instead of one per item. Each comparison (row) takes the grouped
path when its items take at most :data:`GROUPED_MAX_VALUES` distinct values and there
are at least 8 items per value (for fewer, drawing per item is as cheap); continuous
scores (F1, reciprocal rank) take the general path. The two paths use different random
streams, so their p-values agree within Monte Carlo error, not digit for digit.

Every fast path (the batched t-test, the count-matrix bootstrap, the matrix of swaps, the
grouped draws, the closed-form mean squares, the corrections' running extrema) has a plain
reference in :mod:`analysis.stats_reference` (a loop per resample, iteration or cell) that
the tests check it against.
"""

import warnings
from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np
from scipy import stats

CONFIDENCE_LEVEL = 0.95
SIGNIFICANCE_TESTS = ("crossed", "ttest", "permutation", "bootstrap")
DEFAULT_TEST = "crossed"
# The tests that average (or pool) the seeds' runs and so never see a whole run's seed
# shift, with what their report says they ignore (docs/statistics.md).
SEED_AVERAGED_TESTS = {
    "ttest": "averages every example over the seeds, so its standard error leaves out the "
    "run-level seed-to-seed variance",
    "bootstrap": "resamples examples averaged over the seeds, so it leaves out the run-level "
    "seed-to-seed variance",
    "permutation": "swaps each (seed, example) unit on its own, so it sees neither the "
    "run-level seed-to-seed variance nor an example's difference repeating over seeds",
}
DEFAULT_RESAMPLES = 1000
# Resampling matrices are built in blocks of about this many entries to bound memory.
_BLOCK_ENTRIES = 4_000_000
# Resampled statistics within this relative distance of the observed one count as
# reaching it: exact ties of discrete data must not be lost to float rounding.
TIE_TOLERANCE = 1e-9
# A resampled mean within this distance of 0 (relative to the observed mean, when above 1)
# counts as 0 on both sides of the bootstrap interval's p-value, for the same reason.
ZERO_TOLERANCE = 1e-12
# Grouped resampling (see the module notes on the two paths): taken for a comparison whose
# resampled items take at most GROUPED_MAX_VALUES distinct values, and at most one per
# _GROUPED_ITEMS_PER_VALUE items (fewer items draw per item as fast). Items equal to
# _GROUPED_DECIMALS decimals count as one value.
GROUPED_MAX_VALUES = 64
_GROUPED_ITEMS_PER_VALUE = 8
_GROUPED_DECIMALS = 9

Statistic = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class PairedTestResult:
    """Outcome of a two-sided paired test; differences are system - baseline in the metric's unit.

    ``statistic`` is the test's own statistic: t for the t-tests, the observed difference
    of the metric for the permutation test and the bootstrap interval.
    """

    mean_difference: float
    ci_low: float
    ci_high: float
    statistic: float
    p_value: float
    n_examples: int
    n_seeds: int
    test: str = DEFAULT_TEST
    n_resamples: int = 0  # 0 for the analytic t-test


@dataclass(frozen=True)
class BatchResult:
    """Many comparisons at once: each field has one entry per comparison."""

    mean_difference: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    statistic: np.ndarray
    p_value: np.ndarray

    def row(
        self, index: int, n_examples: int, n_seeds: int, test: str, n_resamples: int
    ) -> PairedTestResult:
        return PairedTestResult(
            mean_difference=float(self.mean_difference[index]),
            ci_low=float(self.ci_low[index]),
            ci_high=float(self.ci_high[index]),
            statistic=float(self.statistic[index]),
            p_value=float(self.p_value[index]),
            n_examples=n_examples,
            n_seeds=n_seeds,
            test=test,
            n_resamples=n_resamples,
        )


# --------------------------------------------------------------------------- input checks


def _paired_arrays(
    system, baseline, trailing_axes: tuple[int, ...] = (2,), batched: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Both arrays as float, same shape, (seeds, examples[, k]) after an optional batch axis."""
    system = np.asarray(system, dtype=float)
    baseline = np.asarray(baseline, dtype=float)
    allowed = tuple(n + batched for n in trailing_axes)
    layout = " or ".join(
        ("(batch, " if batched else "(") + ("seeds, examples, k)" if n == 3 else "seeds, examples)")
        for n in trailing_axes
    )
    if system.ndim not in allowed or system.shape != baseline.shape:
        raise ValueError(
            f"system and baseline scores must both be shaped {layout} with the same "
            f"shape; got system {system.shape} and baseline {baseline.shape}"
        )
    if not (np.all(np.isfinite(system)) and np.all(np.isfinite(baseline))):
        raise ValueError("system and baseline scores must be finite numbers (found NaN or inf)")
    return system, baseline


def _check_examples(n_seeds: int, n_examples: int) -> None:
    if n_seeds < 1 or n_examples < 2:
        raise ValueError(
            f"a paired test needs at least 1 seed and 2 examples; got {n_seeds} "
            f"seed(s) and {n_examples} example(s)"
        )


def _check_resamples(name: str, value: int) -> int:
    if int(value) != value or value < 1:
        raise ValueError(f"{name} must be a positive integer; got {value!r}")
    return int(value)


def _check_level(level: float) -> float:
    if not 0 < level < 1:
        raise ValueError(f"level must be strictly between 0 and 1; got {level!r}")
    return float(level)


# --------------------------------------------------------------------------- resampling


def _blocks(total: int, width: int) -> Iterator[int]:
    """Block sizes that add up to ``total``, each of about _BLOCK_ENTRIES / width rows."""
    rows = max(1, _BLOCK_ENTRIES // max(width, 1))
    for start in range(0, total, rows):
        yield min(rows, total - start)


def _bootstrap_weights(rng: np.random.Generator, rows: int, n: int) -> np.ndarray:
    """(rows, n) counts: how often each of n items is drawn in each resample of size n."""
    draws = rng.integers(0, n, size=(rows, n))
    flat = (draws + n * np.arange(rows)[:, None]).ravel()
    return np.bincount(flat, minlength=rows * n).reshape(rows, n).astype(float)


def _two_sided_p(resampled: np.ndarray, observed: np.ndarray) -> np.ndarray:
    """(1 + #{|resampled| >= |observed|}) / (B + 1) per row; resampled is (batch, B).

    The +1 counts the observed data as one of the resamples, so p is never 0 (Davison &
    Hinkley 1997, eq. 4.11).
    """
    threshold = np.abs(observed)[:, None] * (1 - TIE_TOLERANCE)
    reached = np.count_nonzero(np.abs(resampled) >= threshold, axis=1)
    return (1 + reached) / (resampled.shape[1] + 1)


def _percentile_interval(values: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    tail = (1 - level) / 2
    low, high = np.quantile(values, [tail, 1 - tail], axis=1)
    return low, high


def _group_codes(keys: np.ndarray, limit: int) -> tuple[int, np.ndarray] | None:
    """(n, k) keys -> (G, (n,) group index of each row) for the G distinct rows, or None
    when there are more than ``limit``."""
    order = np.lexsort(keys.T)
    ordered = keys[order]
    starts = np.empty(len(keys), dtype=bool)
    starts[0] = True
    np.any(ordered[1:] != ordered[:-1], axis=1, out=starts[1:])
    n_groups = int(np.count_nonzero(starts))
    if n_groups > limit:
        return None
    codes = np.empty(len(keys), dtype=np.int64)
    codes[order] = np.cumsum(starts) - 1
    return n_groups, codes


def _value_groups(items: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(n, k) items -> ((G, k) distinct values, (G,) counts) when the grouped path pays, else
    None.

    Items equal to _GROUPED_DECIMALS decimals form one group, represented by its members'
    mean (so counts @ values is the items' sum). The grouped path pays when
    G <= GROUPED_MAX_VALUES and n >= _GROUPED_ITEMS_PER_VALUE * G.
    """
    n, k = items.shape
    limit = min(GROUPED_MAX_VALUES, n // _GROUPED_ITEMS_PER_VALUE)
    if limit < 1:
        return None
    keys = np.round(items, _GROUPED_DECIMALS) + 0.0  # + 0.0 turns -0.0 into 0.0
    # A prefix with too many values already decides it, without sorting every item.
    if _group_codes(keys[: 4 * limit + 1], limit) is None:
        return None
    coded = _group_codes(keys, limit)
    if coded is None:
        return None
    n_groups, codes = coded
    counts = np.bincount(codes, minlength=n_groups)
    sums = np.stack(
        [np.bincount(codes, weights=items[:, j], minlength=n_groups) for j in range(k)], axis=1
    )
    return sums / counts[:, None], counts


def _multinomial_counts(rng: np.random.Generator, rows: int, counts: np.ndarray) -> np.ndarray:
    """(rows, G) bootstrap resamples of n = counts.sum() items whose group g holds counts[g]
    of them: how many of the n draws with replacement fall in each group, a multinomial
    draw of n over the frequencies counts / n."""
    total = int(counts.sum())
    return rng.multinomial(total, counts / total, size=rows).astype(float)


# --------------------------------------------------------------------------- paired t-test


def _seed_mean_differences(system: np.ndarray, baseline: np.ndarray) -> np.ndarray:
    """(batch, seeds, examples) -> (batch, examples): per-example differences of seed means."""
    return system.mean(axis=-2) - baseline.mean(axis=-2)


def ttest_batch(system, baseline, level: float = CONFIDENCE_LEVEL) -> BatchResult:
    """:func:`paired_ttest` on arrays shaped (batch, seeds, examples)."""
    system, baseline = _paired_arrays(system, baseline, batched=True)
    _check_examples(*system.shape[1:])
    level = _check_level(level)
    differences = _seed_mean_differences(system, baseline)
    mean = differences.mean(axis=1)
    constant = np.all(differences == differences[:, :1], axis=1)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        # Rows without spread make scipy warn; they are replaced by their limits below.
        warnings.simplefilter("ignore", RuntimeWarning)
        test = stats.ttest_rel(system.mean(axis=1), baseline.mean(axis=1), axis=1)
        interval = test.confidence_interval(level)
    # No spread: t is 0/0 or x/0 and scipy gives NaN; report the limits instead.
    statistic = np.where(
        constant, np.where(mean == 0, 0.0, np.copysign(np.inf, mean)), test.statistic
    )
    p_value = np.where(constant, np.where(mean == 0, 1.0, 0.0), test.pvalue)
    return BatchResult(
        mean_difference=mean,
        ci_low=np.where(constant, mean, interval.low),
        ci_high=np.where(constant, mean, interval.high),
        statistic=statistic,
        p_value=p_value,
    )


def paired_ttest(system, baseline, level: float = CONFIDENCE_LEVEL) -> PairedTestResult:
    """Two-sided paired t-test over examples of two score arrays shaped (seeds, examples).

    Scores are first averaged over seeds per example, so the test's unit is the example
    and seed noise is smoothed rather than counted as extra samples. The interval is the
    t interval of the mean difference.
    """
    system, baseline = _paired_arrays(system, baseline)
    result = ttest_batch(system[None], baseline[None], level)
    return result.row(0, system.shape[1], system.shape[0], "ttest", 0)


# --------------------------------------------------------------------------- bootstrap


def _resampled_t(mean: np.ndarray, variance: np.ndarray, n: int) -> np.ndarray:
    """t = mean / sqrt(variance / n) of resamples of n items."""
    with np.errstate(invalid="ignore", divide="ignore"):
        t = mean / np.sqrt(variance / n)
    # A resample of identical values has no spread: |t| is 0 (no shift) or infinite.
    return np.where(variance > 0, t, np.where(np.abs(mean) > 1e-15, np.inf, 0.0))


def _general_bootstrap_moments(
    centred: np.ndarray, n_resamples: int, seed: int, with_t: bool
) -> tuple[np.ndarray, np.ndarray | None]:
    """General path: every row of ``centred`` (batch, n) resampled with the same draws of
    examples (a count matrix per block)."""
    n = centred.shape[1]
    squares = centred**2
    rng = np.random.default_rng(seed)
    means, t_values = [], []
    for rows in _blocks(n_resamples, n):
        weights = _bootstrap_weights(rng, rows, n)
        mean = centred @ weights.T / n
        means.append(mean)
        if with_t:
            variance = np.maximum((squares @ weights.T - n * mean**2) / (n - 1), 0.0)
            t_values.append(_resampled_t(mean, variance, n))
    return np.concatenate(means, axis=1), np.concatenate(t_values, axis=1) if with_t else None


def _grouped_bootstrap_moments(
    values: np.ndarray, counts: np.ndarray, n_resamples: int, seed: int, with_t: bool
) -> tuple[np.ndarray, np.ndarray | None]:
    """Grouped path for one row: ``counts[g]`` of its n items equal ``values[g]``; each
    resample is a multinomial draw of how many of its n items take each value, and its mean
    and variance follow from those counts."""
    n = int(counts.sum())
    rng = np.random.default_rng(seed)
    means, t_values = [], []
    for rows in _blocks(n_resamples, len(values)):
        draws = _multinomial_counts(rng, rows, counts)
        mean = draws @ values / n
        means.append(mean)
        if with_t:
            variance = np.einsum("rg,rg->r", draws, (values - mean[:, None]) ** 2) / (n - 1)
            t_values.append(_resampled_t(mean, variance, n))
    return np.concatenate(means), np.concatenate(t_values) if with_t else None


def _bootstrap_moments(
    differences: np.ndarray, n_resamples: int, seed: int, with_t: bool = True
) -> tuple[np.ndarray, np.ndarray | None]:
    """Resampled means and t statistics (None unless ``with_t``) of the null-centred
    differences, each (batch, B).

    ``differences`` is (batch, n). Rows whose differences take few distinct values take the
    grouped path, each with its own generator seeded by ``seed``; the others take the
    general path together, all resampled with the same draws. Either way a row's draws
    depend only on the seed and the row.
    """
    batch, n = differences.shape
    centred = differences - differences.mean(axis=1, keepdims=True)
    means = np.empty((batch, n_resamples))
    t_values = np.empty((batch, n_resamples)) if with_t else None
    general = []
    for row in range(batch):
        groups = _value_groups(centred[row][:, None])
        if groups is None:
            general.append(row)
            continue
        row_means, row_t = _grouped_bootstrap_moments(
            groups[0][:, 0], groups[1], n_resamples, seed, with_t
        )
        means[row] = row_means
        if with_t:
            t_values[row] = row_t
    if general:
        general_means, general_t = _general_bootstrap_moments(
            centred[general], n_resamples, seed, with_t
        )
        means[general] = general_means
        if with_t:
            t_values[general] = general_t
    return means, t_values


def _observed_t(differences: np.ndarray) -> np.ndarray:
    n = differences.shape[1]
    mean = differences.mean(axis=1)
    sd = differences.std(axis=1, ddof=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = mean / (sd / np.sqrt(n))
    return np.where(sd > 0, t, np.where(mean == 0, 0.0, np.copysign(np.inf, mean)))


def _batched_differences(system, baseline, n_resamples: int, level: float):
    """Checked inputs of a batched bootstrap: the seed-averaged per-example differences
    (batch, examples), their means, and the validated resample count and level."""
    system, baseline = _paired_arrays(system, baseline, batched=True)
    _check_examples(*system.shape[1:])
    n_resamples, level = _check_resamples("n_resamples", n_resamples), _check_level(level)
    differences = _seed_mean_differences(system, baseline)
    return differences, differences.mean(axis=1), n_resamples, level


def bootstrap_ttest_batch(
    system,
    baseline,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    level: float = CONFIDENCE_LEVEL,
) -> BatchResult:
    """:func:`bootstrap_ttest` on arrays shaped (batch, seeds, examples)."""
    differences, mean, n_resamples, level = _batched_differences(
        system, baseline, n_resamples, level
    )
    resampled_means, resampled_t = _bootstrap_moments(differences, n_resamples, seed)
    observed_t = _observed_t(differences)
    low, high = _percentile_interval(mean[:, None] + resampled_means, level)
    return BatchResult(
        mean_difference=mean,
        ci_low=low,
        ci_high=high,
        statistic=observed_t,
        p_value=_two_sided_p(resampled_t, observed_t),
    )


def bootstrap_ttest(
    system,
    baseline,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    level: float = CONFIDENCE_LEVEL,
) -> PairedTestResult:
    """Bootstrapped paired t-test (bootstrap-t) on score arrays shaped (seeds, examples).

    What is resampled: the examples. Scores are averaged over seeds per example, giving
    one difference d_i = system_i - baseline_i per example (n examples). The observed
    statistic is the paired t = mean(d) / (sd(d) / sqrt(n)). To simulate the null
    hypothesis the differences are centred (d_i - mean(d), mean zero); ``n_resamples``
    times, n of them are drawn with replacement and t is recomputed on the draw.

    How the p-value is formed: two-sided, p = (1 + #{|t*| >= |t|}) / (n_resamples + 1),
    the share of null resamples whose t is at least as extreme as the observed one,
    counting the observed data as one of them. The interval is the percentile bootstrap
    interval of the mean difference (the same draws on the uncentred differences).
    Unlike the analytic t-test, it does not assume t follows Student's distribution.

    When the differences take few distinct values (0/1 scores over a few seeds) each
    resample is drawn as a multinomial count per value instead (see the module notes):
    the same distribution of t*, different random draws.
    """
    system, baseline = _paired_arrays(system, baseline)
    result = bootstrap_ttest_batch(system[None], baseline[None], n_resamples, seed, level)
    return result.row(0, system.shape[1], system.shape[0], "bootstrap", n_resamples)


def bootstrap_ci_batch(
    system,
    baseline,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    level: float = CONFIDENCE_LEVEL,
) -> BatchResult:
    """:func:`bootstrap_ci` on arrays shaped (batch, seeds, examples): one interval and one
    p-value per row (rows on the general path share their draws of examples)."""
    differences, mean, n_resamples, level = _batched_differences(
        system, baseline, n_resamples, level
    )
    resampled = mean[:, None] + _bootstrap_moments(differences, n_resamples, seed, False)[0]
    low, high = _percentile_interval(resampled, level)
    tolerance = ZERO_TOLERANCE * np.maximum(1.0, np.abs(mean))[:, None]
    at_or_below = np.count_nonzero(resampled <= tolerance, axis=1)
    at_or_above = np.count_nonzero(resampled >= -tolerance, axis=1)
    p_value = np.minimum(1.0, 2 * (1 + np.minimum(at_or_below, at_or_above)) / (n_resamples + 1))
    return BatchResult(
        mean_difference=mean, ci_low=low, ci_high=high, statistic=mean, p_value=p_value
    )


def bootstrap_ci(
    system,
    baseline,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    level: float = CONFIDENCE_LEVEL,
) -> PairedTestResult:
    """Paired percentile bootstrap interval of the mean difference, shaped (seeds, examples).

    Scores are averaged over seeds per example; the examples (each with its system and
    baseline score, so pairs stay together) are drawn with replacement ``n_resamples``
    times and the mean difference recomputed; the interval holds the central ``level``
    share of those means. Its p-value inverts the interval: twice the smaller share of
    resampled means on either side of zero, (1 + count) / (n_resamples + 1), capped at 1.
    Discrete differences are resampled as multinomial counts per distinct value, as in
    :func:`bootstrap_ttest`.
    """
    system, baseline = _paired_arrays(system, baseline)
    result = bootstrap_ci_batch(system[None], baseline[None], n_resamples, seed, level)
    return result.row(0, system.shape[1], system.shape[0], "bootstrap_ci", n_resamples)


# --------------------------------------------------------------------------- permutation


def entity_f1(counts: np.ndarray) -> np.ndarray:
    """Micro F1 from summed [tp, fp, fn] counts on the last axis: 2tp / (2tp + fp + fn).

    0 when there is nothing to find and nothing was predicted (as seqeval reports).
    """
    counts = np.asarray(counts, dtype=float)
    if counts.shape[-1] != 3:
        raise ValueError(f"F1 needs [tp, fp, fn] counts on the last axis; got shape {counts.shape}")
    tp, fp, fn = counts[..., 0], counts[..., 1], counts[..., 2]
    denominator = 2 * tp + fp + fn
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, 2 * tp / denominator, 0.0)


# Statistics on summed per-example counts, by the `metric` that per-example artifacts declare.
COUNT_STATISTICS: dict[str, Statistic] = {"f1": entity_f1}


def f1_contributions(counts) -> np.ndarray:
    """Each unit's first-order contribution to the pooled entity F1 of its counts.

    ``counts`` is (..., seeds, examples, 3) [tp, fp, fn]; F1 = Y / X over the units pooled
    on the last two unit axes, with y = 2 tp and x = 2 tp + fp + fn per unit. The delta
    method (the ratio estimator's linearisation) gives F1 + (y - F1 x) / mean(x) per unit,
    shaped (..., seeds, examples): their mean is the pooled F1 exactly, and a unit's weight
    moves F1 by its influence (y - F1 x) / mean(x) over the number of units, to first order.
    With no entity to find or predicted anywhere, F1 is 0 and so is every influence.
    """
    counts = np.asarray(counts, dtype=float)
    if counts.ndim < 3 or counts.shape[-1] != 3:
        raise ValueError(
            f"F1 contributions need counts shaped (seeds, examples, 3) [tp, fp, fn]; got "
            f"shape {counts.shape}"
        )
    f1 = entity_f1(counts.sum(axis=(-3, -2)))[..., None, None]
    tp, fp, fn = np.moveaxis(counts, -1, 0)
    size = 2 * tp + fp + fn
    mean_size = size.mean(axis=(-2, -1), keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        influence = np.where(mean_size > 0, (2 * tp - f1 * size) / mean_size, 0.0)
    return f1 + influence


# Per-unit linearisations of the statistics of COUNT_STATISTICS.
LINEARISATIONS: dict[Statistic, Callable[[np.ndarray], np.ndarray]] = {entity_f1: f1_contributions}


# --------------------------------------------------------------------------- crossed test

MIN_CROSSED_SEEDS = 2
# Satterthwaite's df is evaluated at an upper confidence bound of the seeds' mean square,
# its (1 - quantile) bound: at the point estimate it rejects up to 7.8% at 3 seeds
# (docs/statistics.md). Two seeds (1 df) take a lower quantile to hold 5%.
_SEED_BOUND_QUANTILE = 0.35
_TWO_SEED_BOUND_QUANTILE = 0.2


def mean_squares(differences: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(examples, seeds, residual) mean squares of (..., seeds, examples) differences, one per
    leading index: the two-way ANOVA without replication."""
    seeds, examples = differences.shape[-2:]
    grand = differences.mean(axis=(-2, -1), keepdims=True)
    by_example = differences.mean(axis=-2, keepdims=True)
    by_seed = differences.mean(axis=-1, keepdims=True)
    residual = differences - by_example - by_seed + grand
    ms_example = seeds * ((by_example - grand) ** 2).sum(axis=(-2, -1)) / (examples - 1)
    ms_seed = examples * ((by_seed - grand) ** 2).sum(axis=(-2, -1)) / (seeds - 1)
    ms_residual = (residual**2).sum(axis=(-2, -1)) / ((examples - 1) * (seeds - 1))
    return ms_example, ms_seed, ms_residual


def crossed_df(ms_example, ms_seed, ms_residual, seeds: int, examples: int) -> np.ndarray:
    """Satterthwaite's degrees of freedom of MS_seeds + max(0, MS_examples - MS_residual),
    with MS_seeds at its upper confidence bound (module notes of :func:`crossed_test`);
    at least seeds - 1, the df of the seed part alone."""
    quantile = _TWO_SEED_BOUND_QUANTILE if seeds == 2 else _SEED_BOUND_QUANTILE
    seed_bound = ms_seed * (seeds - 1) / stats.chi2.ppf(quantile, seeds - 1)
    examples_part = ms_example > ms_residual
    squares = np.where(
        examples_part,
        ms_example**2 / (examples - 1) + ms_residual**2 / ((examples - 1) * (seeds - 1)),
        0.0,
    )
    total = seed_bound + np.where(examples_part, ms_example - ms_residual, 0.0)
    denominator = seed_bound**2 / (seeds - 1) + squares
    with np.errstate(invalid="ignore", divide="ignore"):
        df = np.where(denominator > 0, total**2 / denominator, seeds - 1)
    return np.clip(df, seeds - 1, seeds * examples - 1)


def crossed_moments(differences) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The mean of (..., seeds, examples) paired differences, its standard error under the
    crossed seed x example model and the error's degrees of freedom (:func:`crossed_df`)."""
    differences = np.asarray(differences, dtype=float)
    seeds, examples = differences.shape[-2:]
    if seeds < MIN_CROSSED_SEEDS or examples < 2:
        raise ValueError(
            f"the seed-aware (crossed) test needs at least {MIN_CROSSED_SEEDS} seeds paired "
            f"with the baseline's and 2 examples; got {seeds} seed(s) and {examples} "
            "example(s). With one seed nothing measures the seed-to-seed variance: run more "
            "seeds (a seed-averaged test, ttest, bootstrap or permutation, runs on one seed but "
            "ignores it, and a report gives no verdict from it)"
        )
    ms_example, ms_seed, ms_residual = mean_squares(differences)
    # n S Var(mean) = E[MS_seeds] + E[MS_examples] - E[MS_residual] (module notes). An
    # estimate of exactly 0 (discrete scores whose seeds' mean differences tie) would claim
    # certainty; the model's floor, E[MS_seeds] >= noise, takes MS_residual instead, on its
    # own (n - 1)(S - 1) df.
    total = ms_seed + np.maximum(ms_example - ms_residual, 0.0)
    variance = np.where(total > 0, total, ms_residual) / (seeds * examples)
    df = np.where(
        total > 0,
        crossed_df(ms_example, ms_seed, ms_residual, seeds, examples),
        (examples - 1) * (seeds - 1),
    )
    return differences.mean(axis=(-2, -1)), np.sqrt(variance), df


def _crossed_differences(system, baseline, statistic: Statistic | None) -> np.ndarray:
    """(batch, seeds, examples) differences: of scores, or of counts' linearised contributions
    to ``statistic`` (counts shaped (batch, seeds, examples, k))."""
    system, baseline = _paired_arrays(system, baseline, trailing_axes=(2, 3), batched=True)
    if system.ndim == 3:
        return system - baseline
    if statistic not in LINEARISATIONS:
        raise ValueError(
            "the crossed test compares per-example counts through a linearised statistic; "
            f"known: {', '.join(f.__name__ for f in LINEARISATIONS)}; got {statistic!r}"
        )
    linearise = LINEARISATIONS[statistic]
    return linearise(system) - linearise(baseline)


def crossed_test_batch(
    system, baseline, statistic: Statistic | None = None, level: float = CONFIDENCE_LEVEL
) -> BatchResult:
    """:func:`crossed_test` on arrays shaped (batch, seeds, examples[, k])."""
    level = _check_level(level)
    mean, error, df = crossed_moments(_crossed_differences(system, baseline, statistic))
    with np.errstate(invalid="ignore", divide="ignore"):
        t = mean / error
    # No spread at all: no difference (0), or the same one on every example and seed (inf).
    t = np.where(error > 0, t, np.where(mean == 0, 0.0, np.copysign(np.inf, mean)))
    half_width = stats.t.isf((1 - level) / 2, df) * error
    return BatchResult(
        mean_difference=mean,
        ci_low=mean - half_width,
        ci_high=mean + half_width,
        statistic=t,
        p_value=2 * stats.t.sf(np.abs(t), df),
    )


def crossed_test(
    system, baseline, statistic: Statistic | None = None, level: float = CONFIDENCE_LEVEL
) -> PairedTestResult:
    """The seed-aware default test: a t-test of the mean paired difference whose standard
    error counts the run-level seed variance as well as the examples'.

    Inputs are (seeds, examples) per-example scores paired by seed and example (0/1
    accuracy, F1, reciprocal rank, stage means), or (seeds, examples, k) counts with a
    ``statistic`` of :data:`LINEARISATIONS` (NER's entity F1: each unit's first-order
    contribution, :func:`f1_contributions`, whose mean is the pooled F1). The differences
    ``D[s, i] = delta + a[i] + eta[s] + e[s, i]`` are read as a crossed seed x example
    random-effects model; the mean's variance, ``example / n + seed / S + noise / (n S)``,
    is estimated by ``(MS_seeds + max(0, MS_examples - MS_residual)) / (n S)`` (expected
    mean squares; Searle, Casella & McCulloch 1992, ch. 4). Its degrees of freedom are
    Satterthwaite's (1946), evaluated at an upper confidence bound of MS_seeds: the plain
    plug-in makes the df large exactly when MS_seeds is small by chance, and rejects too
    often with 3 seeds (docs/statistics.md has the calibration). With the examples'
    part negligible the test is the one-sample t-test of the seeds' mean differences on
    S - 1 df; with the seed part negligible it tends to the paired z-test over examples.
    """
    system_array = np.asarray(system, dtype=float)
    result = crossed_test_batch(system_array[None], np.asarray(baseline)[None], statistic, level)
    return result.row(0, system_array.shape[1], system_array.shape[0], "crossed", 0)


def _weighted_sums(weights: np.ndarray, units: np.ndarray) -> np.ndarray:
    """(rows, U) weights and (batch, U, k) units -> (batch, rows, k) weighted sums (one BLAS
    call)."""
    return np.matmul(units.transpose(0, 2, 1), weights.T).transpose(0, 2, 1)


def _units(array: np.ndarray) -> np.ndarray:
    """(batch, seeds, examples, k) -> (batch, seeds * examples, k): predictions concatenated
    over seeds."""
    batch, seeds, examples, k = array.shape
    return array.reshape(batch, seeds * examples, k)


def _general_permutations(
    system_sum: np.ndarray,
    baseline_sum: np.ndarray,
    swap_gain: np.ndarray,
    statistic: Statistic,
    n_iterations: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """General path: (batch, B) permuted metric differences, each iteration a 0/1 swap per
    unit, the same swaps for every row."""
    n_units = swap_gain.shape[1]
    permuted = []
    for rows in _blocks(n_iterations, n_units):
        swaps = rng.integers(0, 2, size=(rows, n_units)).astype(float)
        shift = _weighted_sums(swaps, swap_gain)
        permuted.append(
            statistic(system_sum[:, None] + shift) - statistic(baseline_sum[:, None] - shift)
        )
    return np.concatenate(permuted, axis=1)


_WORD_BITS = 64
_M1, _M2, _M4, _H01 = (
    np.uint64(0x5555555555555555),
    np.uint64(0x3333333333333333),
    np.uint64(0x0F0F0F0F0F0F0F0F),
    np.uint64(0x0101010101010101),
)


def _popcount(words: np.ndarray) -> np.ndarray:
    """Number of set bits of each uint64 (the SWAR bit count)."""
    words = words - ((words >> np.uint64(1)) & _M1)
    words = (words & _M2) + ((words >> np.uint64(2)) & _M2)
    words = (words + (words >> np.uint64(4))) & _M4
    return (words * _H01) >> np.uint64(56)


def _fair_binomials(rng: np.random.Generator, rows: int, counts: np.ndarray) -> np.ndarray:
    """(rows, G) draws of Binomial(counts[g], 1/2): how many of a group's units a permutation
    swaps. A group of at most 64 units counts the set bits of one uniform word of that many
    bits (its bits are the units' fair coin flips); a larger one draws a binomial, one call
    per group so numpy reuses the binomial's setup."""
    swapped = np.empty((rows, len(counts)))
    small = np.flatnonzero(counts <= _WORD_BITS)
    if len(small):
        highest = np.array([2 ** int(counts[g]) - 1 for g in small], dtype=np.uint64)
        words = rng.integers(0, highest, size=(rows, len(small)), dtype=np.uint64, endpoint=True)
        swapped[:, small] = _popcount(words)
    for group in np.flatnonzero(counts > _WORD_BITS):
        swapped[:, group] = rng.binomial(counts[group], 0.5, size=rows)
    return swapped


def _grouped_permutations(
    system_sum: np.ndarray,
    baseline_sum: np.ndarray,
    gains: np.ndarray,
    counts: np.ndarray,
    statistic: Statistic,
    n_iterations: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Grouped path for one row: ``counts[g]`` units share the swap gain ``gains[g]`` (k,);
    swapping each with probability 1/2 swaps Binomial(counts[g], 1/2) of them, and the sums
    depend only on how many. (B,) permuted metric differences."""
    moving = np.any(gains != 0, axis=1)  # units whose swap changes nothing need no draw
    gains, counts = gains[moving], counts[moving]
    permuted = []
    for rows in _blocks(n_iterations, max(len(counts), 1)):
        swapped = _fair_binomials(rng, rows, counts)
        shift = (swapped @ gains)[None]
        permuted.append(statistic(system_sum + shift)[0] - statistic(baseline_sum - shift)[0])
    return np.concatenate(permuted)


def _general_unit_bootstrap(
    system_units: np.ndarray,
    baseline_units: np.ndarray,
    statistic: Statistic,
    n_resamples: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """General path: (batch, B) metric differences on units drawn with replacement, the same
    draws for every row."""
    n_units = system_units.shape[1]
    resampled = []
    for rows in _blocks(n_resamples, n_units):
        weights = _bootstrap_weights(rng, rows, n_units)
        resampled.append(
            statistic(_weighted_sums(weights, system_units))
            - statistic(_weighted_sums(weights, baseline_units))
        )
    return np.concatenate(resampled, axis=1)


def _grouped_unit_bootstrap(
    values: np.ndarray,
    counts: np.ndarray,
    statistic: Statistic | None,
    n_resamples: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Grouped path for one row: ``counts[g]`` units equal ``values[g]``, which is the unit's
    (system - baseline) score for the mean statistic (``statistic`` None), else its
    [system counts, baseline counts]. (B,) metric differences of multinomial resamples."""
    n_units = int(counts.sum())
    k = values.shape[1] // 2
    resampled = []
    for rows in _blocks(n_resamples, len(counts)):
        draws = _multinomial_counts(rng, rows, counts)
        sums = draws @ values
        if statistic is None:
            resampled.append(sums[:, 0] / n_units)
        else:
            resampled.append(statistic(sums[None, :, :k])[0] - statistic(sums[None, :, k:])[0])
    return np.concatenate(resampled)


def permutation_test_batch(
    system,
    baseline,
    n_iterations: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    statistic: Statistic | None = None,
    level: float = CONFIDENCE_LEVEL,
) -> BatchResult:
    """:func:`permutation_test` on arrays shaped (batch, seeds, examples[, k]).

    Rows whose units take few distinct values take the grouped path, each with its own
    generator seeded by ``seed``; the others take the general path, permuted with the same
    swaps (and resampled with the same draws). Either way a row's draws depend only on the
    seed and the row, so row b equals the single test on row b.
    """
    system, baseline = _paired_arrays(system, baseline, trailing_axes=(2, 3), batched=True)
    n_iterations, level = _check_resamples("n_iterations", n_iterations), _check_level(level)
    system_units, baseline_units, mean_statistic = _permutation_units(system, baseline, statistic)
    statistic = mean_statistic or statistic
    system_sum, baseline_sum = system_units.sum(axis=1), baseline_units.sum(axis=1)
    observed = statistic(system_sum) - statistic(baseline_sum)
    # Separate streams, so a row's draws do not depend on the path of the other rows.
    permutation_seed, bootstrap_seed = np.random.SeedSequence(seed).spawn(2)
    # What the system's sum gains when a unit is swapped.
    swap_gain = baseline_units - system_units
    permuted = _permuted_rows(
        system_sum, baseline_sum, swap_gain, statistic, n_iterations, permutation_seed
    )
    resampled = _resampled_rows(
        system_units, baseline_units, mean_statistic, statistic, n_iterations, bootstrap_seed
    )
    low, high = _percentile_interval(resampled, level)
    return BatchResult(
        mean_difference=observed,
        ci_low=low,
        ci_high=high,
        statistic=observed,
        p_value=_two_sided_p(permuted, observed),
    )


def _permutation_units(system, baseline, statistic: Statistic | None):
    """Both sides' units shaped (batch, units, k), and the mean statistic when ``statistic``
    is None (scores: the mean per-example score over all units), else None."""
    if system.ndim == 3:
        system, baseline = system[..., None], baseline[..., None]
    elif statistic is None:
        raise ValueError(
            "per-example counts shaped (seeds, examples, k) need a statistic that "
            "maps their sums to the metric, e.g. analysis.stats.entity_f1"
        )
    _check_examples(system.shape[1], system.shape[2])
    system_units, baseline_units = _units(system), _units(baseline)
    if statistic is not None:
        return system_units, baseline_units, None
    n_units = system_units.shape[1]

    def mean_statistic(sums):  # the mean per-example score over all units
        return sums[..., 0] / n_units

    return system_units, baseline_units, mean_statistic


def _permuted_rows(
    system_sum, baseline_sum, swap_gain, statistic: Statistic, n_iterations: int, seed
) -> np.ndarray:
    """Each row's permuted statistics: a row with few distinct swap gains on the grouped
    path with its own generator, the others together on the general path."""
    permuted = np.empty((len(swap_gain), n_iterations))
    general = []
    for row in range(len(swap_gain)):
        groups = _value_groups(swap_gain[row])
        if groups is None:
            general.append(row)
            continue
        permuted[row] = _grouped_permutations(
            system_sum[row : row + 1],
            baseline_sum[row : row + 1],
            *groups,
            statistic,
            n_iterations,
            np.random.default_rng(seed),
        )
    if general:
        permuted[general] = _general_permutations(
            system_sum[general],
            baseline_sum[general],
            swap_gain[general],
            statistic,
            n_iterations,
            np.random.default_rng(seed),
        )
    return permuted


def _resampled_rows(
    system_units,
    baseline_units,
    mean_statistic: Statistic | None,
    statistic: Statistic,
    n_iterations: int,
    seed,
) -> np.ndarray:
    """Each row's bootstrapped statistics, grouped or general as :func:`_permuted_rows`."""
    # The mean statistic's resamples depend only on each unit's difference; others need both.
    if mean_statistic is not None:
        unit_values = system_units - baseline_units
    else:
        unit_values = np.concatenate([system_units, baseline_units], axis=2)
    resampled = np.empty((len(unit_values), n_iterations))
    general = []
    for row in range(len(unit_values)):
        groups = _value_groups(unit_values[row])
        if groups is None:
            general.append(row)
            continue
        resampled[row] = _grouped_unit_bootstrap(
            *groups,
            None if mean_statistic is not None else statistic,
            n_iterations,
            np.random.default_rng(seed),
        )
    if general:
        resampled[general] = _general_unit_bootstrap(
            system_units[general],
            baseline_units[general],
            statistic,
            n_iterations,
            np.random.default_rng(seed),
        )
    return resampled


def permutation_test(
    system,
    baseline,
    n_iterations: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    statistic: Statistic | None = None,
    level: float = CONFIDENCE_LEVEL,
) -> PairedTestResult:
    """Paired permutation test on predictions concatenated over seeds.

    Inputs are shaped (seeds, examples) of per-example scores, or (seeds, examples, k)
    of per-example counts (e.g. [tp, fp, fn] entities per sentence). The seeds' runs are
    concatenated into seeds x examples units, each a (system, baseline) pair. The
    metric of a system is ``statistic`` of its counts summed over all units (default:
    the mean per-example score; for counts it is required, e.g. :func:`entity_f1`).

    Each of ``n_iterations`` iterations swaps the system's and the baseline's output
    independently for each unit with probability 1/2 and recomputes the metric
    difference; two-sided p = (1 + #{|permuted| >= |observed|}) / (n_iterations + 1).
    The interval is a percentile bootstrap of the metric difference over units
    (``n_iterations`` resamples).

    Since the metric depends on the units only through the sums, units with the same swap
    gain (baseline - system, a k-vector) are interchangeable: when those gains take few
    distinct values, an iteration draws how many units of each gain are swapped,
    Binomial(count, 1/2), instead of one swap per unit; likewise the interval resamples
    multinomial counts of the distinct units (of their difference for the default mean,
    of their (system, baseline) pair for a ``statistic``). This holds for any statistic of
    the summed counts, e.g. entity F1 when sentences' count vectors repeat.
    """
    system, baseline = _paired_arrays(system, baseline, trailing_axes=(2, 3))
    result = permutation_test_batch(
        system[None], baseline[None], n_iterations, seed, statistic, level
    )
    return result.row(0, system.shape[1], system.shape[0], "permutation", n_iterations)


# --------------------------------------------------------------------------- choosing a test


def run_significance_test(
    test: str,
    system,
    baseline,
    counts: tuple | None = None,
    statistic: Statistic | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> PairedTestResult:
    """Run the test named ``test`` (one of SIGNIFICANCE_TESTS) on per-example scores.

    ``counts`` = (system_counts, baseline_counts), each (seeds, examples, k), with their
    ``statistic``: the crossed and permutation tests then use them instead of the scores.
    With a single seed nothing measures the seed variance: ``crossed`` gives the observed
    difference with no interval and no p-value (:func:`untested_difference`); a
    seed-averaged test named by the caller still runs, on the two runs' examples.
    """
    if test == "crossed" and np.shape(system if counts is None else counts[0])[0] == 1:
        return untested_difference(system, baseline, counts, statistic)
    if test == "crossed":
        if counts is not None:
            return crossed_test(*counts, statistic=statistic)
        return crossed_test(system, baseline)
    if test == "ttest":
        return paired_ttest(system, baseline)
    if test == "bootstrap":
        return bootstrap_ttest(system, baseline, n_resamples, seed)
    if test == "permutation":
        if counts is not None:
            return permutation_test(
                *counts, n_iterations=n_resamples, seed=seed, statistic=statistic
            )
        return permutation_test(system, baseline, n_iterations=n_resamples, seed=seed)
    raise ValueError(f"significance_test={test!r} is not one of {', '.join(SIGNIFICANCE_TESTS)}")


def untested_difference(
    system, baseline, counts: tuple | None = None, statistic: Statistic | None = None
) -> PairedTestResult:
    """The crossed test's result on one seed: the observed difference (of the scores' means,
    or of ``statistic`` on the counts summed over seeds and examples) with a NaN interval,
    statistic and p-value, since nothing measures the seed-to-seed variance."""
    if counts is None:
        system, baseline = np.asarray(system, dtype=float), np.asarray(baseline, dtype=float)
        difference = system.mean() - baseline.mean()
    else:
        system, baseline = (np.asarray(part, dtype=float) for part in counts)
        difference = statistic(system.sum(axis=(0, 1))) - statistic(baseline.sum(axis=(0, 1)))
    seeds, examples = system.shape[:2]
    return PairedTestResult(
        float(difference), np.nan, np.nan, np.nan, np.nan, examples, seeds, "crossed"
    )


# --------------------------------------------------------------------------- corrections


def _p_vector(p_values) -> np.ndarray:
    p = np.asarray(p_values, dtype=float)
    if p.ndim != 1:
        raise ValueError(f"p_values must be a flat sequence; got shape {p.shape}")
    if np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError(f"p_values must lie in [0, 1]; got {p.tolist()}")
    return p


def holm(p_values) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error), in the input order.

    Sorted ascending, the i-th (1-based) of m becomes max over j <= i of min(1, (m - j + 1) p_(j)).
    """
    p = _p_vector(p_values)
    m = p.size
    order = np.argsort(p, kind="stable")
    adjusted = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * p[order]))
    result = np.empty(m)
    result[order] = adjusted
    return result


def benjamini_hochberg(p_values) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (false discovery rate), in the input order.

    Sorted ascending, the i-th (1-based) of m becomes min over j >= i of min(1, m p_(j) / j).
    """
    p = _p_vector(p_values)
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = p[order] * m / np.arange(1, m + 1)
    adjusted = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    result = np.empty(m)
    result[order] = adjusted
    return result


CORRECTIONS = {"holm": holm, "bh": benjamini_hochberg}
