"""Aggregate trials over seeds, pick the best configuration on dev, and test it against the baseline."""

import math
from dataclasses import asdict, dataclass

import pandas as pd
from mlflow import MlflowClient

from analysis.collect import (AnalysisError, hyperparameter_columns, load_example_scores,
                              metric_columns, parse_metric_key, split_languages, tidy_metrics)
from analysis.stats import paired_ttest

DEFAULT_SELECTION_METRIC = "dev/en/accuracy"
DEFAULT_BASELINE_METHOD = "finetune"
TEST_SPLIT = "test"
CONFIG_COLUMNS = ["config_key", "config_label", "method"]
# Means and stds equal to this many decimals count as tied, so float noise
# ((0.8 + 0.9) / 2 != 0.85) cannot decide ahead of the stated tie-breakers.
_TIE_DECIMALS = 12


@dataclass(frozen=True)
class Selection:
    """The chosen configuration and the evidence it was chosen on."""

    config_key: str
    config_label: str
    method: str
    params: dict
    metric: str
    mean: float
    std: float  # NaN with a single seed
    n_seeds: int
    run_ids: tuple[str, ...]


def aggregate_over_seeds(tidy: pd.DataFrame) -> pd.DataFrame:
    """Mean, sample std and seed count of every metric per configuration."""
    grouped = tidy.groupby([*CONFIG_COLUMNS, "split", "lang", "metric"], sort=True)
    return grouped.agg(mean=("value", "mean"), std=("value", "std"),
                       n_seeds=("seed", "nunique")).reset_index()


def _param_value(text: str):
    """A logged param string back as int or float when it looks numeric.

    The sweep logs unset settings and other methods' hyperparameters as ``none``: None.
    """
    if text.lower() == "none":
        return None
    for convert in (int, float):
        try:
            value = convert(text)
        except ValueError:
            continue
        if math.isfinite(value):
            return value
    return text


def _validate_selection_metric(trials: pd.DataFrame, metric: str) -> tuple[str, str, str]:
    key = parse_metric_key(metric)
    if key is None:
        raise AnalysisError(f"selection metric {metric!r} is not of the form <split>/<lang>/<metric>")
    if key[0] == TEST_SPLIT:
        raise AnalysisError(f"selection metric {metric!r} is on the test split; select on a dev "
                            "split so the test scores stay an unbiased estimate")
    if metric not in trials.columns:
        raise AnalysisError(f"no finished trial logged {metric!r}; logged metrics: "
                            f"{', '.join(metric_columns(trials)) or '(none)'}")
    return key


def select_best(trials: pd.DataFrame, metric: str = DEFAULT_SELECTION_METRIC,
                baseline_method: str = DEFAULT_BASELINE_METHOD) -> Selection:
    """Best non-baseline configuration by mean ``metric`` over seeds.

    Ties go to the lower std over seeds, then to the alphabetically first config_label.
    When only the baseline finished, the baseline is selected.
    """
    split, lang, name = _validate_selection_metric(trials, metric)
    candidates = trials[trials["method"] != baseline_method]
    if candidates.empty:
        candidates = trials
    scores = aggregate_over_seeds(tidy_metrics(candidates))
    scores = scores[(scores["split"] == split) & (scores["lang"] == lang) & (scores["metric"] == name)]
    ranked = scores.assign(rank_mean=scores["mean"].round(_TIE_DECIMALS),
                           rank_std=scores["std"].round(_TIE_DECIMALS)).sort_values(
        ["rank_mean", "rank_std", "config_label"], ascending=[False, True, True], na_position="last")
    if ranked.empty:
        raise AnalysisError(f"no candidate configuration has a value for {metric!r}")
    best = ranked.iloc[0]

    runs = trials[trials["config_key"] == best["config_key"]].sort_values("seed")
    first_run = runs.iloc[0]  # runs of one config_key share every hyperparameter
    params = {column: _param_value(first_run[column]) for column in hyperparameter_columns(trials)
              if pd.notna(first_run[column])}
    return Selection(config_key=best["config_key"], config_label=best["config_label"],
                     method=best["method"], params=params, metric=metric,
                     mean=float(best["mean"]), std=float(best["std"]),
                     n_seeds=int(best["n_seeds"]), run_ids=tuple(runs["run_id"]))


def baseline_config_key(trials: pd.DataFrame, baseline_method: str = DEFAULT_BASELINE_METHOD) -> str:
    """The config_key of the single baseline configuration of the sweep."""
    baseline = trials[trials["method"] == baseline_method]
    if baseline.empty:
        methods = ", ".join(sorted(trials["method"].unique()))
        raise AnalysisError(f"the sweep has no finished baseline runs (method {baseline_method!r}); "
                            f"methods with finished runs: {methods}")
    labels = sorted(baseline["config_label"].unique())
    if len(labels) > 1 or baseline["config_key"].nunique() > 1:
        raise AnalysisError(f"baseline method {baseline_method!r} has several configurations "
                            f"({', '.join(labels)}); expected exactly one to compare against")
    return baseline["config_key"].iloc[0]


def _run_ids_by_seed(trials: pd.DataFrame, config_key: str) -> dict[int, str]:
    runs = trials[trials["config_key"] == config_key]
    if runs.empty:
        raise AnalysisError(f"no finished trial has config_key {config_key!r}")
    repeated = sorted(set(runs.loc[runs["seed"].duplicated(), "seed"].tolist()))
    if repeated:
        raise AnalysisError(f"config {runs['config_label'].iloc[0]!r} has several finished runs "
                            f"for seed(s) {repeated}; cannot pair runs by seed")
    return dict(zip(runs["seed"].tolist(), runs["run_id"]))


def compare_to_baseline(client: MlflowClient, trials: pd.DataFrame, config_key: str,
                        split: str = TEST_SPLIT,
                        baseline_method: str = DEFAULT_BASELINE_METHOD) -> pd.DataFrame:
    """Per language of ``split``: the configuration vs the baseline on the seeds both ran.

    Columns: lang, system_mean, baseline_mean (mean per-example score over examples and
    seeds), then the fields of :class:`analysis.stats.PairedTestResult`.
    """
    system_runs = _run_ids_by_seed(trials, config_key)
    baseline_runs = _run_ids_by_seed(trials, baseline_config_key(trials, baseline_method))
    seeds = sorted(system_runs.keys() & baseline_runs.keys())
    if not seeds:
        raise AnalysisError(f"config {config_key!r} (seeds {sorted(system_runs)}) and the baseline "
                            f"(seeds {sorted(baseline_runs)}) share no seed to pair runs on")
    languages = split_languages(trials, split)
    if not languages:
        raise AnalysisError(f"no finished trial logged a metric on the {split!r} split")

    rows = []
    for lang in languages:
        system = load_example_scores(client, [system_runs[seed] for seed in seeds], split, lang)
        baseline = load_example_scores(client, [baseline_runs[seed] for seed in seeds], split, lang)
        result = paired_ttest(system, baseline)
        rows.append({"lang": lang, "system_mean": float(system.mean()),
                     "baseline_mean": float(baseline.mean()), **asdict(result)})
    return pd.DataFrame(rows)
