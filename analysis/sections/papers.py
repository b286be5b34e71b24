"""The report's sections on the papers: the paper-style tables (one per evaluation split and
metric, with the significance marks and the published rows a configuration matches), the
reproduction of published results (:mod:`analysis.reproduction`) and the reproduction beside
the same experiment's sweep under the other preset (:mod:`analysis.reproduction_presets`)."""

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from analysis.frames import DEV_SPLIT, AnalysisError, metric_splits, split_languages, tidy_metrics
from analysis.papers import load_published_results
from analysis.reproduction import (
    paper_table_rows,
    reproduction_frames,
    reproduction_section,
    sweep_cells,
    sweep_task_and_model,
)
from analysis.reproduction_presets import preset_comparison, preset_comparison_section
from analysis.section import Section, SectionInput
from analysis.select import (
    CONFIG_COLUMNS,
    aggregate_over_seeds,
    baseline_config_key,
    marks_note,
    select_best,
)
from analysis.sweep_data import SweepRecords
from analysis.tables import Table


def papers(given: SectionInput) -> dict:
    earlier, records = given.earlier, given.records
    selected = earlier["selection"]
    keys = (earlier["baseline_key"], earlier["reference_key"], selected.config_key)
    return _against_papers(
        records.trials,
        records.parent.params,
        earlier["marks"],
        keys,
        given.options.paper_results,
        selected.metric,
    )


def presets(given: SectionInput) -> dict:
    metric = given.earlier["selection"].metric
    return {"preset_lines": tuple(_by_preset(given.records, given.options.paper_results, metric))}


PAPERS = Section(
    "papers", papers, ("tables", "task", "model", "reproduction", "reproduction_lines")
)
PRESETS = Section("presets", presets, ("preset_lines",))


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
