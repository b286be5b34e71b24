"""Read a finished sweep back from MLflow: its parent run, its trial runs and their scores.

This is the only module of ``analysis`` that talks to the tracking server; everything
downstream works on the pandas/numpy objects returned here.
"""

import json
import re
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from mlflow import MlflowClient
from mlflow.entities import Run
from mlflow.exceptions import MlflowException

ROLE_TAG = "xlt.role"
PARENT_ROLE = "parent"
TRIAL_ROLE = "trial"
PARENT_RUN_TAG = "mlflow.parentRunId"
PHASE_TAG = "phase"
# Set on the parent of a two-phase search: only that phase's trials are its results.
REPORT_PHASE_TAG = "xlt.report_phase"
SOURCE_LANGUAGE = "en"

# Columns that identify a trial; every other non-metric column is a hyperparameter.
IDENTITY_COLUMNS = ("run_id", "config_key", "config_label", "method", "seed")
TIDY_COLUMNS = (*IDENTITY_COLUMNS, "split", "lang", "metric", "value")

# Evaluation metrics are logged as <split>/<lang>/<metric>; training curves are not results.
_METRIC_KEY = re.compile(r"^(?P<split>[^/]+)/(?P<lang>[^/]+)/(?P<metric>[^/]+)$")
_TRAINING_SPLIT = "train"
_SQLITE_PREFIX = "sqlite:///"


class AnalysisError(ValueError):
    """The tracking server does not hold what the analysis needs; the message says what is missing."""


def connect(tracking_uri: str) -> MlflowClient:
    """Return a client for ``tracking_uri``, refusing a sqlite file that does not exist.

    MLflow would silently create an empty database, which turns a typo into a confusing
    "unknown experiment" error.
    """
    if tracking_uri.startswith(_SQLITE_PREFIX):
        database = Path(tracking_uri[len(_SQLITE_PREFIX) :])
        if not database.is_file():
            raise AnalysisError(f"no MLflow database at {database} (tracking URI {tracking_uri})")
    return MlflowClient(tracking_uri=tracking_uri)


def parse_metric_key(key: str) -> tuple[str, str, str] | None:
    """Split an evaluation metric key ``<split>/<lang>/<metric>``; None for anything else."""
    match = _METRIC_KEY.match(key)
    if match is None or match["split"] == _TRAINING_SPLIT:
        return None
    return match["split"], match["lang"], match["metric"]


def metric_columns(trials: pd.DataFrame) -> list[str]:
    """The evaluation metric columns of a trials table."""
    return [column for column in trials.columns if parse_metric_key(column) is not None]


def hyperparameter_columns(trials: pd.DataFrame) -> list[str]:
    """The hyperparameter columns of a trials table (params other than method and seed)."""
    metrics = set(metric_columns(trials))
    return [c for c in trials.columns if c not in IDENTITY_COLUMNS and c not in metrics]


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


def _search_all_runs(
    client: MlflowClient, experiment_id: str, filter_string: str, order_by: list[str] | None = None
) -> list[Run]:
    """All runs matching the filter, following MLflow's pagination."""
    runs, page_token = [], None
    while True:
        page = client.search_runs(
            [experiment_id], filter_string=filter_string, order_by=order_by, page_token=page_token
        )
        runs.extend(page)
        page_token = page.token
        if not page_token:
            return runs


def _finished_trials_filter(parent_run_id: str) -> str:
    return (
        f"tags.`{PARENT_RUN_TAG}` = '{parent_run_id}' "
        f"and tags.`{ROLE_TAG}` = '{TRIAL_ROLE}' and attributes.status = 'FINISHED'"
    )


def _has_finished_trials(client: MlflowClient, parent: Run) -> bool:
    page = client.search_runs(
        [parent.info.experiment_id],
        max_results=1,
        filter_string=_finished_trials_filter(parent.info.run_id),
    )
    return len(page) > 0


def _get_experiment_id(client: MlflowClient, experiment_name: str) -> str:
    experiment = client.get_experiment_by_name(experiment_name)
    if experiment is None:
        existing = sorted(e.name for e in client.search_experiments())
        raise AnalysisError(
            f"unknown experiment {experiment_name!r}; existing experiments: "
            f"{', '.join(existing) or '(none)'}"
        )
    return experiment.experiment_id


