"""The plots of a sweep's report, drawn from its analysis (:mod:`analysis.sweep_analysis`)
into the report's directory: gains per language, the generalized-transfer heat maps (the
selection's, and RS-RP's and RS-DA's as huang2021 Figs. 4-5), the hyperparameter response
(of the average and per language, ding2022 Fig. 6), gain against language distance and our
grids beside the papers'.
Importing this module imports matplotlib (:mod:`analysis.plots`); :mod:`analysis.publish`
imports it only when it draws."""

import math
from pathlib import Path

import pandas as pd

from analysis.frames import (
    param_value,
    recorded_hyperparameters,
    run_hyperparameters,
    split_languages,
)
from analysis.papers import AVERAGE, GENERALIZED
from analysis.plots import (
    fit_gain_against_distance,
    load_language_distances,
    plot_gain_against_distance,
    plot_gains,
    plot_grid_beside_paper,
    plot_hyperparameter_response,
    plot_response_per_language,
    plot_transfer_heatmap,
)
from analysis.probing_stages import ProbingStages, probing_stages_figure
from analysis.reproduction import BASELINE_ROLE, SELECTED_ROLE
from analysis.select import TEST_SPLIT
from analysis.sweep_analysis import SweepAnalysis
from xlt_schema import parse_metric_key

GAINS_PLOT = "gains_{split}.png"
HEATMAP_PLOT = "transfer_heatmap.png"
METHOD_HEATMAP_PLOT = "transfer_heatmap_{method}.png"
LANGUAGE_RESPONSE_PLOT = "hyperparameter_response_per_language.png"
RESPONSE_PLOT = "hyperparameter_response.png"
TEST_RESPONSE_PLOT = "hyperparameter_response_test.png"
GRID_PLOT = "generalized_{role}_vs_{paper}_{table}.png"
DISTANCE_PLOT = "gain_vs_distance_{method}.png"
# huang2021's robust-training methods: a sweep with one draws its Fig. 2; Figs. 4-5 draw
# the generalized grids of RS-RP and RS-DA (huang2021 L214).
ROBUST_METHODS = ("adv", "rs_rp", "rs_da", "rs_syntax")
GRID_FIGURE_METHODS = ("rs_rp", "rs_da")


def pair_differences(analysis: SweepAnalysis, metric: str, config_key: str) -> pd.DataFrame:
    """Mean-over-seeds difference ``config_key`` - baseline per generalized test pair; a
    missing diagonal pair (es-es) is the ordinary evaluation of that language (test/es)."""
    pairs = split_languages(analysis.trials, TEST_SPLIT, pairs=True)
    if not pairs:
        return pd.DataFrame(columns=["lang", "difference"])
    scores = analysis.seed_means
    scores = scores[(scores["split"] == TEST_SPLIT) & (scores["metric"] == metric)]
    languages = {lang for pair in pairs for lang in pair.split("-", 1)}
    diagonal = {lang: f"{lang}-{lang}" for lang in languages if f"{lang}-{lang}" not in pairs}
    scores = scores.assign(lang=scores["lang"].replace(diagonal))
    scores = scores[scores["lang"].isin([*pairs, *diagonal.values()])]
    system = scores[scores["config_key"] == config_key]
    baseline = scores[scores["config_key"] == analysis.baseline_key]
    difference = (system.set_index("lang")["mean"] - baseline.set_index("lang")["mean"]).dropna()
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


def best_per_method(analysis: SweepAnalysis, methods: tuple[str, ...]) -> dict[str, str]:
    """Per method of ``methods`` the sweep ran, its configuration best on the selection
    metric (mean over seeds): the one the paper would have drawn."""
    trials, selection_metric = analysis.trials, analysis.selection.metric
    runs = trials[trials["method"].isin(methods)]
    if runs.empty or selection_metric not in trials.columns:
        return {}
    return {
        method: own.groupby("config_key")[selection_metric].mean().idxmax()
        for method, own in runs.groupby("method", sort=True)
    }


def distance_plots(out: Path, analysis: SweepAnalysis) -> list[str]:
    """huang2021 Fig. 2 for a robust sweep: per robust method, its configuration best on the
    selection metric (mean over seeds), its per-language test gain over the baseline (mean
    over seeds, points) against the language's distance from English, with the
    least-squares line (``analysis.plots.fit_gain_against_distance``)."""
    best_configs = best_per_method(analysis, ROBUST_METHODS)
    if not best_configs:
        return []
    _, _, metric = parse_metric_key(analysis.selection.metric)
    scores = analysis.seed_means
    test = scores[(scores["split"] == TEST_SPLIT) & (scores["metric"] == metric)]
    baseline = test[test["config_key"] == analysis.baseline_key].set_index("lang")["mean"]
    distances = load_language_distances()
    paths = []
    for method, best in best_configs.items():
        system = test[test["config_key"] == best].set_index("lang")["mean"]
        fit = fit_gain_against_distance((100 * (system - baseline)).dropna().to_dict(), distances)
        if fit is not None:
            label = _label(analysis, best)
            title = f"{label} minus baseline, test {metric} (as huang2021 Fig. 2)"
            paths.append(
                plot_gain_against_distance(fit, out / DISTANCE_PLOT.format(method=method), title)
            )
    return paths


