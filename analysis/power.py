"""Power and the minimum detectable difference of a sweep's paired comparison, from its own runs.

A comparison of a configuration with the baseline pairs the runs of each seed: ``D[s, i]``,
the system's per-example score minus the baseline's, seed s, example i. We read it as a
two-way crossed random-effects model (examples x seeds, one observation per cell):

    D[s, i] = delta + a[i] + eta[s] + e[s, i]

with ``a`` the example's own difference (variance ``example``), ``eta`` the run-level
difference a pair of seeds makes on every example (variance ``seed``: the seed-to-seed
variance of the two configurations' scores, which one seed shifts over the whole test set),
and ``e`` the rest (variance ``noise``). The three variances come from the expected mean
squares of that model (:func:`variance_components`; Searle, Casella & McCulloch 1992,
*Variance Components*, ch. 4; Montgomery, *Design and Analysis of Experiments*, ch. 13).

The sweep's test (:func:`analysis.stats.paired_ttest`, and the bootstrap t-test that
approximates it) averages each example over the S seeds, ``d[i] = delta + a[i] + eta_mean +
e_mean[i]``, and runs a one-sample t-test over the n examples. Given ``eta_mean = h``, the
``d[i]`` are independent with mean ``delta + h`` and variance ``v = example + noise / S``, so
the statistic is noncentral t with n - 1 degrees of freedom and noncentrality
``sqrt(n) (delta + h) / sqrt(v)``; ``h`` itself is normal with variance ``seed / S``. The
rejection probability (:func:`ttest_power`) is the noncentral t's two-sided tail averaged over
``h`` (Gauss-Hermite quadrature). With ``seed = 0`` this is the textbook power of the paired
t-test (Cohen 1988, ch. 2; scipy.stats.nct). With ``seed > 0`` the test, which never sees the
run-level term, rejects more often than alpha under the null: :func:`ttest_power` at a zero
difference is that actual false-positive rate.

The permutation test (:func:`analysis.stats.permutation_test`) instead pools the seeds' runs:
its units are the S x n (seed, example) pairs, each swapped independently. For a mean of
per-example scores its statistic is the mean of ``D``; for a pooled metric such as NER's
entity F1 it is, to first order, the mean of each unit's contribution to the metric
(:func:`f1_contributions`, the delta method). The sign-flip distribution of a mean of paired
differences is asymptotically normal with variance (mean square of the units) / (S n)
(Hoeffding 1952, Ann. Math. Statist. 23:169), while the mean itself varies as
``example / n + seed / S + noise / (S n)``; :func:`permutation_power` is the rejection
probability of that z-test. The test counts an example's S units as independent and never
sees the run-level term, so it too rejects more than alpha when either varies.
"""

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import optimize, special, stats

from analysis.frames import AnalysisError, split_languages
from analysis.select import (
    SIGNIFICANCE_LEVEL,
    baseline_config_key,
    default_selection_metric,
    paired_run_ids,
    tested_counts,
)
from analysis.stats import (
    COUNT_STATISTICS,
    DEFAULT_TEST,
    LINEARISATIONS,
    crossed_df,
    mean_squares,
)
from analysis.sweep_data import PilotSweep
from analysis.tables import markdown_table

TARGET_POWER = 0.8
DEFAULT_ALPHA = 0.05
# Seeds beyond this count are not searched: "more than MAX_SEEDS".
MAX_SEEDS = 100
# The one-sided level of the seed variance's upper bound the power statements assume.
SEED_BOUND_LEVEL = 0.9
_QUADRATURE_NODES = 48


@dataclass(frozen=True)
class VarianceComponents:
    """The comparison's variances (score units squared) and the design they came from."""

    mean_difference: float
    example: float  # of the example's own difference, a[i]
    seed: float  # of the run-level difference a pair of seeds makes, eta[s]
    noise: float  # of the rest, e[s, i]
    n_examples: int
    n_seeds: int
    # The seed variance's one-sided upper confidence bound (SEED_BOUND_LEVEL): from a few
    # seeds the point estimate is far from sure, and the power statements use this bound.
    seed_upper: float = float("nan")

    def conservative(self) -> "VarianceComponents":
        """These components with the seed variance at its upper bound (when known)."""
        if not np.isfinite(self.seed_upper):
            return self
        return dataclasses.replace(self, seed=max(self.seed, self.seed_upper))


