"""Turn a finished sweep on the tracking server into a report: Markdown and LaTeX tables,
PNG plots, the selected configuration as JSON, and the selected model in the registry.

Everything is written to a local directory and logged on the sweep's parent run under
``report/``; the report of a sweep still running or interrupted is only written locally and
says that it is incomplete (:mod:`analysis.completeness`). The significance test is the
parent run's ``significance_test`` param (ttest, permutation or bootstrap; ttest when
absent), as the sweep script chose it for its task.
"""

import json
import math
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from mlflow.entities import Run

from analysis.collect import (
    AnalysisError,
    ExampleScores,
    collect_trials,
    connect,
    find_parent_run,
    metric_splits,
    param_value,
    parse_metric_key,
    recorded_hyperparameters,
    run_hyperparameters,
    split_languages,
    tidy_metrics,
)
from analysis.completeness import incomplete_note
from analysis.departures import departures_pointer, departures_section, read_departures
from analysis.mlflow_ui import log_summary, summary_metrics, summary_tags, ui_address, ui_command
from analysis.papers import AVERAGE, GENERALIZED, PUBLISHED_RESULTS, load_published_results
from analysis.plots import (
    fit_gain_against_distance,
    load_language_distances,
    plot_gain_against_distance,
    plot_gains,
    plot_grid_beside_paper,
    plot_hyperparameter_response,
    plot_transfer_heatmap,
)
from analysis.power import power_report
from analysis.probing_stages import probing_stages_figure
from analysis.registry import (
    CHAMPION_ALIAS,
    Registration,
    SweepStamp,
    alias_holder,
    best_seed_run,
    register_champion,
)
from analysis.reproduction import (
    BASELINE_ROLE,
    SELECTED_ROLE,
    paper_table_rows,
    reproduction_frame,
    reproduction_section,
    sweep_cells,
    sweep_task_and_model,
)
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
    compare_to_baseline,
    default_selection_metric,
    resolve_config,
    select_best,
    significance_marks,
)
from analysis.sequential import sequential_section
from analysis.stats import CONFIDENCE_LEVEL, DEFAULT_TEST, SIGNIFICANCE_TESTS
from analysis.tables import Table, markdown_table, to_latex, to_markdown
from analysis.verdict import (
    BASELINE_ONLY,
    Verdict,
    make_verdict,
    selection_headline,
    untested_headline,
)
from xlt_schema import COMPLETE_TAG, NO_ADAPTATION

REPORT_ARTIFACT_DIR = "report"
MARKDOWN_NAME = "report.md"
LATEX_NAME = "report.tex"
JSON_NAME = "selected_config.json"
GAINS_PLOT = "gains_{split}.png"
HEATMAP_PLOT = "transfer_heatmap.png"
RESPONSE_PLOT = "hyperparameter_response.png"
TEST_RESPONSE_PLOT = "hyperparameter_response_test.png"
GRID_PLOT = "generalized_{role}_vs_{paper}_{table}.png"
DISTANCE_PLOT = "gain_vs_distance_{method}.png"
# huang2021's robust-training methods: a sweep with one draws its Fig. 2.
ROBUST_METHODS = ("adv", "rs_rp", "rs_da", "rs_syntax")
DEV_SPLIT = "dev"
TEST_NAMES = {
    "ttest": "two-sided paired t-test over examples on per-example scores averaged over seeds",
    "bootstrap": "bootstrapped paired t-test (examples resampled from the null-centred "
    "seed-averaged differences)",
    "permutation": "paired permutation test on predictions concatenated over seeds "
    "(per-unit swaps; on per-example counts where logged)",
}


@dataclass(frozen=True)
class SweepReport:
    """Where a sweep's report went and what it concluded."""

    parent_run_id: str
    selection: Selection
    markdown_path: str
    json_path: str
    markdown: str
    comparison: pd.DataFrame  # selected vs baseline, one row per test language
    artifact_paths: tuple[str, ...]  # on the parent run
    latex_path: str = ""
    plot_paths: tuple[str, ...] = ()
    registration: Registration | None = None
    significance_test: str = DEFAULT_TEST
    warnings: tuple[str, ...] = ()  # sanity warnings (analysis.sanity), said before the rest
    verdict: Verdict | None = None
    ui_address: str = ""  # the MLflow UI page of the sweep's runs
    ui_command: str = ""  # what serves it ("" when the tracking URI is a server)
    incomplete: str = ""  # "incomplete: N of M trials ...": nothing was written to the sweep


def format_mean_std(mean: float, std: float) -> str:
    """A fraction's mean ± std in percent with one decimal (no ± when std is undefined)."""
    if math.isnan(std):
        return f"{100 * mean:.1f}"
    return f"{100 * mean:.1f} ± {100 * std:.1f}"