def _get_parent_run(
    client: MlflowClient, experiment_id: str, experiment_name: str, parent_run_id: str
) -> Run:
    try:
        run = client.get_run(parent_run_id)
    except MlflowException as error:
        raise AnalysisError(f"no run with id {parent_run_id!r} on the tracking server") from error
    if run.info.experiment_id != experiment_id:
        raise AnalysisError(
            f"run {parent_run_id} does not belong to experiment {experiment_name!r}"
        )
    role = run.data.tags.get(ROLE_TAG)
    if role != PARENT_ROLE:
        raise AnalysisError(
            f"run {parent_run_id} is not a sweep parent run "
            f"(tag {ROLE_TAG}={role!r}, expected {PARENT_ROLE!r})"
        )
    return run


def find_parent_run(
    client: MlflowClient, experiment_name: str, parent_run_id: str | None = None
) -> Run:
    """The sweep's parent run: ``parent_run_id`` if given, else the newest one with finished trials."""
    experiment_id = _get_experiment_id(client, experiment_name)
    if parent_run_id is not None:
        return _get_parent_run(client, experiment_id, experiment_name, parent_run_id)
    parents = _search_all_runs(
        client,
        experiment_id,
        f"tags.`{ROLE_TAG}` = '{PARENT_ROLE}'",
        order_by=["attributes.start_time DESC"],
    )
    if not parents:
        raise AnalysisError(
            f"experiment {experiment_name!r} has no sweep parent runs "
            f"(tag {ROLE_TAG}={PARENT_ROLE!r})"
        )
    for parent in parents:
        if _has_finished_trials(client, parent):
            return parent
    raise AnalysisError(
        f"none of the {len(parents)} parent runs in experiment "
        f"{experiment_name!r} has a finished trial run"
    )


def _trial_row(run: Run) -> dict:
    """One trials-table row: identity, hyperparameters (as logged strings) and evaluation metrics."""
    run_id, tags, params = run.info.run_id, run.data.tags, run.data.params
    missing = [tag for tag in ("config_key", "config_label", "method") if tag not in tags]
    if missing:
        raise AnalysisError(f"trial run {run_id} lacks tag(s) {', '.join(missing)}")
    try:
        seed = int(params["seed"])
    except (KeyError, ValueError) as error:
        raise AnalysisError(
            f"trial run {run_id} has no integer 'seed' param (got {params.get('seed')!r})"
        ) from error
    row = {
        "run_id": run_id,
        "config_key": tags["config_key"],
        "config_label": tags["config_label"],
        "method": tags["method"],
        "seed": seed,
    }
    row.update({name: value for name, value in sorted(params.items()) if name not in row})
    row.update(
        {
            key: value
            for key, value in sorted(run.data.metrics.items())
            if parse_metric_key(key) is not None
        }
    )
    return row


def collect_trials(
    client: MlflowClient, parent_run_id: str, phase: str | None = None
) -> pd.DataFrame:
    """One row per finished trial of the sweep: identity columns, params, evaluation metrics.

    Only the trials tagged ``phase`` when given, else those of the parent's
    ``xlt.report_phase`` tag when it has one (a two-phase search reports its final phase,
    never the one-seed search phase), else every trial.
    """
    parent = client.get_run(parent_run_id)
    phase = phase or parent.data.tags.get(REPORT_PHASE_TAG)
    filter_string = _finished_trials_filter(parent_run_id)
    if phase:
        filter_string += f" and tags.`{PHASE_TAG}` = '{phase}'"
    runs = _search_all_runs(client, parent.info.experiment_id, filter_string)
    if not runs:
        where = f" in phase {phase!r}" if phase else ""
        raise AnalysisError(f"parent run {parent_run_id} has no finished trial runs{where}")
    trials = pd.DataFrame([_trial_row(run) for run in runs])
    return trials.sort_values(["config_label", "seed", "run_id"], ignore_index=True)


