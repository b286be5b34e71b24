"""The verdict in words: does the selected configuration beat the baseline, and where?

"Selected" only means "best of the candidates on dev"; whether that is better than the
baseline is a separate question, answered on held-out data: the outcome (gain, loss, no
significant difference) is the test split's mean over its languages
(:func:`analysis.select.compare_average`), then per language with the correction
(:func:`analysis.select.compare_to_baseline`); the comparison on the selection's own split
stays as its evidence, marked optimistic. A comparison on one seed gets no verdict
(``NO_VERDICT``) whatever its test: nothing measures the seed-to-seed variance. Pure
functions on their frames.
"""

import math
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from analysis.select import MIN_VERDICT_SEEDS, ONE_SEED, SIGNIFICANCE_LEVEL
from analysis.stats import CONFIDENCE_LEVEL, SEED_AVERAGED_TESTS
from xlt_schema import SELECTION_DEV_PARAM, SELECTION_ON_TEST

# With 2 seeds the crossed test's seed variance rests on one degree of freedom.
TWO_SEEDS_NOTE = (
    "With 2 seeds the seed-to-seed variance rests on one degree of freedom: the test keeps "
    "its 5% level (0.7-5.4% in docs/statistics.md's calibration), but its interval is wide, "
    "only a large difference can reach significance, and 'no significant difference' is weak "
    "evidence that there is none; a claim needs at least 3 seeds, better 5."
)

GAIN, LOSS, NO_DIFFERENCE = "gain", "loss", "no significant difference"
NO_VERDICT = "no verdict"  # fewer than MIN_VERDICT_SEEDS seeds: neither gain, loss nor none
NO_EXAMPLE_DIFFERENCE = "no difference on any example"
# What marks every number of a sweep whose trials kept their checkpoints by test.
SELECTED_ON_TEST = "selected on test, as the released scripts do: not a claim"


def outcome(mean_difference: float, significant: bool, n_seeds: int = MIN_VERDICT_SEEDS) -> str:
    """A difference to the baseline on ``n_seeds`` paired seeds as a significant gain, a
    significant loss, neither, or no verdict (one seed)."""
    if n_seeds < MIN_VERDICT_SEEDS:
        return NO_VERDICT
    if not significant or mean_difference == 0:
        return NO_DIFFERENCE
    return GAIN if mean_difference > 0 else LOSS


def outcomes(comparison: pd.DataFrame) -> list[str]:
    """:func:`outcome` of every row of a comparison frame (``mean_difference``,
    ``significant``, ``n_seeds``)."""
    return [
        outcome(difference, bool(significant), seeds)
        for difference, significant, seeds in zip(
            comparison["mean_difference"], comparison["significant"], comparison["n_seeds"]
        )
    ]


def _points(fraction: float) -> str:
    return f"{100 * fraction:+.1f}"


def identical(difference: float, low: float, high: float) -> bool:
    """Whether a test's interval says the two sides scored the same on every example: a
    difference of 0 with nothing around it (an interval of width 0)."""
    return difference == low == high == 0


def _interval(difference: float, low: float, high: float) -> str:
    """The interval in words: its bounds in points, none (no test ran), or no difference on
    any example (identical systems: not an interval of width 0)."""
    if math.isnan(low) or math.isnan(high):
        return "no interval"
    if identical(difference, low, high):
        return NO_EXAMPLE_DIFFERENCE
    return f"{100 * CONFIDENCE_LEVEL:.0f}% CI [{_points(low)}, {_points(high)}]"


def _p(p_value: float) -> str:
    return "no p-value" if math.isnan(p_value) else f"p = {p_value:.3g}"


@dataclass(frozen=True)
class Verdict:
    """The selection against the baseline on the selection metric, and per language on an
    evaluation split."""

    outcome: str  # GAIN, LOSS, NO_DIFFERENCE or NO_VERDICT (the parent's xlt.verdict tag)
    headline: str
    languages: str  # "" without an evaluation split