def draw_report_plots(
    analysis: SweepAnalysis, out: Path, probing: ProbingStages | None = None
) -> list[str]:
    """Every plot this sweep has data for, drawn into ``out`` (``probing``: the distances of
    an adjustment sweep's model states, when its trials logged them); returns the files
    written."""
    selection = analysis.selection
    paths = [
        plot_gains(
            comparison,
            out / GAINS_PLOT.format(split=split),
            f"{selection.config_label} vs baseline ({split})",
        )
        for split, comparison in analysis.comparisons.items()
    ]
    _, _, metric = parse_metric_key(selection.metric)
    differences = pair_differences(analysis, metric, selection.config_key)
    if not differences.empty:
        paths.append(
            plot_transfer_heatmap(
                differences,
                out / HEATMAP_PLOT,
                f"{selection.config_label}\nminus baseline, test {metric}",
            )
        )
    paths += method_heatmaps(out, analysis, metric)
    paths += response_plots(out, analysis.trials, selection.metric, analysis.baseline_key)
    paths += language_response_plot(out, analysis.trials, metric)
    paths += distance_plots(out, analysis)
    paths += probing_stages_figure(probing, out)
    return paths + published_grid_plots(analysis.reproduction, out)


def _label(analysis: SweepAnalysis, config_key: str) -> str:
    trials = analysis.trials
    return trials.loc[trials["config_key"] == config_key, "config_label"].iloc[0]


def method_heatmaps(out: Path, analysis: SweepAnalysis, metric: str) -> list[str]:
    """huang2021 Figs. 4-5: for RS-RP and RS-DA, the generalized grid of the configuration
    best on the selection metric minus the baseline (each method's own, not only the
    selection's)."""
    paths = []
    for method, best in best_per_method(analysis, GRID_FIGURE_METHODS).items():
        differences = pair_differences(analysis, metric, best)
        if not differences.empty:
            title = (
                f"{_label(analysis, best)}\nminus baseline, test {metric} (as huang2021 Figs. 4-5)"
            )
            path = out / METHOD_HEATMAP_PLOT.format(method=method)
            paths.append(plot_transfer_heatmap(differences, path, title))
    return paths


def language_responses(trials: pd.DataFrame, metric: str) -> tuple[pd.DataFrame, list[str]]:
    """Per configuration and test language, the mean over seeds of ``metric`` with the
    configuration's hyperparameters (``response_points``' axes), and the varied axes."""
    frames, varied = [], []
    for lang in split_languages(trials, TEST_SPLIT):
        column = f"{TEST_SPLIT}/{lang}/{metric}"
        if column not in trials.columns:
            continue
        points, varied = response_points(trials, column)
        means = points.groupby(trials["config_key"].to_numpy(), sort=False).mean()
        frames.append(means.assign(lang=lang))
    if not frames or not varied:
        return pd.DataFrame(columns=["lang", "value"]), []
    return pd.concat(frames, ignore_index=True), varied


def language_response_plot(out: Path, trials: pd.DataFrame, metric: str) -> list[str]:
    """ding2022 Fig. 6: each test language's metric against each varied hyperparameter."""
    means, varied = language_responses(trials, metric)
    if not varied:
        return []
    return [
        plot_response_per_language(means, varied, f"test {metric}", out / LANGUAGE_RESPONSE_PLOT)
    ]


def response_plots(
    out: Path, trials: pd.DataFrame, selection_metric: str, baseline_key: str
) -> list[str]:
    """The response to each varied hyperparameter of the dev metric that selects, and of
    the test average over languages (huang2021 Fig. 3 draws that against m)."""
    _, _, metric = parse_metric_key(selection_metric)
    responses = [(selection_metric, RESPONSE_PLOT)]
    test_languages = split_languages(trials, TEST_SPLIT)
    test_columns = [f"{TEST_SPLIT}/{lang}/{metric}" for lang in test_languages]
    if test_columns and all(column in trials.columns for column in test_columns):
        average = f"{TEST_SPLIT}/average of {len(test_columns)} languages/{metric}"
        trials = trials.assign(**{average: trials[test_columns].mean(axis=1)})
        responses.append((average, TEST_RESPONSE_PLOT))
    paths = []
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
    return paths


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