def metric_splits(trials: pd.DataFrame) -> list[str]:
    """Evaluation splits with a logged metric: dev, test, then others (e.g. mixed) alphabetically."""
    order = {"dev": 0, "test": 1}
    splits = {parse_metric_key(column)[0] for column in metric_columns(trials)}
    return sorted(splits, key=lambda split: (order.get(split, 2), split))


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
    return f"predictions/{split}-{lang}.json"


def is_language_pair(lang: str) -> bool:
    """True for a generalized-evaluation pair such as ``en-es`` (first sentence's language first)."""
    return "-" in lang


class ExampleScores:
    """Per-example artifacts of trial runs, downloaded once each and kept in memory.

    An artifact holds ``scores`` (one number per example, in the data's order) and may
    hold ``counts`` (one list of k counts per example, e.g. NER's [tp, fp, fn]) with the
    ``metric`` they make up (e.g. ``f1``).
    """

    def __init__(self, client: MlflowClient):
        self.client = client
        self._payloads: dict[tuple[str, str], dict] = {}

    def payload(self, run_id: str, split: str, lang: str) -> dict:
        artifact = example_artifact(split, lang)
        if (run_id, artifact) not in self._payloads:
            self._payloads[run_id, artifact] = self._download(run_id, artifact)
        return self._payloads[run_id, artifact]

    def _download(self, run_id: str, artifact: str) -> dict:
        with tempfile.TemporaryDirectory() as download_dir:
            try:
                local_path = self.client.download_artifacts(run_id, artifact, dst_path=download_dir)
            except (MlflowException, OSError) as error:
                raise AnalysisError(f"run {run_id} has no artifact {artifact}") from error
            with open(local_path, encoding="utf-8") as handle:
                content = json.load(handle)
        if "scores" not in content:
            raise AnalysisError(f"artifact {artifact} of run {run_id} has no 'scores' list")
        return content

    def _stack(self, run_ids: list[str], split: str, lang: str, field: str) -> np.ndarray:
        if not run_ids:
            raise AnalysisError(f"no runs given to load {split}/{lang} {field} from")
        values = [self.payload(run_id, split, lang)[field] for run_id in run_ids]
        lengths = {run_id: len(run_values) for run_id, run_values in zip(run_ids, values)}
        if len(set(lengths.values())) > 1:
            listing = ", ".join(f"{run_id}: {length}" for run_id, length in lengths.items())
            raise AnalysisError(
                f"{example_artifact(split, lang)} holds a different number of "
                f"examples per run ({listing}); runs can only be paired on the "
                "same examples"
            )
        try:
            return np.asarray(values, dtype=float)
        except ValueError as error:
            raise AnalysisError(
                f"{example_artifact(split, lang)}: '{field}' must hold the same "
                f"number of values for every example ({error})"
            ) from error

    def scores(self, run_ids: list[str], split: str, lang: str) -> np.ndarray:
        """Per-example scores of each run, shaped (len(run_ids), n_examples)."""
        return self._stack(run_ids, split, lang, "scores")

    def counts(self, run_ids: list[str], split: str, lang: str) -> tuple[np.ndarray, str] | None:
        """Per-example counts shaped (runs, examples, k) and their metric, or None when
        any run's artifact has no ``counts``."""
        payloads = [self.payload(run_id, split, lang) for run_id in run_ids]
        if not all("counts" in payload for payload in payloads):
            return None
        metrics = {payload.get("metric") for payload in payloads}
        if len(metrics) != 1:
            raise AnalysisError(
                f"{example_artifact(split, lang)} declares different metrics "
                f"per run: {sorted(map(str, metrics))}"
            )
        counts = self._stack(run_ids, split, lang, "counts")
        if counts.ndim != 3:
            raise AnalysisError(
                f"{example_artifact(split, lang)}: 'counts' must be one list of "
                f"counts per example; got shape {counts.shape[1:]}"
            )
        return counts, metrics.pop()


def load_example_scores(
    client: MlflowClient, run_ids: list[str], split: str, lang: str
) -> np.ndarray:
    """Per-example scores of each run on ``split``/``lang``, shaped (len(run_ids), n_examples)."""
    return ExampleScores(client).scores(run_ids, split, lang)