def _difference_matrix(system, baseline) -> np.ndarray:
    system, baseline = np.asarray(system, dtype=float), np.asarray(baseline, dtype=float)
    if system.ndim != 2 or system.shape != baseline.shape:
        raise ValueError(
            "system and baseline scores must both be shaped (seeds, examples); got "
            f"{system.shape} and {baseline.shape}"
        )
    seeds, examples = system.shape
    if seeds < 2 or examples < 2:
        raise ValueError(
            f"the seed-to-seed variance needs at least 2 paired seeds and 2 examples; got "
            f"{seeds} seed(s) and {examples} example(s)"
        )
    return system - baseline


def variance_components(system, baseline) -> VarianceComponents:
    """The comparison's variance components from paired (seeds, examples) scores.

    Expected mean squares: E[MS_examples] = noise + S example, E[MS_seeds] = noise + n seed,
    E[MS_residual] = noise; the moment estimates are floored at 0.
    """
    differences = _difference_matrix(system, baseline)
    seeds, examples = differences.shape
    ms_example, ms_seed, ms_residual = (float(m) for m in mean_squares(differences))
    # E[MS_seeds] <= (S - 1) MS_seeds / chi2_{S-1}(1 - level) with probability level.
    seeds_bound = ms_seed * (seeds - 1) / stats.chi2.ppf(1 - SEED_BOUND_LEVEL, seeds - 1)
    return VarianceComponents(
        mean_difference=float(differences.mean()),
        example=max(0.0, (ms_example - ms_residual) / seeds),
        seed=max(0.0, (ms_seed - ms_residual) / examples),
        noise=ms_residual,
        n_examples=examples,
        n_seeds=seeds,
        seed_upper=max(0.0, (seeds_bound - ms_residual) / examples),
    )


@functools.cache
def _quadrature() -> tuple[np.ndarray, np.ndarray]:
    """The Gauss-Hermite nodes and weights of :func:`ttest_power`, computed once: a report's
    power table calls it thousands of times, and each computation costs milliseconds."""
    return np.polynomial.hermite_e.hermegauss(_QUADRATURE_NODES)


def ttest_power(
    difference: float, components: VarianceComponents, seeds: int, alpha: float = DEFAULT_ALPHA
) -> float:
    """Probability that the sweep's two-sided paired t-test over seed-averaged examples
    rejects at level ``alpha`` when the true mean difference is ``difference`` (score units)
    and each configuration runs ``seeds`` seeds (see the module notes)."""
    n = components.n_examples
    within = max(components.example + components.noise / seeds, 1e-12)
    # scipy.special's t and noncentral t functions, which scipy.stats' t and nct call: the
    # same values without the distribution objects' per-call checks (a report's power table
    # makes thousands of calls).
    critical = special.stdtrit(n - 1, 1 - alpha / 2)
    nodes, weights = _quadrature()
    shifts = difference + nodes * np.sqrt(components.seed / seeds)
    ncp = np.sqrt(n) * shifts / np.sqrt(within)
    reject = (1.0 - special.nctdtr(n - 1, ncp, critical)) + special.nctdtr(n - 1, ncp, -critical)
    # scipy 1.17's nct gives NaN at some large noncentralities (8.5 at 999 df); there the
    # normal approximation is within 1e-6 of 0 or 1.
    normal = special.ndtr(ncp - critical) + special.ndtr(-critical - ncp)
    reject = np.where(np.isnan(reject), normal, reject)
    return float(np.clip(weights @ reject / np.sqrt(2 * np.pi), 0.0, 1.0))


def permutation_power(
    difference: float, components: VarianceComponents, seeds: int, alpha: float = DEFAULT_ALPHA
) -> float:
    """Probability that the sweep's two-sided permutation test on the S x n units pooled over
    seeds rejects at level ``alpha`` (its normal approximation, see the module notes) when the
    true difference is ``difference`` and each configuration runs ``seeds`` seeds."""
    n = components.n_examples
    units = n * seeds
    # The sign flips' variance of the mean: the units' mean square (about them, not their mean).
    mean_square = difference**2 + components.example + components.seed + components.noise
    critical = stats.norm.ppf(1 - alpha / 2) * np.sqrt(mean_square / units)
    spread = np.sqrt(components.example / n + components.seed / seeds + components.noise / units)
    spread = max(float(spread), 1e-12)
    return float(
        stats.norm.sf((critical - difference) / spread)
        + stats.norm.cdf((-critical - difference) / spread)
    )


