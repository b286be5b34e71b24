"""The report's settings and its selection: the significance test, the baseline, the
reference for ``**`` marks and the configuration selected on dev (:mod:`analysis.select`; a
strategy that names its winner on the parent run, WINNER_TAG, has it selected), with
the seed means every score table reads."""

import pandas as pd

from analysis.frames import AnalysisError, tidy_metrics
from analysis.section import Section, SectionInput
from analysis.select import (
    Selection,
    aggregate_over_seeds,
    baseline_config_key,
    default_selection_metric,
    resolve_config,
    select_best,
)
from analysis.stats import DEFAULT_TEST, SIGNIFICANCE_TESTS
from analysis.sweep_parent import SweepParent
from xlt_schema import NO_ADAPTATION, WINNER_TAG


def selection(given: SectionInput) -> dict:
    """The test, the selection on dev, the baseline and the reference (by key and label)."""
    parent, trials, options = given.records.parent, given.records.trials, given.options
    test = significance_test_of(parent, options.significance_test)
    # A sweep without English dev queries (retrieval) names its own in the parent's params.
    metric = options.selection_metric or parent.params.get("selection_metric")
    baseline_key = baseline_config_key(trials, options.baseline_method)
    # A strategy that named its winner (a race) is reported with it: the rule below would
    # weigh its dropped configurations' fewer seeds as it weighs the winner's.
    named = parent.tags.get(WINNER_TAG)
    candidates = trials[trials["config_key"].isin([named, baseline_key])] if named else trials
    if named and named not in set(candidates["config_key"]):
        raise AnalysisError(
            f"the parent run {parent.run_id} names {named} as its winner "
            f"({WINNER_TAG}), but no finished trial has that config_key"
        )
    selected = select_best(
        candidates, metric or default_selection_metric(trials), options.baseline_method
    )
    reference_key = resolve_config(trials, options.reference) if options.reference else None
    return {
        "test": test,
        "correction": options.correction,
        "baseline_method": options.baseline_method,
        "selection": selected,
        "baseline_key": baseline_key,
        "reference_key": reference_key,
        "reference_label": config_label(trials, reference_key) if reference_key else None,
        "seed_means": aggregate_over_seeds(tidy_metrics(trials)),
    }


SECTION = Section(
    "selection",
    selection,
    (
        "test",
        "correction",
        "baseline_method",
        "selection",
        "baseline_key",
        "reference_key",
        "reference_label",
        "seed_means",
    ),
)


def significance_test_of(parent: SweepParent, override: str | None) -> str:
    """``override``, else the seed-aware default: the parent run's ``significance_test``
    param names the paper's seed-averaged test, which stays selectable by name but no
    longer decides (docs/statistics.md)."""
    test = override or DEFAULT_TEST
    if test not in SIGNIFICANCE_TESTS:
        raise ValueError(
            f"significance_test={test!r} (parent run {parent.run_id}) is not "
            f"one of {', '.join(SIGNIFICANCE_TESTS)}"
        )
    return test


def config_label(trials: pd.DataFrame, config_key: str) -> str:
    return trials.loc[trials["config_key"] == config_key, "config_label"].iloc[0]


def is_baseline_selection(selection: Selection, baseline_method: str) -> bool:
    return selection.method == baseline_method and selection.adaptation == NO_ADAPTATION
