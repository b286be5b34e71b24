"""The report's verdict against the baseline (:mod:`analysis.verdict`): decided on the test
split's mean over its languages, on the verdict's runs, with the selection's dev evidence;
and the baseline's mean selection metric over seeds."""

import pandas as pd

from analysis.example_scores import PerExampleScores
from analysis.frames import AnalysisError
from analysis.section import Section, SectionInput
from analysis.sections.selection import is_baseline_selection
from analysis.select import (
    DEFAULT_BASELINE_METHOD,
    TEST_SPLIT,
    Selection,
    baseline_config_key,
    compare_average,
    compare_to_baseline,
)
from analysis.verdict import (
    BASELINE_ONLY,
    Verdict,
    claimless,
    held_out_headline,
    make_verdict,
    no_held_out_headline,
    selection_headline,
    untested_headline,
    with_selection_evidence,
)
from analysis.verdict_runs import VerdictRuns, adjusted_average
from xlt_schema import parse_metric_key


def verdict(given: SectionInput) -> dict:
    earlier, records = given.earlier, given.records
    found, baseline_mean = sweep_verdict(
        records.scores,
        records.trials,
        earlier["selection"],
        earlier["verdict_runs"],
        earlier["comparisons"].get(TEST_SPLIT),
        given.options.baseline_method,
        test=earlier["test"],
        correction=earlier["correction"],
    )
    return {"verdict": found, "baseline_mean": baseline_mean}


SECTION = Section("verdict", verdict, ("verdict", "baseline_mean"))


def sweep_verdict(
    scores: PerExampleScores,
    trials: pd.DataFrame,
    selection: Selection,
    runs: VerdictRuns,
    evaluation: pd.DataFrame | None,
    baseline_method: str = DEFAULT_BASELINE_METHOD,
    **options,
) -> tuple[Verdict, float]:
    """The verdict against the baseline (on the selection metric, with the paired test of
    :func:`compare_to_baseline` on its split; per language on test from ``evaluation``)
    and the baseline's mean selection metric over seeds."""
    baseline_key = baseline_config_key(trials, baseline_method)
    baseline_mean = float(trials.loc[trials["config_key"] == baseline_key, selection.metric].mean())
    if is_baseline_selection(selection, baseline_method):
        return claimless(make_verdict(BASELINE_ONLY, evaluation, TEST_SPLIT), trials), baseline_mean
    split, lang, name = parse_metric_key(selection.metric)
    try:
        dev = compare_to_baseline(
            scores, trials, selection.config_key, split, baseline_method, **options
        )
        row = next(
            (r for r in dev.itertuples(index=False) if (r.lang, r.metric) == (lang, name)), None
        )
        why = f"its per-example scores are of {', '.join(sorted(map(str, set(dev['metric']))))}"
    except AnalysisError as error:
        row, why = None, str(error)
    if row is not None:
        headline = selection_headline(selection.config_label, selection.metric, row)
    else:
        headline = untested_headline(
            selection.config_label, selection.metric, selection.mean, baseline_mean, why
        )
    held_out = held_out_verdict(scores, runs, selection, baseline_key, options["test"])
    verdict = make_verdict(with_selection_evidence(held_out, headline[1]), evaluation, TEST_SPLIT)
    return claimless(verdict, trials), baseline_mean  # selected on test: no claim at all


def held_out_verdict(scores, runs: VerdictRuns, selection: Selection, baseline_key: str, test: str):
    """The outcome and sentence on the test split's mean over its languages, on the verdict's
    ``runs`` and adjusted for the selection as they say (no claim when there is no test
    split or it cannot be tested)."""
    try:
        average = compare_average(
            scores, runs.trials, selection.config_key, baseline_key, test=test
        )
    except (AnalysisError, ValueError) as error:
        return no_held_out_headline(TEST_SPLIT, str(error))
    average = adjusted_average(average, runs.candidates)
    result, sentence = held_out_headline(selection.config_label, TEST_SPLIT, average)
    return result, f"{sentence} {runs.note}"