def format_params(params: dict) -> str:
    """``name=value, ...`` of the settings that apply; ``(none)`` when none does.

    Settings that do not apply (another method's hyperparameters, unset paths) are None.
    """
    return (
        ", ".join(f"{name}={value}" for name, value in params.items() if value is not None)
        or "(none)"
    )


def _score_table(
    trials: pd.DataFrame,
    scores: pd.DataFrame,
    split: str,
    metric_name: str,
    baseline_key: str,
    selected_key: str,
) -> list[str]:
    """Configurations x languages of mean ± std over seeds, baseline first."""
    title = [f"## {split} {metric_name} (%)", ""]
    split_scores = scores[(scores["split"] == split) & (scores["metric"] == metric_name)]
    if split_scores.empty:
        return [*title, f"_No {split} {metric_name} was logged._"]
    languages = split_languages(trials, split)
    configs = sorted(
        split_scores[CONFIG_COLUMNS].drop_duplicates().itertuples(index=False),
        key=lambda config: (config.config_key != baseline_key, config.config_label),
    )
    rows = []
    for config in configs:
        cells = split_scores[split_scores["config_key"] == config.config_key].set_index("lang")
        label = config.config_label
        if config.config_key == baseline_key:
            label = f"**Baseline:** {label}"
        if config.config_key == selected_key:
            label = f"{label} **(selected)**"
        values = [
            format_mean_std(cells.at[lang, "mean"], cells.at[lang, "std"])
            if lang in cells.index
            else "–"
            for lang in languages
        ]
        rows.append([label, str(cells["n_seeds"].max()), *values])
    return [
        *title,
        *markdown_table(["Configuration", "Seeds", *languages], rows),
        "",
        "Cells: mean ± standard deviation over seeds, in percent.",
    ]


def _is_baseline_selection(selection: Selection, baseline_method: str) -> bool:
    return selection.method == baseline_method and selection.adaptation == NO_ADAPTATION


def _selection_section(selection: Selection, baseline_method: str) -> list[str]:
    rule = (
        f"Rule: the non-baseline configuration with the highest mean {selection.metric} over "
        "seeds; ties go to the lower standard deviation over seeds, then to the "
        "simpler configuration (fewer of its hyperparameters switched on), then to the "
        "alphabetically first label. Test scores play no part in the choice."
    )
    if _is_baseline_selection(selection, baseline_method):
        rule += " No non-baseline configuration finished, so the baseline is selected."
    hyperparameters = ", ".join(
        f"{name}={selection.params.get(name)}" for name in selection.hyperparameters
    )
    return [
        "## Selected configuration",
        "",
        rule,
        "",
        f"- Configuration: {selection.config_label} (method `{selection.method}`, "
        f"adaptation `{selection.adaptation}`, config_key `{selection.config_key}`)",
        f"- Hyperparameters: {hyperparameters or '(none recorded)'}",
        f"- Parameters: {format_params(selection.params)}",
        f"- Mean {selection.metric}: {format_mean_std(selection.mean, selection.std)}"
        f" % over {selection.n_seeds} seeds",
        f"- Runs: {', '.join(f'`{run_id}`' for run_id in selection.run_ids)}",
    ]


def _comparison_section(
    split: str, comparison: pd.DataFrame, test: str, correction: str, against: str
) -> list[str]:
    confidence = f"{100 * CONFIDENCE_LEVEL:.0f}%"
    rows = [
        [
            row.lang,
            f"{100 * row.system_mean:.1f}",
            f"{100 * row.baseline_mean:.1f}",
            f"{100 * row.mean_difference:+.1f}",
            f"[{100 * row.ci_low:+.1f}, {100 * row.ci_high:+.1f}]",
            f"{row.p_value:.3g}",
            f"{row.p_holm:.3g}",
            f"{row.p_bh:.3g}",
            "*" if row.significant else "",
            str(row.n_examples),
        ]
        for row in comparison.itertuples(index=False)
    ]
    return [
        f"## Selected configuration vs {against} ({split})",
        "",
        f"Test: {TEST_NAMES[test]}, on the {comparison['n_seeds'].iloc[0]} seed(s) both "
        f"ran. Δ and its {confidence} CI are in percentage points. p-values are corrected "
        f"over the {len(comparison)} languages (Holm; Benjamini-Hochberg); * marks a "
        f"{correction}-corrected p < {SIGNIFICANCE_LEVEL} (`none`: uncorrected).",
        "",
        *markdown_table(
            [
                "Language",
                "Selected (%)",
                "Baseline (%)",
                "Δ (points)",
                f"{confidence} CI",
                "p",
                "p (Holm)",
                "p (BH)",
                "Sig.",
                "Examples",
            ],
            rows,
        ),
    ]