def crossed_power(
    difference: float, components: VarianceComponents, seeds: int, alpha: float = DEFAULT_ALPHA
) -> float:
    """Probability that the seed-aware test (:func:`analysis.stats.crossed_test`) rejects at
    level ``alpha`` when the true difference is ``difference`` and each configuration runs
    ``seeds`` seeds: the two-sided tail of the noncentral t with the test's degrees of
    freedom at the expected mean squares and noncentrality difference / sd(mean)."""
    n = components.n_examples
    noise = components.noise
    expected = (noise + seeds * components.example, noise + n * components.seed, noise)
    variance = components.example / n + components.seed / seeds + noise / (n * seeds)
    df = float(crossed_df(*expected, seeds, n))
    critical = special.stdtrit(df, 1 - alpha / 2)
    ncp = difference / np.sqrt(max(variance, 1e-24))
    reject = (1.0 - special.nctdtr(df, ncp, critical)) + special.nctdtr(df, ncp, -critical)
    if np.isnan(reject):  # scipy's nct fails at some large noncentralities (ttest_power)
        reject = special.ndtr(ncp - critical) + special.ndtr(-critical - ncp)
    return float(np.clip(reject, 0.0, 1.0))


# The rejection probability of each of the sweep's tests (analysis.stats.SIGNIFICANCE_TESTS);
# the bootstrap t-test is taken at the t-test's normal-theory approximation.
_POWER_FUNCTIONS = {
    "crossed": crossed_power,
    "ttest": ttest_power,
    "bootstrap": ttest_power,
    "permutation": permutation_power,
}


def _power_function(test: str):
    if test not in _POWER_FUNCTIONS:
        raise ValueError(f"significance_test={test!r} is not one of {', '.join(_POWER_FUNCTIONS)}")
    return _POWER_FUNCTIONS[test]


def rejection_probability(
    test: str,
    difference: float,
    components: VarianceComponents,
    seeds: int,
    alpha: float = DEFAULT_ALPHA,
) -> float:
    """The power of the sweep's test named ``test`` (:func:`ttest_power` or
    :func:`permutation_power`)."""
    return _power_function(test)(difference, components, seeds, alpha)


def minimum_detectable_difference(
    components: VarianceComponents,
    seeds: int,
    alpha: float = DEFAULT_ALPHA,
    power: float = TARGET_POWER,
    test: str = DEFAULT_TEST,
) -> float:
    """The smallest positive true difference (score units) the sweep's ``test`` detects with
    ``power``; NaN when even a zero difference is rejected that often (seed variance far
    above the examples')."""

    def reject(difference: float) -> float:
        return rejection_probability(test, difference, components, seeds, alpha)

    if reject(0.0) >= power:
        return float("nan")
    high = 1e-3
    while reject(high) < power:
        high *= 2
    return float(optimize.brentq(lambda d: reject(d) - power, 0.0, high, xtol=1e-7))


def seeds_needed(
    difference: float,
    components: VarianceComponents,
    alpha: float = DEFAULT_ALPHA,
    power: float = TARGET_POWER,
    max_seeds: int = MAX_SEEDS,
    test: str = DEFAULT_TEST,
) -> int | None:
    """The fewest seeds per configuration with which the sweep's ``test`` detects a true
    ``difference`` (score units) with ``power``; None when more than ``max_seeds`` would be
    needed."""
    if rejection_probability(test, difference, components, max_seeds, alpha) < power:
        return None
    low, high = 0, max_seeds  # power grows with the seeds: bisect on (low, high]
    while high - low > 1:
        middle = (low + high) // 2
        if rejection_probability(test, difference, components, middle, alpha) >= power:
            high = middle
        else:
            low = middle
    return high


@dataclass(frozen=True)
class _Question:
    """What a power table asks: the test, the level, the target difference (score units) and
    the seeds the statement is for (None: the runs' own)."""

    test: str = DEFAULT_TEST
    alpha: float = DEFAULT_ALPHA
    target: float | None = None
    seeds: int | None = None


def _compared_scores(scores, system_ids, baseline_ids, split, lang, test):
    """The (seeds, examples) scores of both configurations whose paired differences the test
    averages: for the permutation test on per-example counts with a metric of
    COUNT_STATISTICS (NER's entity F1, as analysis.select.compare_configs tests it), each
    unit's first-order contribution to the pooled metric; else the per-example scores."""

    tested = tested_counts(scores, system_ids, baseline_ids, split, lang, test)
    if tested:
        (system, baseline), name = tested
        contributions = LINEARISATIONS.get(COUNT_STATISTICS[name])
        if contributions is None:
            raise AnalysisError(
                f"the power of the {test} test on pooled {name!r} is not "
                f"modelled (linearised: {', '.join(f.__name__ for f in LINEARISATIONS)})"
            )
        return contributions(system), contributions(baseline)
    return scores.scores(system_ids, split, lang), scores.scores(baseline_ids, split, lang)


