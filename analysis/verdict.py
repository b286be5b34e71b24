"""The verdict in words: does the selected configuration beat the baseline, and where?

"Selected" only means "best of the candidates on dev"; whether that is better than the
baseline is a separate question, answered here from the paired comparisons of
:func:`analysis.select.compare_to_baseline` (pure functions on their frames).
"""

from dataclasses import dataclass

import pandas as pd

from analysis.stats import CONFIDENCE_LEVEL

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


def _interval(row) -> str:
    return f"{100 * CONFIDENCE_LEVEL:.0f}% CI [{_points(row.ci_low)}, {_points(row.ci_high)}]"


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
        f"{_points(row.mean_difference)} points, {_interval(row)}, p = {row.p_value:.3g}"
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
        "(the split it was selected on, so optimistic; test below is the unbiased estimate)."
    )


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
