"""The report's paired tests against the baseline: per evaluation split the selection vs the
baseline on the verdict's runs (:mod:`analysis.verdict_runs`), and every configuration's
significance marks."""

import pandas as pd

from analysis.frames import evaluation_splits
from analysis.section import Section, SectionInput
from analysis.select import Selection, compare_to_baseline, significance_marks
from analysis.sweep_data import SweepRecords
from analysis.verdict_runs import (
    CONFIRM_SEEDS_PARAM,
    VerdictRuns,
    adjusted_for_selection,
    verdict_runs,
)


def comparisons(given: SectionInput) -> dict:
    earlier = given.earlier
    tested = {"test": earlier["test"], "correction": earlier["correction"]}
    found, marks, runs = _tests_against_baseline(
        given.records,
        earlier["selection"],
        earlier["baseline_key"],
        earlier["reference_key"],
        earlier["baseline_method"],
        tested,
    )
    return {"comparisons": found, "marks": marks, "verdict_runs": runs}


SECTION = Section("comparisons", comparisons, ("comparisons", "marks", "verdict_runs"))


def _tests_against_baseline(
    records: SweepRecords,
    selection: Selection,
    baseline_key: str,
    reference_key: str | None,
    baseline_method: str,
    tested: dict,
) -> tuple[dict[str, pd.DataFrame], pd.DataFrame, VerdictRuns]:
    """Per evaluation split the selection vs the baseline on the verdict's runs (adjusted for
    the selection when they chose it), every configuration's significance marks
    (``tested``: the test and the correction), and the verdict's runs."""
    trials, scores = records.trials, records.scores
    runs = verdict_runs(
        trials,
        records.confirmation,
        (selection.config_key, baseline_key),
        records.parent.params.get(CONFIRM_SEEDS_PARAM),
        baseline_method,
    )
    splits = evaluation_splits(trials)
    comparisons = {
        split: adjusted_for_selection(
            compare_to_baseline(
                scores, runs.trials, selection.config_key, split, baseline_method, **tested
            ),
            runs.candidates,
        )
        for split in splits
    }
    marks = significance_marks(scores, trials, baseline_key, reference_key, splits, **tested)
    return comparisons, marks, runs