def _power_figures(components: VarianceComponents, seeds: int, question: _Question) -> dict:
    """A power table row's figures; the rate, MDD and seeds needed assume the seed variance
    at its upper bound (:meth:`VarianceComponents.conservative`)."""
    bound = components.conservative()
    figures = {
        "n_seeds": seeds,
        "n_examples": components.n_examples,
        "mean_difference": components.mean_difference,
        "seed_std": float(np.sqrt(components.seed)),
        "seed_std_upper": float(np.sqrt(bound.seed)),
        "example_std": float(np.sqrt(components.example + components.noise)),
        "type1_rate": rejection_probability(question.test, 0.0, bound, seeds, question.alpha),
        "mdd": minimum_detectable_difference(bound, seeds, question.alpha, test=question.test),
    }
    if question.target is not None:
        figures["seeds_for_target"] = seeds_needed(
            question.target, bound, question.alpha, test=question.test
        )
    return figures


def _comparison_rows(scores, trials, config_key, baseline_key, targets, question: _Question):
    """One row per (split, lang) in ``targets`` where both configurations logged scores."""

    try:
        system_ids, baseline_ids, run_seeds = paired_run_ids(trials, config_key, baseline_key)
    except AnalysisError as error:
        return [{"split": s, "lang": lang, "n_seeds": 0, "note": str(error)} for s, lang in targets]
    seeds = question.seeds or len(run_seeds)
    rows = []
    for split, lang in targets:
        try:
            components = variance_components(
                *_compared_scores(scores, system_ids, baseline_ids, split, lang, question.test)
            )
        except (AnalysisError, ValueError) as error:
            rows.append({"split": split, "lang": lang, "n_seeds": seeds, "note": str(error)})
            continue
        row = {"split": split, "lang": lang, **_power_figures(components, seeds, question)}
        row["note"] = ""
        rows.append(row)
    return rows


def power_table(
    scores,
    trials: pd.DataFrame,
    baseline_key: str,
    selection_metric: str,
    split: str = "test",
    alpha: float = DEFAULT_ALPHA,
    target_difference: float | None = None,
    seeds: int | None = None,
    test: str = DEFAULT_TEST,
) -> pd.DataFrame:
    """Per configuration other than the baseline, on the selection metric's language and split
    and on every language of ``split``: the seeds (``seeds``, else those run), the run-level
    seed std of the difference, the minimum detectable difference of the sweep's ``test``
    (80% power at ``alpha``), the test's actual false-positive rate under that seed variance,
    and with ``target_difference`` (a fraction, 0.005 for half a point) the seeds it would
    need. Differences are in score units (for NER's pooled entity F1 under the permutation
    test, in F1). ``scores``: a :class:`analysis.example_scores.PerExampleScores`."""
    from xlt_schema import parse_metric_key

    key = parse_metric_key(selection_metric)
    targets = [key[:2]] if key else []
    targets += [(split, lang) for lang in split_languages(trials, split)]
    _power_function(test)  # an unknown test is refused before any artifact is read
    question = _Question(test, alpha, target_difference, seeds)
    rows = []
    for config_key in sorted(set(trials["config_key"]) - {baseline_key}):
        label = trials.loc[trials["config_key"] == config_key, "config_label"].iloc[0]
        for row in _comparison_rows(scores, trials, config_key, baseline_key, targets, question):
            rows.append({"config_key": config_key, "config_label": label, **row})
    return pd.DataFrame(rows)


def _points(value) -> str:
    return "–" if value is None or not np.isfinite(value) else f"{100 * value:.2f}"


def _seeds_text(value) -> str:
    if value is None or (isinstance(value, float) and not np.isfinite(value)):
        return f"> {MAX_SEEDS}"
    return str(int(value))


# Per test, how its power is modelled (a note after its name) and what its standard error
# leaves out, so that its false-positive rate exceeds alpha.
_TEST_MODELS = {
    "crossed": (
        ", the seed-aware test, to its noncentral t approximation",
        "it counts the run-level seed variance, so the rate is alpha up to the approximation",
    ),
    "ttest": (
        "",
        "the seed-averaged t-test does not see the run-level seed variance, so it exceeds alpha",
    ),
    "bootstrap": (
        ", to its t approximation",
        "the seed-averaged t-test does not see the run-level seed variance, so it exceeds alpha",
    ),
    "permutation": (
        " on units pooled over seeds, to its normal approximation; a pooled metric such as "
        "NER's entity F1 through each sentence's first-order contribution to it",
        "the test counts every seed's run of an example as a unit of its own: it sees neither "
        "the run-level term nor an example's difference repeating over seeds, so it exceeds "
        "alpha",
    ),
}


