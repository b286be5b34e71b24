"""Sweeps side by side, as the papers' main tables: one table per task, split and metric
whose rows are every sweep's baseline and, for each method of the sweep, its selected
configuration, with the mean over seeds per language and averaged, and ``*`` where the
difference to the baseline of the same sweep is significant.

``python -m analysis compare --experiments ear_xnli,robust_xnli`` writes ``compare.md``,
``compare.tex`` and one PNG per table. Each experiment's newest complete sweep is compared; a
sweep still running or interrupted only when asked (``--include-incomplete``), its rows then
marked incomplete.
"""

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from analysis.collect import connect
from analysis.example_scores import PerExampleScores
from analysis.frames import SOURCE_LANGUAGE, evaluation_splits, split_languages, tidy_metrics
from analysis.papers import (
    GENERALIZED,
    load_published_results,
    names_hyperparameters,
    our_lang,
    published_for,
)
from analysis.plots import plot_compare
from analysis.reproduction import paper_table_rows
from analysis.select import (
    DEFAULT_BASELINE_METHOD,
    DEFAULT_CORRECTION,
    SIGNIFICANCE_LEVEL,
    aggregate_over_seeds,
    baseline_config_key,
    compare_to_baseline,
    default_selection_metric,
    is_baseline,
    select_best,
)
from analysis.stats import DEFAULT_TEST
from analysis.sweep_data import ComparedSweep
from analysis.sweep_records import read_compared_sweep
from analysis.tables import Table, to_latex, to_markdown

MARKDOWN_NAME = "compare.md"
LATEX_NAME = "compare.tex"
PLOT_NAME = "compare_{task}_{split}_{metric}.png"
# Columns of the long frame of cells, one row per (sweep row, split, metric, language).
CELL_COLUMNS = ["task", "model", "row", "split", "metric", "lang", "mean", "significant"]

# Published rows for a table: (task, split, metric, languages) -> [(label, cells)].
PublishedRows = Callable[[str, str, str, list[str]], list[tuple[str, list[str]]]]


def no_published_rows(task: str, split: str, metric: str, languages: list[str]) -> list:
    """A :data:`PublishedRows` that adds none."""
    return []


def main_table_rows(models: set[str], published: pd.DataFrame) -> PublishedRows:
    """The papers' main-table rows for the compared sweeps' models: per (task, split,
    metric), every published row of a method of ours that fixes no hyperparameters (the
    paper's chosen configuration, as in ding2022 Table 1 or huang2021 Table 1), in the
    papers' printed numbers. The tiny model matches none."""

    def rows(task: str, split: str, metric: str, languages: list[str]) -> list:
        found = []
        for model in sorted(models):
            cells = published_for(published, task, model, split, metric)
            cells = cells[~cells["setting"].map(names_hyperparameters).astype(bool)]
            cells = cells[cells["setting"] != GENERALIZED]
            cells = cells.assign(our_lang=list(map(our_lang, cells["lang"], cells["setting"])))
            found += paper_table_rows(cells, languages)
        return found

    return rows


@dataclass(frozen=True)
class Comparison:
    """The tables of a comparison and the files they were written to."""

    tables: list[Table]
    markdown_path: str
    latex_path: str
    plot_paths: tuple[str, ...]


def method_selections(trials: pd.DataFrame, metric: str, baseline_method: str) -> list:
    """The selected configuration of each method (and adaptation) of the sweep other than
    the baseline, by :func:`analysis.select.select_best` among that method's
    configurations."""
    baseline = is_baseline(trials, baseline_method)
    groups = trials[~baseline].groupby(["method", "adaptation"], sort=True)
    return [
        select_best(pd.concat([trials[baseline], group]), metric, baseline_method)
        for _, group in groups
    ]


def _significance(
    scores: PerExampleScores,
    trials: pd.DataFrame,
    config_key: str,
    split: str,
    baseline_method: str,
    test: str,
    correction: str,
) -> dict[tuple[str, str], bool]:
    """Per (language, metric) of ``split``: whether the configuration differs significantly
    from the baseline."""
    tested = compare_to_baseline(
        scores, trials, config_key, split, baseline_method, test=test, correction=correction
    )
    return {(r.lang, r.metric): r.significant for r in tested.itertuples()}


