"""The analysis of a sweep: its records (:mod:`analysis.sweep_records`) in, one frozen
:class:`SweepAnalysis` out: the selection, the paired tests against the baseline, the
significance marks, the paper-style tables, the reproduction of published results, the
power of the design, the verdict and the sanity warnings.

It writes nothing, registers nothing and draws nothing: the renderers
(:mod:`analysis.render`) turn the result into text, :mod:`analysis.publish` puts it where it
goes.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from analysis.collect import (
    DEV_SPLIT,
    AnalysisError,
    ExampleScores,
    evaluation_splits,
    metric_splits,
    parse_metric_key,
    split_languages,
    tidy_metrics,
)
from analysis.completeness import incomplete_note
from analysis.effect_sizes import effect_size_table
from analysis.papers import PUBLISHED_RESULTS, load_published_results
from analysis.power import power_report
from analysis.reproduction import (
    paper_table_rows,
    reproduction_frames,
    reproduction_section,
    sweep_cells,
    sweep_task_and_model,
)
from analysis.reproduction_presets import preset_comparison, preset_comparison_section
from analysis.sanity import sanity_warnings
from analysis.select import (
    CONFIG_COLUMNS,
    DEFAULT_BASELINE_METHOD,
    DEFAULT_CORRECTION,
    SIGNIFICANCE_LEVEL,
    TEST_SPLIT,
    Selection,
    aggregate_over_seeds,
    baseline_config_key,
    compare_average,
    compare_to_baseline,
    default_selection_metric,
    marks_note,
    resolve_config,
    select_best,
    significance_marks,
)
from analysis.sequential import sequential_section
from analysis.stats import DEFAULT_TEST, SIGNIFICANCE_TESTS
from analysis.sweep_parent import SweepParent
from analysis.sweep_records import SweepRecords
from analysis.tables import Table
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
from analysis.verdict_runs import (
    CONFIRM_SEEDS_PARAM,
    VerdictRuns,
    adjusted_average,
    adjusted_for_selection,
    verdict_runs,
)
from xlt_schema import NO_ADAPTATION


@dataclass(frozen=True)
class ReportOptions:
    """The settings of a report (see :func:`analysis.report.report_sweep`)."""

    significance_test: str | None = None  # overrides the parent run's param
    correction: str = DEFAULT_CORRECTION
    baseline_method: str = DEFAULT_BASELINE_METHOD
    reference: str | None = None  # the second reference, for ``**`` marks
    selection_metric: str | None = None  # else the parent's param, else a default
    paper_results: str | Path = PUBLISHED_RESULTS
    target_difference: float | None = None  # points, for the power section


@dataclass(frozen=True)
class SweepAnalysis:
    """Everything a sweep's report says, computed."""

    experiment: str
    parent: SweepParent
    trials: pd.DataFrame
    seed_means: pd.DataFrame  # aggregate_over_seeds of the trials' tidy metrics
    test: str  # the significance test, one of SIGNIFICANCE_TESTS
    correction: str
    baseline_method: str
    baseline_key: str
    reference_label: str | None
    selection: Selection
    comparisons: Mapping[str, pd.DataFrame]  # split -> selected vs baseline per language
    marks: pd.DataFrame  # analysis.select.significance_marks
    tables: tuple[Table, ...]  # the paper-style tables
    task: str
    model: str
    reproduction: pd.DataFrame  # analysis.reproduction.reproduction_frames' comparisons
    reproduction_lines: tuple[str, ...]  # the section on the papers
    # The reproduction beside the same experiment's sweep under the other preset (paper /
    # released: analysis/reproduction_presets.py); empty without one.
    preset_lines: tuple[str, ...]
    power: tuple[str, ...]  # the lines of the power section (analysis/power.py)
    sequential: tuple[str, ...]  # the sequential seeds' section (analysis/sequential.py)
    departures: dict | None  # a paper preset's, as logged (analysis/departures.py)
    verdict: Verdict
    baseline_mean: float  # the baseline's mean selection metric over seeds
    warnings: tuple[str, ...]  # sanity warnings (analysis.sanity), said before the rest
    incomplete: str  # analysis.completeness.incomplete_note: "" when the sweep has ended
    # The runs the verdict and the comparisons are decided on, and how (analysis/verdict_runs.py)
    verdict_runs: VerdictRuns
    # analysis.effect_sizes.effect_size_table of the selection vs the baseline on test; empty
    # when the baseline is selected or nothing was tested on test
    effect_sizes: pd.DataFrame

    @property
    def evaluation(self) -> pd.DataFrame | None:
        """The comparison on test, which the verdict and the summary speak of."""
        return self.comparisons.get(TEST_SPLIT)