def power_section(
    table: pd.DataFrame, test: str, alpha: float = DEFAULT_ALPHA, target: float | None = None
) -> list[str]:
    """The report's section on what the sweep could have detected (``table`` from
    :func:`power_table`; ``target`` a difference in score units)."""
    lines = ["## Power and the minimum detectable difference", ""]
    if table.empty:
        return [*lines, "No configuration other than the baseline to compare."]
    target_text = f"{100 * target:g} points" if target is not None else None
    model, blind_spot = _TEST_MODELS[test]
    lines += [
        f"For the sweep's test ({test}{model}) "
        f"at two-sided alpha {alpha}, from the sweep's own paired runs: the smallest true "
        "difference it detects with 80% power with the seeds run (MDD), the run-level "
        "seed-to-seed std of the difference (its estimate and its one-sided "
        f"{SEED_BOUND_LEVEL:.0%} upper bound: a few seeds do not pin it down), and the test's "
        f"false-positive rate ({blind_spot}; docs/statistics.md). The MDD, the rate and the "
        "seeds needed assume the seed std at its upper bound, so they err on the cautious side"
        + (
            f", and the seeds a difference of {target_text} needs for 80% power (> {MAX_SEEDS}: "
            "not within that many; the examples' own variance bounds what seeds can do)."
            if target
            else "."
        )
        + " Differences in points.",
        "",
    ]
    header = [
        "Configuration",
        "Split/lang",
        "Seeds",
        "Δ",
        "Seed std of Δ (upper bound)",
        "MDD",
        "False-positive rate",
    ]
    header += [f"Seeds for {target_text}"] if target else []
    rows = []
    for row in table.itertuples(index=False):
        where = f"{row.split}/{row.lang}"
        if row.note:
            rows.append(
                [row.config_label, where, str(row.n_seeds), row.note, *[""] * (len(header) - 4)]
            )
            continue
        cells = [
            row.config_label,
            where,
            str(row.n_seeds),
            f"{100 * row.mean_difference:+.2f}",
            f"{_points(row.seed_std)} (≤ {_points(row.seed_std_upper)})",
            _points(row.mdd),
            f"{row.type1_rate:.1%}",
        ]
        if target:
            cells.append(_seeds_text(row.seeds_for_target))
        rows.append(cells)
    return [*lines, *markdown_table(header, rows)]


def power_report(
    scores,
    trials: pd.DataFrame,
    baseline_key: str,
    selection_metric: str,
    test: str,
    target_points: float | None = None,
    alpha: float = DEFAULT_ALPHA,
) -> list[str]:
    """The report's power section for a sweep (``target_points``: e.g. 0.5 for half a point)."""
    if target_points is not None and not target_points > 0:
        raise ValueError(f"--target-difference must be a number of points > 0; got {target_points}")
    target = target_points / 100 if target_points is not None else None
    table = power_table(
        scores,
        trials,
        baseline_key,
        selection_metric,
        alpha=alpha,
        target_difference=target,
        test=test,
    )
    return power_section(table, test, alpha, target)


def pilot_lines(
    tracking_uri: str, pilot: str, seeds: int, target_points: float | None = None
) -> list[str]:
    """A dry run's power statement for a sweep of ``seeds`` seeds, from the newest finished
    sweep of experiment ``pilot`` on ``tracking_uri`` (read only, by the reading layer)."""
    # The reading layer, imported when a dry run asks: this module loads without MLflow.
    from analysis.sweep_records import read_pilot_sweep

    return pilot_power_lines(read_pilot_sweep(tracking_uri, pilot), seeds, target_points)


def pilot_power_lines(
    pilot: PilotSweep, seeds: int, target_points: float | None = None
) -> list[str]:
    """:func:`pilot_lines` on the pilot sweep as the reading layer read it."""

    trials, test = pilot.trials, DEFAULT_TEST
    metric = pilot.parent.params.get("selection_metric") or default_selection_metric(trials)
    target = target_points / 100 if target_points is not None else None
    header = (
        f"Power for {seeds} seeds, from pilot sweep {pilot.experiment} (parent run "
        f"{pilot.parent.run_id}, {trials['seed'].nunique()} seeds run there):"
    )
    table = power_table(
        pilot.scores,
        trials,
        baseline_config_key(trials),
        metric,
        alpha=SIGNIFICANCE_LEVEL,
        target_difference=target,
        seeds=seeds,
        test=test,
    )
    return [header, *power_section(table, test, SIGNIFICANCE_LEVEL, target)[2:]]