VERBS = {
    GAIN: "beats the baseline",
    LOSS: "is significantly worse than the baseline",
    NO_DIFFERENCE: "does not beat the baseline (no significant difference)",
    NO_VERDICT: f"gets no verdict against the baseline ({ONE_SEED})",
}


def selection_headline(label: str, metric: str, row) -> tuple[str, str]:
    """The outcome and the sentence for the selection metric; ``row`` is the selection
    language's row of the dev comparison (system_mean, baseline_mean, mean_difference,
    ci_low, ci_high, p_value, significant, n_seeds)."""
    result = outcome(row.mean_difference, bool(row.significant), row.n_seeds)
    scores = (
        f"{100 * row.system_mean:.1f} vs {100 * row.baseline_mean:.1f} %, "
        f"{_points(row.mean_difference)} points, "
        f"{_interval(row.mean_difference, row.ci_low, row.ci_high)}, {_p(row.p_value)}"
    )
    verb = VERBS[result]
    # Selected on this very split: the interval does not account for the choice.
    return result, (
        f"The selected configuration {label} {verb} on {metric}: {scores} "
        "(the split it was selected on, so optimistic: the selection's evidence, not the "
        "verdict)."
    )


def seeds_caveat(test: str, n_seeds: int) -> str:
    """What the verdict's test cannot see (a seed-averaged one) or conclude (2 seeds)."""
    if test in SEED_AVERAGED_TESTS:
        return (
            f"The {test} test {SEED_AVERAGED_TESTS[test]}; where seeds shift whole runs its "
            "p-values are too small (docs/statistics.md)."
        )
    return TWO_SEEDS_NOTE if n_seeds == 2 else ""


def held_out_headline(label: str, split: str, row: Mapping) -> tuple[str, str]:
    """The outcome and the sentence on held-out data: ``row`` is
    :func:`analysis.select.compare_average`'s mean over ``split``'s languages (its ``test``
    the one that ran; on one seed no verdict, :func:`one_seed_headline`; its ``units``
    what that test ran on: items averaged over their translations, or examples)."""
    if row["n_seeds"] < MIN_VERDICT_SEEDS:
        return NO_VERDICT, one_seed_headline(label, split, row)
    difference = row["mean_difference"]
    result = outcome(difference, row["p_value"] < SIGNIFICANCE_LEVEL)
    verb = VERBS[result]
    interval = _interval(difference, row["ci_low"], row["ci_high"])
    sentence = (
        f"On held-out {split} (mean over its {len(row['languages'])} languages), the selected "
        f"configuration {label} {verb}: {100 * row['system_mean']:.1f} vs "
        f"{100 * row['reference_mean']:.1f} %, {_points(difference)} points, {interval}, "
        f"p = {row['p_value']:.3g} ({row['test']} test, {row['n_seeds']} "
        f"seed{'s' if row['n_seeds'] != 1 else ''})."
    )
    # Items or examples: whether translations of one item set counted once (parallel_items).
    units = f"The test ran on {row['units']}." if row.get("units") else ""
    caveat = seeds_caveat(row["test"], row["n_seeds"])
    left_out = _left_out(row)
    return result, " ".join(part for part in (sentence, left_out, units, caveat) if part)


def _left_out(row: Mapping) -> str:
    """The sentence naming the seeds the comparison's pairing left out, if any."""
    return f"{row['seeds_left_out']}." if row.get("seeds_left_out") else ""


def one_seed_headline(label: str, split: str, row: Mapping) -> str:
    """The sentence of :func:`held_out_headline` on one seed: no verdict, the observed
    difference, and what a seed-averaged test asked for does say (whether these two trained
    runs differ on examples like these, not whether their configurations do)."""
    sentence = (
        f"On held-out {split} (mean over its {len(row['languages'])} languages), no verdict: "
        f"{ONE_SEED}. The selected configuration {label} scores "
        f"{100 * row['system_mean']:.1f} vs {100 * row['reference_mean']:.1f} % "
        f"({_points(row['mean_difference'])} points) on the one seed both ran"
    )
    if row["test"] in SEED_AVERAGED_TESTS:
        interval = _interval(row["mean_difference"], row["ci_low"], row["ci_high"])
        sentence += (
            f"; the {row['test']} test asked for gives {interval}, {_p(row['p_value'])}, which "
            "says whether these two trained runs differ, not whether their configurations do"
        )
    sentence += ". A verdict needs 2 seeds or more (a claim 3, better 5)."
    return " ".join(part for part in (sentence, _left_out(row)) if part)