def _cell(mean: float, marks: str) -> str:
    return f"{100 * mean:.1f}{marks}"


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
    tables = []
    for split in (split for split in metric_splits(trials) if split != DEV_SPLIT):
        languages = split_languages(trials, split)
        split_scores = scores[(scores["split"] == split) & scores["lang"].isin(languages)]
        for metric in sorted(split_scores["metric"].unique()):
            cells = split_scores[split_scores["metric"] == metric]
            configs = sorted(
                cells[CONFIG_COLUMNS].drop_duplicates().itertuples(index=False),
                key=lambda c: (
                    c.config_key != baseline_key,
                    c.config_key != reference_key,
                    c.config_label,
                ),
            )
            rows = []
            for config in configs:
                means = cells[cells["config_key"] == config.config_key].set_index("lang")["mean"]
                config_marks = (
                    marks[(marks["config_key"] == config.config_key) & (marks["split"] == split)]
                    if not marks.empty
                    else marks
                )
                row = []
                for lang in languages:
                    if lang not in means.index:
                        row.append("–")
                        continue
                    found = config_marks[config_marks["lang"] == lang] if not marks.empty else marks
                    found = (
                        found[found["metric"].isna() | (found["metric"] == metric)]
                        if not found.empty
                        else found
                    )
                    row.append(_cell(means[lang], "".join(sorted(found["mark"], key=len))))
                average = (
                    f"{100 * means.reindex(languages).mean():.1f}"
                    if means.index.isin(languages).sum() == len(languages)
                    else "–"
                )
                label = config.config_label
                if config.config_key == selected_key:
                    label += " (selected)"
                if config.config_key == baseline_key:
                    label += " (baseline)"
                elif config.config_key == reference_key:
                    label += " (reference)"
                rows.append((f"ours: {label}", [*row, average]))
            paper_rows = paper_table_rows(
                sweep_cells(trials, published, task, model, split, metric), languages
            )
            rows += paper_rows
            note = (
                "Mean over seeds in percent; avg over the languages shown. * significant vs "
                "the baseline, ** vs the reference (corrected p < 0.05). 'paper' rows are the "
                "published rows a configuration of this sweep matches (analysis/"
                "published_results.tsv; see the Reproduction section)"
                + ("." if paper_rows else f"; none match (task {task}, model {model}).")
            )
            tables.append(Table(f"{split} {metric} (%)", [*languages, "avg"], rows, note))
    return tables


def _pair_differences(
    trials: pd.DataFrame, system_key: str, baseline_key: str, metric: str
) -> pd.DataFrame:
    """Mean-over-seeds difference system - baseline per generalized test pair; a missing
    diagonal pair (es-es) is the ordinary evaluation of that language (test/es)."""
    pairs = split_languages(trials, TEST_SPLIT, pairs=True)
    if not pairs:
        return pd.DataFrame(columns=["lang", "difference"])
    scores = aggregate_over_seeds(tidy_metrics(trials))
    scores = scores[(scores["split"] == TEST_SPLIT) & (scores["metric"] == metric)]
    languages = {lang for pair in pairs for lang in pair.split("-", 1)}
    diagonal = {lang: f"{lang}-{lang}" for lang in languages if f"{lang}-{lang}" not in pairs}
    scores = scores.assign(lang=scores["lang"].replace(diagonal))
    scores = scores[scores["lang"].isin([*pairs, *diagonal.values()])]
    system = scores[scores["config_key"] == system_key].set_index("lang")["mean"]
    baseline = scores[scores["config_key"] == baseline_key].set_index("lang")["mean"]
    difference = (system - baseline).dropna()
    return pd.DataFrame({"lang": difference.index, "difference": difference.to_numpy()})


def response_points(trials: pd.DataFrame, metric: str) -> tuple[pd.DataFrame, list[str]]:
    """One row per run with a float column per hyperparameter, and the axes to plot.

    The hyperparameters are those the sweep recorded on its runs (``xlt.hyperparameters``,
    the union over the runs); a run has a value on an axis only when the axis is one of its
    own hyperparameters (NaN elsewhere, and for values that are not numbers). The axes
    plotted are those with at least two values. Runs of older sweeps, which did not record
    their hyperparameters, give no axes.
    """
    own = run_hyperparameters(trials)
    axes = [name for name in recorded_hyperparameters(trials) if name in trials.columns]
    points = pd.DataFrame(
        {
            axis: [
                _numeric(value) if axis in names else math.nan
                for value, names in zip(trials[axis], own)
            ]
            for axis in axes
        },
        index=range(len(trials)),
    )
    points["value"] = trials[metric].to_numpy(dtype=float)
    varied = [axis for axis in axes if points[axis].dropna().nunique() >= 2]
    return points, varied


