"""The trials table and its long form, as every analysis module reads them: the identity
and setting columns, the metric columns (``<split>/<lang>/<metric>``), their splits and
languages, and :class:`AnalysisError`. Pure: the reading layer (:mod:`analysis.collect`)
builds the tables from MLflow's runs; nothing here touches the tracking server."""

import math

import pandas as pd

from xlt_schema import PREDICTIONS_DIR, example_scores_key, parse_metric_key

SOURCE_LANGUAGE = "en"

# Columns that identify a trial; every other non-metric column is a setting (a param).
IDENTITY_COLUMNS = ("run_id", "config_key", "config_label", "method", "adaptation", "seed")
TIDY_COLUMNS = (*IDENTITY_COLUMNS, "split", "lang", "metric", "value")
# The names of the run's own hyperparameters (a tuple; its method's and its adaptation's).
HYPERPARAMETERS_COLUMN = "hyperparameters"
_NOT_SET = "none"  # how the sweep logs a setting that does not apply to the run


class AnalysisError(ValueError):
    """The tracking server does not hold what the analysis needs; the message says what is
    missing."""


def param_value(text: str):
    """A logged param string back as int or float when it looks numeric.

    ``none`` reads None: sweeps of 0.2.0 logged unset settings and other methods'
    hyperparameters so (now they log no param for them: a missing column is not applicable)."""
    if text.lower() == _NOT_SET:
        return None
    for convert in (int, float):
        try:
            value = convert(text)
        except ValueError:
            continue
        if math.isfinite(value):
            return value
    return text


def metric_columns(trials: pd.DataFrame) -> list[str]:
    """The evaluation metric columns of a trials table."""
    return [column for column in trials.columns if parse_metric_key(column) is not None]


def hyperparameter_columns(trials: pd.DataFrame) -> list[str]:
    """The setting columns of a trials table: every param but the identity columns (method,
    adaptation, seed). The run's own hyperparameters among them are in
    ``HYPERPARAMETERS_COLUMN`` (see :func:`recorded_hyperparameters`)."""
    metrics = set(metric_columns(trials))
    skip = {*IDENTITY_COLUMNS, HYPERPARAMETERS_COLUMN, *metrics}
    return [column for column in trials.columns if column not in skip]


def run_hyperparameters(trials: pd.DataFrame) -> pd.Series:
    """Per row, the names of that run's own hyperparameters, as the sweep recorded them
    (tag ``xlt.hyperparameters``). Empty for runs of older sweeps, which did not record
    them: analysis then treats none of their columns as hyperparameters."""
    if HYPERPARAMETERS_COLUMN not in trials.columns:
        return pd.Series([()] * len(trials), index=trials.index, dtype=object)
    return trials[HYPERPARAMETERS_COLUMN].map(lambda names: tuple(names) if names else ())


def recorded_hyperparameters(trials: pd.DataFrame) -> list[str]:
    """The union of the runs' recorded hyperparameters, in the order they first appear
    (e.g. ``alpha, beta, layer, m`` for an EAR sweep, plus ``epsilon, adv_steps,
    adv_step_scale`` when it also ran ADV). Empty when no run recorded any."""
    names: dict[str, None] = {}
    for run_names in run_hyperparameters(trials):
        names.update(dict.fromkeys(run_names))
    return list(names)


def split_languages(trials: pd.DataFrame, split: str, pairs: bool = False) -> list[str]:
    """Languages with a metric on ``split``: the source language first, then alphabetical.

    Single languages by default; with ``pairs`` only the generalized-evaluation pairs
    (``en-es``: first sentence in English, second in Spanish).
    """
    keys = (parse_metric_key(column) for column in metric_columns(trials))
    languages = {
        lang
        for key_split, lang, _ in keys
        if key_split == split and is_language_pair(lang) == pairs
    }
    return sorted(languages, key=lambda lang: (lang != SOURCE_LANGUAGE, lang))


def metric_splits(trials: pd.DataFrame) -> list[str]:
    """Evaluation splits with a logged metric: dev, test, then others (e.g. mixed)
    alphabetically."""
    order = {"dev": 0, "test": 1}
    splits = {parse_metric_key(column)[0] for column in metric_columns(trials)}
    return sorted(splits, key=lambda split: (order.get(split, 2), split))


DEV_SPLIT = "dev"


def evaluation_splits(trials: pd.DataFrame) -> list[str]:
    """The splits a report tests the selection on: every split but dev (which selects) on
    which some trial logged a single language."""
    return [
        split
        for split in metric_splits(trials)
        if split != DEV_SPLIT and split_languages(trials, split)
    ]


def tidy_metrics(trials: pd.DataFrame) -> pd.DataFrame:
    """Long form of the evaluation metrics: one row per (run, split, lang, metric)."""
    long = trials.melt(
        id_vars=list(IDENTITY_COLUMNS),
        value_vars=metric_columns(trials),
        var_name="key",
        value_name="value",
    ).dropna(subset=["value"])
    parts = long["key"].str.split("/", expand=True).reindex(columns=range(3))
    long = long.assign(
        split=parts[0], lang=parts[1], metric=parts[2], value=long["value"].astype(float)
    )
    return long[list(TIDY_COLUMNS)].reset_index(drop=True)


def example_artifact(split: str, lang: str) -> str:
    """The per-example artifact of ``split``/``lang``, e.g. ``predictions/test-en-es.json``."""
    return f"{PREDICTIONS_DIR}/{example_scores_key(split, lang)}.json"


def is_language_pair(lang: str) -> bool:
    """True for a generalized-evaluation pair such as ``en-es`` (first sentence's language
    first)."""
    return "-" in lang