def no_held_out_headline(split: str, why: str) -> tuple[str, str]:
    """The outcome when nothing held out was tested: no claim either way."""
    return NO_DIFFERENCE, (
        f"Nothing held out decides the verdict ({split}: {why}), so it claims no difference."
    )


def with_selection_evidence(headline: tuple[str, str], selection_sentence: str):
    """The held-out outcome and sentence, followed by the selection split's sentence."""
    return headline[0], f"{headline[1]} Selection evidence: {selection_sentence}"


def languages_sentence(comparison: pd.DataFrame, split: str) -> str:
    """Which languages of ``split`` are significant gains, which significant losses, which
    neither, and which get no verdict (one seed), with their differences in points."""
    groups: dict[str, list[str]] = {GAIN: [], LOSS: [], NO_DIFFERENCE: [], NO_VERDICT: []}
    for row, result in zip(comparison.itertuples(index=False), outcomes(comparison)):
        groups[result].append(f"{row.lang} ({_points(row.mean_difference)})")
    parts = []
    if len(groups[NO_VERDICT]) < len(comparison):
        parts += [
            f"significant gains: {', '.join(groups[GAIN]) or 'none'}",
            f"significant losses: {', '.join(groups[LOSS]) or 'none'}",
        ]
    if groups[NO_DIFFERENCE]:
        parts.append(f"no significant difference: {', '.join(groups[NO_DIFFERENCE])}")
    if groups[NO_VERDICT]:
        parts.append(f"no verdict ({ONE_SEED}): {', '.join(groups[NO_VERDICT])}")
    return f"On {split}, against the baseline (points): {'; '.join(parts)}."


def untested_headline(label: str, metric: str, mean: float, baseline_mean: float, why: str):
    """The outcome and sentence when the selection metric could not be tested (``why``):
    the means only, and no claim either way."""
    return NO_DIFFERENCE, (
        f"The selected configuration {label} scores {100 * mean:.1f} % on {metric} against "
        f"the baseline's {100 * baseline_mean:.1f} % ({_points(mean - baseline_mean)} points); "
        f"the difference is untested ({why}), so no claim that it beats the baseline."
    )


BASELINE_ONLY = (NO_DIFFERENCE, "Only the baseline finished: nothing was compared with it.")


def selected_on_test(trials: pd.DataFrame) -> bool:
    """Whether any trial kept its checkpoint by test (`selection_dev=test`, the released EAR
    scripts' rule): its test scores are then no held-out evidence."""
    column = trials.get(SELECTION_DEV_PARAM)
    return column is not None and bool((column == SELECTION_ON_TEST).any())


def claimless(verdict: Verdict, trials: pd.DataFrame) -> Verdict:
    """``verdict``, or for a sweep whose trials were selected on test a verdict that claims
    nothing (no significant difference) and says why."""
    if not selected_on_test(trials):
        return verdict
    return Verdict(
        NO_DIFFERENCE,
        f"No claim: every number of this sweep is {SELECTED_ON_TEST}. Its trials kept the "
        "checkpoint with the best accuracy pooled over the test sets (selection_dev=test), "
        "so test is no held-out data and no difference on it is evidence of a gain or a loss.",
        "",
    )


def make_verdict(headline: tuple[str, str], evaluation: pd.DataFrame | None, split: str) -> Verdict:
    """The whole verdict: ``headline`` (outcome, sentence) from :func:`selection_headline`,
    :func:`untested_headline` or ``BASELINE_ONLY``; ``evaluation`` the comparison on
    ``split`` (test), or None when the sweep has none."""
    languages = (
        languages_sentence(evaluation, split)
        if evaluation is not None and not evaluation.empty
        else ""
    )
    return Verdict(outcome=headline[0], headline=headline[1], languages=languages)