def _numeric(value) -> float:
    parsed = param_value(str(value)) if pd.notna(value) else None
    return float(parsed) if isinstance(parsed, (int, float)) else math.nan


def distance_plots(
    out: Path, trials: pd.DataFrame, selection_metric: str, baseline_key: str
) -> list[str]:
    """huang2021 Fig. 2 for a robust sweep: per robust method, its configuration best on the
    selection metric (mean over seeds), its per-language test gain over the baseline (mean
    over seeds, points) against the language's distance from English, with the
    least-squares line (``analysis.plots.fit_gain_against_distance``)."""
    robust = trials[trials["method"].isin(ROBUST_METHODS)]
    if robust.empty or selection_metric not in trials.columns:
        return []
    _, _, metric = parse_metric_key(selection_metric)
    scores = aggregate_over_seeds(tidy_metrics(trials))
    test = scores[(scores["split"] == TEST_SPLIT) & (scores["metric"] == metric)]
    baseline = test[test["config_key"] == baseline_key].set_index("lang")["mean"]
    distances = load_language_distances()
    paths = []
    for method, runs in robust.groupby("method", sort=True):
        best = runs.groupby("config_key")[selection_metric].mean().idxmax()
        system = test[test["config_key"] == best].set_index("lang")["mean"]
        fit = fit_gain_against_distance((100 * (system - baseline)).dropna().to_dict(), distances)
        if fit is not None:
            label = runs.loc[runs["config_key"] == best, "config_label"].iloc[0]
            title = f"{label} minus baseline, test {metric} (as huang2021 Fig. 2)"
            paths.append(
                plot_gain_against_distance(fit, out / DISTANCE_PLOT.format(method=method), title)
            )
    return paths


def make_plots(
    out: Path,
    trials: pd.DataFrame,
    selection: Selection,
    comparisons: dict[str, pd.DataFrame],
    baseline_key: str,
) -> list[str]:
    """Every plot this sweep has data for; returns the files written."""
    paths = []
    for split, comparison in comparisons.items():
        paths.append(
            plot_gains(
                comparison,
                out / GAINS_PLOT.format(split=split),
                f"{selection.config_label} vs baseline ({split})",
            )
        )
    _, _, metric = parse_metric_key(selection.metric)
    differences = _pair_differences(trials, selection.config_key, baseline_key, metric)
    if not differences.empty:
        paths.append(
            plot_transfer_heatmap(
                differences,
                out / HEATMAP_PLOT,
                f"{selection.config_label}\nminus baseline, test {metric}",
            )
        )
    # The dev metric that selects, and the test average over languages (huang2021 Fig. 3
    # draws that against m).
    responses = [(selection.metric, RESPONSE_PLOT)]
    test_languages = split_languages(trials, TEST_SPLIT)
    test_columns = [f"{TEST_SPLIT}/{lang}/{metric}" for lang in test_languages]
    if test_columns and all(column in trials.columns for column in test_columns):
        average = f"{TEST_SPLIT}/average of {len(test_columns)} languages/{metric}"
        trials = trials.assign(**{average: trials[test_columns].mean(axis=1)})
        responses.append((average, TEST_RESPONSE_PLOT))
    for response_metric, name in responses:
        points, varied = response_points(trials, response_metric)
        if not varied:
            continue
        baseline_values = trials.loc[trials["config_key"] == baseline_key, response_metric]
        baseline = (
            (float(baseline_values.mean()), float(baseline_values.std()))
            if not baseline_values.empty
            else None
        )
        paths.append(
            plot_hyperparameter_response(points, varied, baseline, response_metric, out / name)
        )
    return paths + distance_plots(out, trials, selection.metric, baseline_key)


def published_grid_plots(reproduction: pd.DataFrame, out: Path) -> list[str]:
    """Our two-language grid beside each published one it is compared with (huang2021
    Tables 4-9), for the baseline and the selected configuration."""
    grids = reproduction[
        (reproduction["setting"] == GENERALIZED)
        & (reproduction["lang"] != AVERAGE)
        & reproduction["role"].isin([BASELINE_ROLE, SELECTED_ROLE])
    ]
    paths = []
    for (role, label, paper, table), cells in grids.groupby(
        ["role", "config_label", "paper", "table"], sort=False
    ):
        name = GRID_PLOT.format(role=role, paper=paper, table=table.replace(" ", "_"))
        title = f"{role} {label} vs {paper} {table} ({cells['method'].iloc[0]}), test"
        paths.append(plot_grid_beside_paper(cells, out / name, title))
    return paths


