"""Per configuration, the mean and the standard deviation over seeds of the selection metric
and of every test language, as metrics on the parent run: MLflow's runs table cannot
aggregate child runs, so the sweep's own row carries them (`seeds/<configuration>/...`)."""

from __future__ import annotations

import re

import pandas as pd

from analysis.select import TEST_SPLIT
from xlt_schema import parse_metric_key

PREFIX = "seeds"
# What MLflow allows in a metric name; a configuration label's `=` becomes `:`.
_NOT_ALLOWED = re.compile(r"[^\w.\- :/]")


def metric_label(config_label: str) -> str:
    """`ear alpha=1 beta=0.1` -> `ear alpha:1 beta:0.1`, a valid part of a metric name."""
    return _NOT_ALLOWED.sub("_", config_label.replace("=", ":"))


def seed_summary_metrics(seed_means: pd.DataFrame, selection_metric: str) -> dict[str, float]:
    """`seeds/<label>/<split>/<lang>/<metric>/mean` (and `/std` with two or more seeds) for
    the selection metric and, in the same metric, every test language; `seed_means` is
    analysis.select.aggregate_over_seeds' frame."""
    split, lang, metric = parse_metric_key(selection_metric)
    wanted = (seed_means["metric"] == metric) & (
        (seed_means["split"] == TEST_SPLIT)
        | ((seed_means["split"] == split) & (seed_means["lang"] == lang))
    )
    metrics = {}
    for row in seed_means[wanted].itertuples(index=False):
        key = f"{PREFIX}/{metric_label(row.config_label)}/{row.split}/{row.lang}/{row.metric}"
        metrics[f"{key}/mean"] = float(row.mean)
        if row.n_seeds >= 2:
            metrics[f"{key}/std"] = float(row.std)
    return metrics
