"""The verdict in words: does the selected configuration beat the baseline, and where?

"Selected" only means "best of the candidates on dev"; whether that is better than the
baseline is a separate question, answered on held-out data: the outcome (gain, loss, no
significant difference) is the test split's mean over its languages
(:func:`analysis.select.compare_average`), then per language with the correction
(:func:`analysis.select.compare_to_baseline`); the comparison on the selection's own split
stays as its evidence, marked optimistic. Pure functions on their frames.
"""

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from analysis.select import SIGNIFICANCE_LEVEL
from analysis.stats import CONFIDENCE_LEVEL, SEED_AVERAGED_TESTS

# With 2 seeds the crossed test's seed variance rests on one degree of freedom.
TWO_SEEDS_NOTE = (
    "With 2 seeds the seed-to-seed variance rests on one degree of freedom: the test keeps "
    "its 5% level (0.7-5.4% in docs/statistics.md's calibration), but its interval is wide, "
    "only a large difference can reach significance, and 'no significant difference' is weak "
    "evidence that there is none; a claim needs at least 3 seeds, better 5."
)

GAIN, LOSS, NO_DIFFERENCE = "gain", "loss", "no significant difference"


def outcome(mean_difference: float, significant: bool) -> str:
    """A difference to the baseline as a significant gain, a significant loss, or neither."""
    if not significant or mean_difference == 0:
        return NO_DIFFERENCE
    return GAIN if mean_difference > 0 else LOSS


def outcomes(comparison: pd.DataFrame) -> list[str]:
    """:func:`outcome` of every row of a comparison frame (``mean_difference``,
    ``significant``)."""
    return [
        outcome(difference, bool(significant))
        for difference, significant in zip(comparison["mean_difference"], comparison["significant"])
    ]


def _points(fraction: float) -> str:
    return f"{100 * fraction:+.1f}"


def _interval(low: float, high: float) -> str:
    return f"{100 * CONFIDENCE_LEVEL:.0f}% CI [{_points(low)}, {_points(high)}]"


@dataclass(frozen=True)
class Verdict:
    """The selection against the baseline on the selection metric, and per language on an
    evaluation split."""

    outcome: str  # GAIN, LOSS or NO_DIFFERENCE on the selection metric
    headline: str
    languages: str  # "" without an evaluation split


def selection_headline(label: str, metric: str, row) -> tuple[str, str]:
    """The outcome and the sentence for the selection metric; ``row`` is the selection
    language's row of the dev comparison (system_mean, baseline_mean, mean_difference,
    ci_low, ci_high, p_value, significant)."""
    result = outcome(row.mean_difference, bool(row.significant))
    scores = (
        f"{100 * row.system_mean:.1f} vs {100 * row.baseline_mean:.1f} %, "
        f"{_points(row.mean_difference)} points, {_interval(row.ci_low, row.ci_high)}, "
        f"p = {row.p_value:.3g}"
    )
    if result == GAIN:
        verb = "beats the baseline"
    elif result == LOSS:
        verb = "is significantly worse than the baseline"
    else:
        verb = "does not beat the baseline (no significant difference)"
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
    the one that ran: a one-seed sweep's falls back to a seed-averaged one)."""
    difference = row["mean_difference"]
    result = outcome(difference, row["p_value"] < SIGNIFICANCE_LEVEL)
    verb = {
        GAIN: "beats the baseline",
        LOSS: "is significantly worse than the baseline",
        NO_DIFFERENCE: "does not beat the baseline (no significant difference)",
    }[result]
    interval = _interval(row["ci_low"], row["ci_high"])
    sentence = (
        f"On held-out {split} (mean over its {len(row['languages'])} languages), the selected "
        f"configuration {label} {verb}: {100 * row['system_mean']:.1f} vs "
        f"{100 * row['reference_mean']:.1f} %, {_points(difference)} points, {interval}, "
        f"p = {row['p_value']:.3g} ({row['test']} test, {row['n_seeds']} "
        f"seed{'s' if row['n_seeds'] != 1 else ''})."
    )
    caveat = seeds_caveat(row["test"], row["n_seeds"])
    return result, f"{sentence} {caveat}".strip()


def no_held_out_headline(split: str, why: str) -> tuple[str, str]:
    """The outcome when nothing held out was tested: no claim either way."""
    return NO_DIFFERENCE, (
        f"Nothing held out decides the verdict ({split}: {why}), so it claims no difference."
    )


def with_selection_evidence(headline: tuple[str, str], selection_sentence: str):
    """The held-out outcome and sentence, followed by the selection split's sentence."""
    return headline[0], f"{headline[1]} Selection evidence: {selection_sentence}"


def languages_sentence(comparison: pd.DataFrame, split: str) -> str:
    """Which languages of ``split`` are significant gains, which significant losses, and
    which neither, with their differences in points."""
    groups: dict[str, list[str]] = {GAIN: [], LOSS: [], NO_DIFFERENCE: []}
    for row, result in zip(comparison.itertuples(index=False), outcomes(comparison)):
        groups[result].append(f"{row.lang} ({_points(row.mean_difference)})")
    parts = [
        f"significant gains: {', '.join(groups[GAIN]) or 'none'}",
        f"significant losses: {', '.join(groups[LOSS]) or 'none'}",
    ]
    if groups[NO_DIFFERENCE]:
        parts.append(f"no significant difference: {', '.join(groups[NO_DIFFERENCE])}")
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
