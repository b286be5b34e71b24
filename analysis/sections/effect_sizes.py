"""The report's effect sizes of the selection against the baseline on test
(:mod:`analysis.effect_sizes`)."""

from collections.abc import Mapping

import pandas as pd

from analysis.effect_sizes import effect_size_table
from analysis.example_scores import PerExampleScores
from analysis.frames import AnalysisError
from analysis.section import ReportOptions, Section, SectionInput
from analysis.sections.selection import is_baseline_selection
from analysis.select import TEST_SPLIT, Selection, compare_average
from analysis.verdict_runs import VerdictRuns


def effect_sizes(given: SectionInput) -> dict:
    earlier = given.earlier
    table = _effect_sizes(
        given.records.scores,
        earlier["verdict_runs"],
        (earlier["selection"], earlier["baseline_key"]),
        earlier["comparisons"],
        earlier["test"],
        given.options,
    )
    return {"effect_sizes": table}


SECTION = Section("effect_sizes", effect_sizes, ("effect_sizes",))


def _effect_sizes(
    scores: PerExampleScores,
    runs: VerdictRuns,
    roles: tuple[Selection, str],
    comparisons: Mapping[str, pd.DataFrame],
    test: str,
    options: ReportOptions,
) -> pd.DataFrame:
    """The selection's effect sizes against the baseline on test (analysis.effect_sizes),
    per language and on the mean over the languages (with ``test``, on the verdict's runs)."""
    selection, baseline_key = roles
    evaluation = comparisons.get(TEST_SPLIT)
    if evaluation is None or is_baseline_selection(selection, options.baseline_method):
        return pd.DataFrame()
    keys = (selection.config_key, baseline_key)
    try:
        average = compare_average(scores, runs.trials, *keys, test=test)
    except (AnalysisError, ValueError):
        average = None  # the verdict says why the mean was not tested
    return effect_size_table(evaluation, runs.trials, keys, TEST_SPLIT, average)
