"""Which runs decide the verdict, and what that costs it: the confirmation phase's (the
selected configuration and the baseline on fresh seeds, sweeps/running/confirmation.py),
which took no part in the selection; or, without them, the runs that chose the winner, whose
p-values are then Bonferroni-adjusted over the candidates the selection chose from (seed luck
that won on dev is still in their test scores: docs/statistics.md#selection). Pure functions
on trials frames.
"""

import math
from dataclasses import dataclass

import pandas as pd

from analysis.select import SIGNIFICANCE_LEVEL, is_baseline

# The parent-run param that lists the confirmation phase's seeds ("none": turned off).
CONFIRM_SEEDS_PARAM = "confirm_seeds"


@dataclass(frozen=True)
class VerdictRuns:
    """The runs the verdict is decided on and how its p-values are adjusted for the
    selection (``candidates`` = 1: not at all)."""

    trials: pd.DataFrame
    candidates: int
    note: str  # the sentence the verdict ends with


def _seeds(trials: pd.DataFrame, key: str) -> list[int]:
    return sorted(int(seed) for seed in trials.loc[trials["config_key"] == key, "seed"])


def verdict_runs(
    trials: pd.DataFrame,
    confirmation: pd.DataFrame,
    keys: tuple[str, str],
    planned: str | None,
    baseline_method: str,
) -> VerdictRuns:
    """The verdict's runs for the selected and the baseline's config keys ``keys``:
    ``confirmation``'s when it holds both, else ``trials`` (the selection's) adjusted over
    their candidates. ``planned``: the parent's confirm_seeds param (None: a sweep from
    before the confirmation phase; "none": turned off)."""
    selected, baseline = keys
    if not confirmation.empty and {selected, baseline} <= set(confirmation["config_key"]):
        seeds = _seeds(confirmation, selected)
        return VerdictRuns(
            confirmation,
            1,
            f"Decided on the confirmation phase's {len(seeds)} fresh seed"
            f"{'s' if len(seeds) != 1 else ''} ({', '.join(map(str, seeds))}), which took no "
            "part in the selection.",
        )
    candidates = trials.loc[~is_baseline(trials, baseline_method), "config_key"].nunique()
    if planned is None:
        why = "this sweep has no confirmation phase"
    elif planned == "none":
        why = "confirm_seeds=0 turned the confirmation phase off"
    elif confirmation.empty:
        why = "its confirmation phase has no finished runs"
    else:
        why = "its confirmation phase re-ran another configuration than this report selects"
    if candidates <= 1:
        return VerdictRuns(
            trials,
            1,
            f"Decided on the runs of the sweep ({why}; one candidate, "
            "so nothing was selected among several).",
        )
    return VerdictRuns(
        trials,
        candidates,
        f"Decided on the runs that selected it ({why}): p-values Bonferroni-adjusted over its "
        f"{candidates} candidates (x{candidates}; the intervals are not adjusted).",
    )


def adjusted_for_selection(table: pd.DataFrame, candidates: int) -> pd.DataFrame:
    """A per-language comparison (analysis.select.compare_configs' columns) with its
    corrected p-values multiplied by ``candidates`` (at most 1) and ``significant`` again."""
    if candidates <= 1:
        return table
    table = table.copy()
    table["p_corrected"] = (table["p_corrected"] * candidates).clip(upper=1.0)
    table["significant"] = table["p_corrected"] < SIGNIFICANCE_LEVEL
    return table


def adjusted_average(average: dict, candidates: int) -> dict:
    """:func:`analysis.select.compare_average`'s result with its p-value multiplied by
    ``candidates`` (at most 1; an untested comparison's NaN stays NaN)."""
    p_value = average["p_value"]
    return {
        **average,
        "p_value": p_value if math.isnan(p_value) else min(1.0, p_value * candidates),
    }