def comparison_cells(
    sweep: ComparedSweep,
    baseline_method: str = DEFAULT_BASELINE_METHOD,
    correction: str = DEFAULT_CORRECTION,
    test: str = DEFAULT_TEST,
) -> pd.DataFrame:
    """The cells of one sweep (:func:`analysis.sweep_records.read_compared_sweep`, its rows
    named by ``sweep.name``): its baseline and each method's selected configuration, per
    evaluation split, metric and language, with whether the difference to the sweep's
    baseline is significant (``test``, by default the seed-aware one whatever the sweep's
    paper used; p-values corrected over languages)."""
    name, params, trials, scores = sweep.name, sweep.params, sweep.trials, sweep.scores
    metric = params.get("selection_metric") or default_selection_metric(trials)
    baseline_key = baseline_config_key(trials, baseline_method)
    means = aggregate_over_seeds(tidy_metrics(trials))
    rows = [(baseline_key, f"{name}: {baseline_method} (baseline)")] + [
        (selection.config_key, f"{name}: {selection.config_label}")
        for selection in method_selections(trials, metric, baseline_method)
    ]
    splits = evaluation_splits(trials)
    cells = []
    for split in splits:
        languages = split_languages(trials, split)
        for config_key, label in rows:
            significant = (
                _significance(scores, trials, config_key, split, baseline_method, test, correction)
                if config_key != baseline_key
                else {}
            )
            own = means[(means["config_key"] == config_key) & (means["split"] == split)]
            for row in own[own["lang"].isin(languages)].itertuples():
                cells.append(
                    {
                        "task": params.get("base.task", "unknown task"),
                        "model": params.get("base.model", "unknown model"),
                        "row": label,
                        "split": split,
                        "metric": row.metric,
                        "lang": row.lang,
                        "mean": row.mean,
                        "significant": significant.get((row.lang, row.metric), False),
                    }
                )
    return pd.DataFrame(cells, columns=CELL_COLUMNS)


def table_of(cells: pd.DataFrame, published_rows: PublishedRows = no_published_rows) -> Table:
    """One table from the cells of one (task, split, metric): rows in the order the cells
    first name them, columns the languages (source first) and their average (over the
    row's languages only when it has every one), ``*`` for a significant difference; then
    the published rows for the same columns."""
    task, split, metric = cells[["task", "split", "metric"]].iloc[0]
    languages = sorted(cells["lang"].unique(), key=lambda lang: (lang != SOURCE_LANGUAGE, lang))
    published = published_rows(task, split, metric, languages)
    rows = []
    for label in cells["row"].drop_duplicates():
        own = cells[cells["row"] == label].set_index("lang")
        values = [
            f"{100 * own.at[lang, 'mean']:.1f}{'*' if own.at[lang, 'significant'] else ''}"
            if lang in own.index
            else "–"
            for lang in languages
        ]
        complete = own.index.isin(languages).sum() == len(languages)
        average = f"{100 * own['mean'].mean():.1f}" if complete else "–"
        rows.append((label, [*values, average]))
    return Table(
        title=f"{task} {split} {metric} (%)",
        columns=[*languages, "avg"],
        rows=[*rows, *published],
        note="Mean over seeds in percent; rows: each sweep's baseline and, per method, the "
        "configuration selected on dev; * = significantly different from the baseline of the "
        f"same sweep (the sweep's own paired test, p corrected over languages < "
        f"{SIGNIFICANCE_LEVEL}); the row's means show the direction.",
    )


def experiment_names(text: str) -> list[str]:
    """`--experiments A,B`: the names, in order, each once; refused in one line naming the
    flag when none is left (`,` or an empty value)."""
    names = list(dict.fromkeys(name.strip() for name in text.split(",") if name.strip()))
    if not names:
        raise ValueError(
            f"invalid --experiments {text!r}: one or more comma-separated MLflow experiment "
            "names, e.g. --experiments ear_xnli,robust_xnli"
        )
    return names


def compare_sweeps(
    tracking_uri: str,
    experiments: list[str],
    out_dir: str | None = None,
    baseline_method: str = DEFAULT_BASELINE_METHOD,
    correction: str = DEFAULT_CORRECTION,
    published_rows: PublishedRows | None = None,
    include_incomplete: bool = False,
    test: str = DEFAULT_TEST,
) -> Comparison:
    """Write the side-by-side tables of ``experiments`` (Markdown, LaTeX, one plot each)
    into ``out_dir`` (default: a new temporary directory that is kept). ``published_rows``
    defaults to the papers' main-table rows for the sweeps' models (:func:`main_table_rows`).
    Sweeps still running or interrupted are compared only with ``include_incomplete``."""
    client = connect(tracking_uri)
    cells = pd.concat(
        [
            comparison_cells(
                read_compared_sweep(client, name, include_incomplete),
                baseline_method,
                correction,
                test,
            )
            for name in experiments
        ],
        ignore_index=True,
    )
    if published_rows is None:
        published_rows = main_table_rows(set(cells["model"]), load_published_results())
    out = Path(out_dir) if out_dir is not None else Path(tempfile.mkdtemp(prefix="compare-"))
    out.mkdir(parents=True, exist_ok=True)
    tables, plots = [], []
    for (task, split, metric), group in cells.groupby(["task", "split", "metric"], sort=True):
        table = table_of(group, published_rows)
        tables.append(table)
        name = PLOT_NAME.format(task=task, split=split, metric=metric).replace(" ", "_")
        plots.append(plot_compare(group, out / name, table.title))
    markdown = [f"# Sweeps compared: {', '.join(experiments)}", ""]
    for table in tables:
        markdown += [*to_markdown(table, label_header="Sweep: configuration"), ""]
    markdown_path, latex_path = out / MARKDOWN_NAME, out / LATEX_NAME
    markdown_path.write_text("\n".join(markdown), encoding="utf-8")
    latex_path.write_text(
        "% Sweeps compared; needs \\usepackage{booktabs}.\n"
        + "\n".join(to_latex(table, label_header="Sweep: configuration") for table in tables),
        encoding="utf-8",
    )
    return Comparison(tables, str(markdown_path), str(latex_path), tuple(plots))