def analyse_sweep(records: SweepRecords, options: ReportOptions) -> SweepAnalysis:
    """The analysis of the sweep ``records`` holds, with the report's ``options``."""
    parent, trials, scores = records.parent, records.trials, records.scores
    test = significance_test_of(parent, options.significance_test)
    # A sweep without English dev queries (retrieval) names its own in the parent's params.
    metric = options.selection_metric or parent.params.get("selection_metric")
    selection = select_best(
        trials, metric or default_selection_metric(trials), options.baseline_method
    )
    baseline_key = baseline_config_key(trials, options.baseline_method)
    reference_key = resolve_config(trials, options.reference) if options.reference else None
    keys = (baseline_key, reference_key, selection.config_key)
    tested = {"test": test, "correction": options.correction}
    comparisons, marks, runs = _tests_against_baseline(
        records, selection, baseline_key, reference_key, options.baseline_method, tested
    )
    verdict, baseline_mean = sweep_verdict(
        scores, trials, selection, runs, comparisons.get(TEST_SPLIT), **tested
    )
    baseline_label = config_label(trials, baseline_key)
    effect_sizes = _effect_sizes(
        scores, runs, (selection, baseline_key), comparisons, test, options
    )
    return SweepAnalysis(
        experiment=records.experiment,
        parent=parent,
        trials=trials,
        seed_means=aggregate_over_seeds(tidy_metrics(trials)),
        test=test,
        correction=options.correction,
        baseline_method=options.baseline_method,
        baseline_key=baseline_key,
        reference_label=config_label(trials, reference_key) if reference_key else None,
        selection=selection,
        comparisons=comparisons,
        marks=marks,
        power=_power(records, baseline_key, selection.metric, test, options.target_difference),
        sequential=tuple(sequential_section(parent.tags)),
        departures=records.departures,
        verdict=verdict,
        baseline_mean=baseline_mean,
        warnings=tuple(
            sanity_warnings(records.training, scores, trials, selection.metric, baseline_label)
        ),
        incomplete=incomplete_note(parent, len(trials)),
        effect_sizes=effect_sizes,
        verdict_runs=runs,
        **_against_papers(
            trials, parent.params, marks, keys, options.paper_results, selection.metric
        ),
        preset_lines=tuple(_by_preset(records, options.paper_results, selection.metric)),
    )


def _power(records: SweepRecords, baseline_key: str, metric: str, test: str, target) -> tuple:
    """What the design could detect, and the seeds ``target`` (a difference in points) would
    need (analysis/power.py)."""
    return tuple(
        power_report(
            records.scores,
            records.trials,
            baseline_key,
            metric,
            test,
            target,
            alpha=SIGNIFICANCE_LEVEL,
        )
    )