def sweep_verdict(
    scores: ExampleScores,
    trials: pd.DataFrame,
    selection: Selection,
    baseline_method: str,
    evaluation: pd.DataFrame | None,
    **options,
) -> tuple[Verdict, float]:
    """The verdict against the baseline (on the selection metric, with the paired test of
    :func:`compare_to_baseline` on its split; per language on test from ``evaluation``)
    and the baseline's mean selection metric over seeds."""
    baseline_key = baseline_config_key(trials, baseline_method)
    baseline_mean = float(trials.loc[trials["config_key"] == baseline_key, selection.metric].mean())
    if _is_baseline_selection(selection, baseline_method):
        return make_verdict(BASELINE_ONLY, evaluation, TEST_SPLIT), baseline_mean
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
    return make_verdict(headline, evaluation, TEST_SPLIT), baseline_mean


def _holder_sentence(registration: Registration) -> str:
    holder = registration.holder
    alias = f"`models:/{registration.model_name}@{registration.alias}`"
    if holder is None:
        return f"No version holds {alias}."
    origin = f"sweep parent run `{holder.sweep_run_id}`" if holder.sweep_run_id else "no sweep"
    return f"{alias} is held by version {holder.version} (from {origin})."


def _registration_section(registration: Registration | None) -> list[str]:
    lines = ["## Model registry", ""]
    if registration is None:
        return [*lines, "Registration was not requested."]
    if not registration.registered:
        return [
            *lines,
            f"**No model registered.** {registration.reason}.",
            "",
            _holder_sentence(registration),
        ]
    moved = (
        f"The `{registration.alias}` alias moved to it."
        if registration.alias_moved
        else f"The `{registration.alias}` alias did not move to it: {registration.alias_reason} "
        "(the alias follows the newest complete sweep)."
    )
    return [
        *lines,
        f"The selected configuration's best seed (run `{registration.run_id}`, highest "
        f"selection metric) is registered as version {registration.version} of "
        f"`{registration.model_name}` (source `{registration.source}`). {moved}",
        "",
        _holder_sentence(registration),
    ]


def _verdict_section(warnings: tuple[str, ...], verdict: Verdict) -> list[str]:
    lines = []
    if warnings:
        lines += ["## Sanity warnings", "", *(f"- **Warning:** {text}" for text in warnings), ""]
    lines += ["## Verdict against the baseline", "", verdict.headline]
    return lines + (["", verdict.languages] if verdict.languages else [])


def render_markdown(
    experiment: str,
    parent: Run,
    trials: pd.DataFrame,
    selection: Selection,
    comparisons: dict[str, pd.DataFrame],
    tables: list[Table],
    plots: list[str],
    registration: Registration | None,
    test: str,
    correction: str,
    reference_label: str | None,
    baseline_method: str = DEFAULT_BASELINE_METHOD,
    warnings: tuple[str, ...] = (),
    verdict: Verdict | None = None,
    ui: tuple[str, str] = ("", ""),
    reproduction: tuple[str, ...] = (),  # the lines of the section on the papers
    departures: dict | None = None,  # a paper preset's, as logged (analysis/departures.py)
    power: tuple[str, ...] = (),  # the lines of the power section (analysis/power.py)
    sequential: tuple[str, ...] = (),  # the sequential seeds' section (analysis/sequential.py)
    incomplete: str = "",  # analysis.completeness.incomplete_note of the sweep
) -> str:
    """The whole report.md text; ``ui`` is the MLflow UI address of the runs and the command
    that serves it."""
    _, _, metric_name = parse_metric_key(selection.metric)
    scores = aggregate_over_seeds(tidy_metrics(trials))
    baseline_key = baseline_config_key(trials, baseline_method)
    lines = [
        f"# Sweep report: {experiment}, parent run `{parent.info.run_id}`",
        "",
        f"Finished trials: {len(trials)}; baseline: method `{baseline_method}`, adaptation "
        f"`{NO_ADAPTATION}`; "
        f"significance test: `{test}` ({TEST_NAMES[test]}); correction over languages: "
        f"`{correction}`; reference for `**`: "
        f"{f'`{reference_label}`' if reference_label else 'none'}.",
    ]
    if incomplete:
        lines += ["", f"**{_read_only(incomplete)}**"]
    if ui[0]:
        serve = f" (served by `{ui[1]}`)" if ui[1] else ""
        lines += ["", f"Runs in the MLflow UI: <{ui[0]}>{serve}."]
    if verdict is not None:
        lines += ["", *_verdict_section(warnings, verdict)]
    for split in (DEV_SPLIT, TEST_SPLIT):
        lines += [
            "",
            *_score_table(trials, scores, split, metric_name, baseline_key, selection.config_key),
        ]
    lines += ["", *_selection_section(selection, baseline_method)]
    for split, comparison in comparisons.items():
        lines += ["", *_comparison_section(split, comparison, test, correction, "baseline")]
    if power:
        lines += ["", *power]
    if sequential:
        lines += ["", *sequential]
    if tables:
        lines += ["", "## Paper-style tables", ""]
        for table in tables:
            lines += [*to_markdown(table), ""]
    if departures:
        lines += [*departures_section(departures), ""]
    if reproduction:
        lines += [*_with_pointer(list(reproduction), departures_pointer(departures)), ""]
    if plots:
        lines += ["## Plots", "", *(f"![{Path(path).stem}]({Path(path).name})" for path in plots)]
    lines += ["", *_registration_section(registration)]
    if parent.data.params:
        lines += [
            "",
            "## Sweep settings",
            "",
            *(f"- {name}: {value}" for name, value in sorted(parent.data.params.items())),
        ]
    return "\n".join(lines) + "\n"


def _read_only(incomplete: str) -> str:
    return (
        f"Sweep {incomplete}: a provisional report, written here "
        "only; nothing was logged to the parent run and no model was registered."
    )


def _with_pointer(section: list[str], pointer: str | None) -> list[str]:
    """The reproduction section with the departures pointer under its heading."""
    if pointer is None:
        return section
    return [*section[:2], pointer, "", *section[2:]]


def render_latex(experiment: str, tables: list[Table]) -> str:
    """The paper-style tables as LaTeX ``table`` environments (booktabs)."""
    header = f"% Paper-style tables of sweep {experiment}; needs \\usepackage{{booktabs}}.\n"
    return header + "\n".join(to_latex(table) for table in tables)


def _strict_json(value):
    """NaN and infinities become null: strict JSON readers reject them."""
    if isinstance(value, dict):
        return {key: _strict_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_strict_json(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, np.generic):
        return _strict_json(value.item())
    return value


def _selection_payload(
    experiment: str,
    parent_run_id: str,
    selection: Selection,
    comparisons: dict[str, pd.DataFrame],
    baseline_method: str,
    test: str,
    correction: str,
    reference: str | None,
    registration: Registration | None,
) -> dict:
    payload = {
        "experiment": experiment,
        "parent_run_id": parent_run_id,
        **asdict(selection),
        "baseline_method": baseline_method,
        "significance_test": test,
        "correction": correction,
        "reference": reference,
        "registered_model": asdict(registration) if registration else None,
    }
    for split, comparison in comparisons.items():
        payload[f"{split}_comparison"] = comparison.to_dict(orient="records")
    return _strict_json(payload)


def _significance_test(parent: Run, override: str | None) -> str:
    test = override or parent.data.params.get("significance_test", DEFAULT_TEST)
    if test not in SIGNIFICANCE_TESTS:
        raise ValueError(
            f"significance_test={test!r} (parent run {parent.info.run_id}) is not "
            f"one of {', '.join(SIGNIFICANCE_TESTS)}"
        )
    return test


def _register(
    client,
    parent: Run,
    experiment: str,
    model_name: str,
    trials: pd.DataFrame,
    selection: Selection,
    refused: bool,
    register_anyway: bool = False,
    incomplete: str = "",
) -> Registration:
    """Register the selection's best seed (see :func:`register_champion`); ``refused``: the
    sweep has sanity warnings, so nothing is registered; ``incomplete``: the sweep has not
    ended, so nothing is registered whatever is asked."""
    champion = best_seed_run(trials, selection.config_key, selection.metric)
    if refused or incomplete:
        reason = (
            f"the sweep is {incomplete}; report it again once it has ended"
            if incomplete
            else "the sweep has sanity warnings (above); to register it anyway run "
            f"`python -m analysis report --experiment {experiment} --parent-run "
            f"{parent.info.run_id} --register-anyway`"
        )
        return Registration(
            run_id=champion,
            registered=False,
            model_name=model_name,
            alias=CHAMPION_ALIAS,
            reason=reason,
            holder=alias_holder(client, model_name, CHAMPION_ALIAS),
        )
    return register_champion(
        client,
        champion,
        model_name,
        SweepStamp(
            parent_run_id=parent.info.run_id,
            end_time=parent.info.end_time or 0,
            complete=parent.data.tags.get(COMPLETE_TAG) == "true",
        ),
        CHAMPION_ALIAS,
        description=f"{selection.config_label}, selected by {selection.metric} "
        f"(sweep parent run {parent.info.run_id})",
        metric=selection.metric,
        allow_worse=register_anyway,
    )


def report_sweep(
    tracking_uri: str,
    experiment: str,
    parent_run_id: str | None = None,
    out_dir: str | None = None,
    reference: str | None = None,
    significance_test: str | None = None,
    correction: str = DEFAULT_CORRECTION,
    baseline_method: str = DEFAULT_BASELINE_METHOD,
    register: bool = True,
    model_name: str | None = None,
    selection_metric: str | None = None,
    paper_results: str | Path = PUBLISHED_RESULTS,
    register_anyway: bool = False,
    target_difference: float | None = None,
) -> SweepReport:
    """Write the report of a sweep and log it to its parent run; register the selected model.

    Everything is read from and written to ``tracking_uri`` (tracking and model registry);
    the process environment is neither read for it nor changed.
    Without ``parent_run_id`` the newest parent run with finished trials is reported.
    Without ``out_dir`` the files go to a new temporary directory that is kept.
    The baseline is ``baseline_method`` with adaptation ``none``; every other configuration
    is a candidate for selection.
    ``reference`` names the second reference for ``**`` marks (a method or an adaptation
    with one configuration, a config label or a config key; e.g. ``adjusted`` for the
    adjusted model).
    ``significance_test`` overrides the parent run's param. With ``register`` the best
    seed of the selected configuration is registered as ``models:/<model_name>@champion``
    (``model_name`` defaults to the experiment name) when its run logged a model.
    ``selection_metric`` defaults to the parent run's ``selection_metric`` param, else
    dev/en/accuracy, else the sweep's English-dev metric.
    A sweep with sanity warnings (:mod:`analysis.sanity`) registers nothing unless
    ``register_anyway``; the alias moves only as :func:`analysis.registry.moves_alias` allows,
    and never to a model worse on dev than its holder's unless ``register_anyway``.
    The sweep's summary (selection, verdict, differences on test) goes on the parent run as
    metrics and tags. A sweep still running or interrupted (:mod:`analysis.completeness`) is
    only read: its report is written to ``out_dir`` and says it is incomplete.
    """
    client = connect(tracking_uri)
    parent = find_parent_run(client, experiment, parent_run_id)
    run_id = parent.info.run_id
    test = _significance_test(parent, significance_test)
    trials = collect_trials(client, run_id)
    incomplete = incomplete_note(parent, len(trials))
    # A sweep without English dev queries (retrieval) names its own in the parent's params.
    selection_metric = selection_metric or parent.data.params.get("selection_metric")
    selection = select_best(
        trials, selection_metric or default_selection_metric(trials), baseline_method
    )
    baseline_key = baseline_config_key(trials, baseline_method)
    reference_key = resolve_config(trials, reference) if reference else None
    reference_label = (
        trials.loc[trials["config_key"] == reference_key, "config_label"].iloc[0]
        if reference_key
        else None
    )
    scores = ExampleScores(client)
    options = {"test": test, "correction": correction}
    evaluation_splits = [
        split
        for split in metric_splits(trials)
        if split != DEV_SPLIT and split_languages(trials, split)
    ]
    comparisons = {
        split: compare_to_baseline(
            scores, trials, selection.config_key, split, baseline_method, **options
        )
        for split in evaluation_splits
    }
    marks = significance_marks(
        scores, trials, baseline_key, reference_key, evaluation_splits, **options
    )
    published = load_published_results(paper_results)
    tables = paper_style_tables(
        trials,
        marks,
        baseline_key,
        reference_key,
        parent.data.params,
        selection.config_key,
        published,
    )
    task, model = sweep_task_and_model(trials, parent.data.params)
    reproduction = reproduction_frame(
        trials, published, task, model, baseline_key, selection.config_key
    )

    evaluation = comparisons.get(TEST_SPLIT)
    verdict, baseline_mean = sweep_verdict(
        scores, trials, selection, baseline_method, evaluation, **options
    )
    baseline_label = trials.loc[trials["config_key"] == baseline_key, "config_label"].iloc[0]
    warnings = tuple(
        sanity_warnings(client, scores, trials, selection.metric, baseline_label, parent)
    )
    departures = read_departures(client, parent)
    # What the design could detect, and the seeds `target_difference` (points) would need.
    power = power_report(
        scores, trials, baseline_key, selection.metric, test, target_difference, SIGNIFICANCE_LEVEL
    )

    out = Path(out_dir) if out_dir is not None else Path(tempfile.mkdtemp(prefix="sweep-report-"))
    out.mkdir(parents=True, exist_ok=True)
    plots = make_plots(out, trials, selection, comparisons, baseline_key)
    plots += probing_stages_figure(client, trials, out)
    plots += published_grid_plots(reproduction, out)
    registration = None
    if register:
        registration = _register(
            client,
            parent,
            experiment,
            model_name or experiment,
            trials,
            selection,
            bool(warnings) and not register_anyway,
            register_anyway,
            incomplete,
        )
    ui = (
        ui_address(tracking_uri, parent.info.experiment_id),
        ui_command(tracking_uri),
    )
    if not incomplete:  # a sweep still running or interrupted is only read
        log_summary(
            client,
            run_id,
            parent.info.experiment_id,
            summary_metrics(selection, baseline_mean, evaluation, TEST_SPLIT),
            summary_tags(selection, verdict, evaluation, TEST_SPLIT, warnings),
        )
    markdown = render_markdown(
        experiment,
        parent,
        trials,
        selection,
        comparisons,
        tables,
        plots,
        registration,
        test,
        correction,
        reference_label,
        baseline_method,
        warnings,
        verdict,
        ui,
        reproduction=tuple(reproduction_section(reproduction, task, model)),
        departures=departures,
        power=tuple(power),
        sequential=tuple(sequential_section(parent.data.tags)),
        incomplete=incomplete,
    )
    markdown_path, latex_path, json_path = out / MARKDOWN_NAME, out / LATEX_NAME, out / JSON_NAME
    markdown_path.write_text(markdown, encoding="utf-8")
    latex_path.write_text(render_latex(experiment, tables), encoding="utf-8")
    payload = _selection_payload(
        experiment,
        run_id,
        selection,
        comparisons,
        baseline_method,
        test,
        correction,
        reference_label,
        registration,
    )
    payload["reproduction"] = _strict_json(reproduction.to_dict(orient="records"))
    payload["departures"] = departures
    json_path.write_text(json.dumps(payload, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    files = [markdown_path, latex_path, json_path, *map(Path, plots)]
    logged = [] if incomplete else files  # a sweep still running or interrupted is only read
    for path in logged:
        client.log_artifact(run_id, str(path), artifact_path=REPORT_ARTIFACT_DIR)

    return SweepReport(
        parent_run_id=run_id,
        selection=selection,
        markdown_path=str(markdown_path),
        json_path=str(json_path),
        markdown=markdown,
        comparison=comparisons.get(TEST_SPLIT, pd.DataFrame()),
        artifact_paths=tuple(f"{REPORT_ARTIFACT_DIR}/{path.name}" for path in logged),
        latex_path=str(latex_path),
        plot_paths=tuple(plots),
        registration=registration,
        significance_test=test,
        warnings=warnings,
        verdict=verdict,
        ui_address=ui[0],
        ui_command=ui[1],
        incomplete=incomplete,
    )


def _registry_line(registration: Registration | None) -> str:
    if registration is None:
        return "Model registry: not requested"
    holder = registration.holder
    held = (
        f"; @{registration.alias} is version {holder.version}"
        + (f" (sweep {holder.sweep_run_id})" if holder.sweep_run_id else "")
        if holder
        else f"; no version holds @{registration.alias}"
    )
    if not registration.registered:
        return f"Model registry: nothing registered ({registration.reason}){held}"
    moved = (
        "moved to it" if registration.alias_moved else f"not moved ({registration.alias_reason})"
    )
    return (
        f"Registered model: {registration.model_name} version {registration.version} "
        f"(run {registration.run_id}); alias @{registration.alias} {moved}{held}"
    )


def format_summary(report: SweepReport) -> str:
    """What a sweep or the CLI prints at the end: sanity warnings first, then the verdict
    against the baseline, the selection, where the report went and where the runs are."""
    selection = report.selection
    lines = [f"INCOMPLETE: {_read_only(report.incomplete)}"] if report.incomplete else []
    lines += [f"WARNING: {text}" for text in report.warnings]
    if report.verdict is not None:
        lines += [f"Verdict: {report.verdict.headline}"]
        lines += [f"         {report.verdict.languages}"] if report.verdict.languages else []
    lines += [
        f"Selected configuration: {selection.config_label} (method {selection.method}, "
        f"adaptation {selection.adaptation}, config_key {selection.config_key})",
        f"  {selection.metric}: {format_mean_std(selection.mean, selection.std)} % "
        f"over {selection.n_seeds} seeds (the best candidate on it; the verdict above says "
        "whether it beats the baseline)",
        f"Report files: {report.markdown_path}",
        f"              {report.latex_path}",
        f"              {report.json_path}",
        *(f"              {path}" for path in report.plot_paths),
        f"Logged to parent run {report.parent_run_id} as {', '.join(report.artifact_paths)}"
        if report.artifact_paths
        else f"Nothing logged to parent run {report.parent_run_id} (the sweep is incomplete)",
        _registry_line(report.registration),
    ]
    if report.ui_address:
        lines.append(f"Runs in the MLflow UI: {report.ui_address}")
        if report.ui_command:
            lines.append(f"  (serve it with: {report.ui_command})")
    return "\n".join(lines)