def _effect_sizes(
    scores: ExampleScores,
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


def _against_papers(
    trials: pd.DataFrame,
    sweep_params: dict,
    marks: pd.DataFrame,
    keys: tuple[str, str | None, str],
    paper_results: str | Path,
    selection_metric: str,
) -> dict:
    """The fields of :class:`SweepAnalysis` on the papers: the paper-style tables and the
    reproduction of the published results (``keys``: baseline, reference, selected; a
    paper's chosen configuration is the one of ours ``selection_metric`` ranks first)."""
    baseline_key, reference_key, selected_key = keys
    published = load_published_results(paper_results)
    task, model = sweep_task_and_model(trials, sweep_params)
    reproduction, not_compared = reproduction_frames(
        trials,
        published,
        task,
        model,
        (baseline_key, selected_key),
        selection_metric,
        marks,
        sweep_params.get("preset", ""),
    )
    tables = paper_style_tables(
        trials, marks, baseline_key, reference_key, sweep_params, selected_key, published
    )
    return {
        "tables": tuple(tables),
        "task": task,
        "model": model,
        "reproduction": reproduction,
        "reproduction_lines": tuple(reproduction_section(reproduction, task, model, not_compared)),
    }


def _by_preset(records: SweepRecords, paper_results: str | Path, metric: str) -> list[str]:
    """The section that sets this sweep's reproduction beside the newest complete sweep of
    the same experiment under each other preset (paper / released); none without one."""
    if not records.other_presets:
        return []
    published = load_published_results(paper_results)
    sweeps = {records.parent.params["preset"]: records.trials, **records.other_presets}
    frames = {}
    for preset, trials in sweeps.items():
        task, model = sweep_task_and_model(trials, {})
        try:  # each sweep's own baseline and selection, on the same metric
            keys = (baseline_config_key(trials), select_best(trials, metric).config_key)
        except AnalysisError:
            continue
        frames[preset] = reproduction_frames(
            trials, published, task, model, keys, metric, preset=preset
        )
    return preset_comparison_section(preset_comparison(frames)) if len(frames) > 1 else []


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


@dataclass(frozen=True)
class _RowRoles:
    """Which configurations a paper-style table names: they lead it and are labelled."""

    baseline_key: str
    reference_key: str | None
    selected_key: str

    def order(self, config) -> tuple:
        return (
            config.config_key != self.baseline_key,
            config.config_key != self.reference_key,
            config.config_label,
        )

    def label(self, config) -> str:
        label = config.config_label
        if config.config_key == self.selected_key:
            label += " (selected)"
        if config.config_key == self.baseline_key:
            label += " (baseline)"
        elif config.config_key == self.reference_key:
            label += " (reference)"
        return label


def paper_style_tables(
    trials: pd.DataFrame,
    marks: pd.DataFrame,
    baseline_key: str,
    reference_key: str | None,
    sweep_params: dict,
    selected_key: str = "",
    published: pd.DataFrame | None = None,
) -> list[Table]:
    """One table per evaluation split (not dev) and metric: rows are configurations (the
    baseline first, then published rows), columns the single languages and their average;
    cells the mean over seeds in percent with marks (``*`` vs the baseline, ``**`` vs the
    reference). Published rows: those some configuration matches (``published``, by
    default the shipped ``published_results.tsv``)."""
    scores = aggregate_over_seeds(tidy_metrics(trials))
    published = load_published_results() if published is None else published
    task, model = sweep_task_and_model(trials, sweep_params)
    roles = _RowRoles(baseline_key, reference_key, selected_key)
    tables = []
    for split in (split for split in metric_splits(trials) if split != DEV_SPLIT):
        languages = split_languages(trials, split)
        split_scores = scores[(scores["split"] == split) & scores["lang"].isin(languages)]
        for metric in sorted(split_scores["metric"].unique()):
            cells = split_scores[split_scores["metric"] == metric]
            ours = _our_rows(cells, _cell_marks(marks, split, metric), languages, roles)
            paper_rows = paper_table_rows(
                sweep_cells(trials, published, task, model, split, metric), languages
            )
            note = (
                "Mean over seeds in percent; avg over the languages shown. "
                + marks_note(marks, split, metric)
                + " 'paper' rows are the "
                "published rows a configuration of this sweep matches (analysis/"
                "published_results.tsv; see the Reproduction section)"
                + ("." if paper_rows else f"; none match (task {task}, model {model}).")
            )
            rows = [*ours, *paper_rows]
            tables.append(Table(f"{split} {metric} (%)", [*languages, "avg"], rows, note))
    return tables


def _our_rows(
    cells: pd.DataFrame,
    cell_marks: dict[tuple[str, str], str],
    languages: list[str],
    roles: _RowRoles,
) -> list[tuple[str, list[str]]]:
    """The sweep's rows of one table: per configuration its marked cells and average."""
    configs = sorted(
        cells[CONFIG_COLUMNS].drop_duplicates().itertuples(index=False), key=roles.order
    )
    rows = []
    for config in configs:
        means = cells[cells["config_key"] == config.config_key].set_index("lang")["mean"]
        row = [
            _marked_cell(means, cell_marks.get((config.config_key, lang), ""), lang)
            for lang in languages
        ]
        average = (
            f"{100 * means.reindex(languages).mean():.1f}"
            if means.index.isin(languages).sum() == len(languages)
            else "–"
        )
        rows.append((f"ours: {roles.label(config)}", [*row, average]))
    return rows


def _cell_marks(marks: pd.DataFrame, split: str, metric: str) -> dict[tuple[str, str], str]:
    """(config_key, lang) -> the marks of one table's cell (``*`` before ``**``), looked up
    once per table rather than filtered for every cell."""
    if marks.empty:
        return {}
    found = marks[
        (marks["split"] == split) & (marks["metric"].isna() | (marks["metric"] == metric))
    ]
    grouped = found.groupby(["config_key", "lang"])["mark"]
    return {cell: "".join(sorted(group, key=len)) for cell, group in grouped}


def _marked_cell(means: pd.Series, mark: str, lang: str) -> str:
    """The mean in percent with its marks; – when not measured."""
    if lang not in means.index:
        return "–"
    return f"{100 * means[lang]:.1f}{mark}"


def sweep_verdict(
    scores: ExampleScores,
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
