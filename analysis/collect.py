"""Read a finished sweep back from MLflow: its parent run, its trial runs and their scores.

Part of the reading layer (``analysis.READING_LAYER``): everything downstream works on the
plain objects returned here: the trials table (:mod:`analysis.frames`), the parent run
(:class:`~analysis.sweep_parent.SweepParent`) and the per-example scores
(:class:`~analysis.example_scores.PerExampleScores`, which :class:`ExampleScores` loads).
"""

import array
import json
import logging
import os
import tempfile
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import orjson
import pandas as pd
from mlflow import MlflowClient
from mlflow.entities import Run
from mlflow.environment_variables import MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR
from mlflow.exceptions import MlflowException
from mlflow.store.artifact.artifact_repository_registry import get_artifact_repository
from mlflow.store.artifact.local_artifact_repo import LocalArtifactRepository

from analysis.example_scores import PerExampleScores
from analysis.frames import HYPERPARAMETERS_COLUMN, AnalysisError, example_artifact
from analysis.sweep_parent import SweepParent
from xlt_schema import (
    ADAPTATION_TAG,
    CONFIG_KEY_TAG,
    CONFIG_LABEL_TAG,
    CONFIRM_PHASE,
    HYPERPARAMETERS_TAG,
    METHOD_TAG,
    NO_ADAPTATION,
    PARENT_ROLE,
    PARENT_RUN_TAG,
    PHASE_TAG,
    PREDICTIONS_DIR,
    PROBING_DISTANCES,
    REPORT_PHASE_TAG,
    ROLE_TAG,
    TRIAL_ROLE,
    parse_metric_key,
)
from xlt_schema.log import progress_due
from xlt_schema.tracking_store import sqlite_problem, take_credentials

logger = logging.getLogger(__name__)

# The identity columns read from the trial run's tags, and each one's tag.
_TAG_COLUMNS = {
    "config_key": CONFIG_KEY_TAG,
    "config_label": CONFIG_LABEL_TAG,
    "method": METHOD_TAG,
}
_SQLITE_PREFIX = "sqlite:///"
# Per-example fields kept packed in memory (analysis.sanity reads them, on one split).
COMPACT_FIELDS = ("predictions", "labels")
# Runs whose predictions folders are downloaded at once from a remote artifact store.
DOWNLOAD_THREADS = 8
# MLflow's switch for its download progress bars.
PROGRESS_BAR_VARIABLE = MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR.name


def connect(tracking_uri: str) -> MlflowClient:
    """Return a client for ``tracking_uri``, refusing a sqlite file that does not exist.

    MLflow would silently create an empty database, which turns a typo into a confusing
    "unknown experiment" error. The model registry is the one of the same server: the URI
    is passed for both, so neither depends on ``MLFLOW_*`` environment variables or on
    MLflow's process-wide settings.
    """
    if tracking_uri.startswith(_SQLITE_PREFIX):
        database = Path(tracking_uri[len(_SQLITE_PREFIX) :])
        if not database.is_file():
            raise AnalysisError(f"no MLflow database at {database} (tracking URI {tracking_uri})")
        # A damaged file would fail deep in MLflow's SQLAlchemy calls, with a traceback.
        problem = sqlite_problem(database)
        if problem is not None:
            raise AnalysisError(f"the MLflow database {database} {problem}")
    # A server's user:password leave the URI for MLflow's variables: no error message,
    # report or log line made from the URI carries them.
    tracking_uri = take_credentials(tracking_uri)
    return MlflowClient(tracking_uri=tracking_uri, registry_uri=tracking_uri)


def _parse_hyperparameters_tag(value: str | None) -> tuple[str, ...]:
    """The names in a ``xlt.hyperparameters`` tag (comma-separated; "" or absent: none)."""
    if not value:
        return ()
    return tuple(name.strip() for name in value.split(",") if name.strip())


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
    """The sweep's parent run: ``parent_run_id`` if given, else the newest one with finished
    trials."""
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


def sweep_parent(run: Run) -> SweepParent:
    """The parent run ``run`` as the plain data the analysis computes on."""
    return SweepParent(
        run_id=run.info.run_id,
        experiment_id=run.info.experiment_id,
        status=run.info.status,
        end_time=run.info.end_time,
        params=dict(run.data.params),
        tags=dict(run.data.tags),
    )


def _trial_row(run: Run) -> dict:
    """One trials-table row: identity, the run's recorded hyperparameter names, settings (as
    logged strings) and evaluation metrics.

    A run without the ``adaptation`` tag (from a sweep older than the tag) is read as
    ``none``; one without ``xlt.hyperparameters`` as having no recorded hyperparameters.
    """
    run_id, tags, params = run.info.run_id, run.data.tags, run.data.params
    missing = [tag for tag in _TAG_COLUMNS.values() if tag not in tags]
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
        **{column: tags[tag] for column, tag in _TAG_COLUMNS.items()},
        "adaptation": tags.get(ADAPTATION_TAG, NO_ADAPTATION),
        "seed": seed,
        HYPERPARAMETERS_COLUMN: _parse_hyperparameters_tag(tags.get(HYPERPARAMETERS_TAG)),
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


def finished_trial_runs(
    client: MlflowClient, parent_run_id: str, phase: str | None = None
) -> list[Run]:
    """The sweep's finished trial runs, in one search: only those tagged ``phase`` when
    given, else those of the parent's ``xlt.report_phase`` tag when it has one (a two-phase
    search reports its final phase, never the one-seed search phase), else every trial but
    the confirmation phase's (:func:`confirmation_runs`: they take no part in the selection)."""
    parent = client.get_run(parent_run_id)
    phase = phase or parent.data.tags.get(REPORT_PHASE_TAG)
    runs = _phase_runs(client, parent, phase)
    if not runs:
        where = f" in phase {phase!r}" if phase else ""
        raise AnalysisError(f"parent run {parent_run_id} has no finished trial runs{where}")
    return runs


def _phase_runs(client: MlflowClient, parent: Run, phase: str | None) -> list[Run]:
    filter_string = _finished_trials_filter(parent.info.run_id)
    if phase:
        filter_string += f" and tags.`{PHASE_TAG}` = '{phase}'"
    runs = _search_all_runs(client, parent.info.experiment_id, filter_string)
    if phase:
        return runs
    return [run for run in runs if run.data.tags.get(PHASE_TAG) != CONFIRM_PHASE]


def confirmation_runs(client: MlflowClient, parent_run_id: str) -> list[Run]:
    """The finished trial runs of the sweep's confirmation phase (the selected configuration
    and the baseline on fresh seeds: sweeps/running/confirmation.py); [] when it has none."""
    return _phase_runs(client, client.get_run(parent_run_id), CONFIRM_PHASE)


def trials_table(runs: list[Run]) -> pd.DataFrame:
    """One row per run: identity columns, params, evaluation metrics (see
    :func:`collect_trials`)."""
    trials = pd.DataFrame([_trial_row(run) for run in runs])
    return trials.sort_values(["config_label", "seed", "run_id"], ignore_index=True)


def collect_trials(
    client: MlflowClient, parent_run_id: str, phase: str | None = None
) -> pd.DataFrame:
    """One row per finished trial of the sweep (:func:`finished_trial_runs`): identity
    columns, params, evaluation metrics."""
    return trials_table(finished_trial_runs(client, parent_run_id, phase))


class ExampleScores(PerExampleScores):
    """Per-example scores read from the trial runs' ``predictions/`` artifacts, each file
    read once, when a computation first asks for it (see
    :class:`~analysis.example_scores.PerExampleScores`).

    ``artifact_uris`` (run id -> the run's artifact URI, as a search returned it) spares a
    ``get_run`` per run; the predictions folders of every run named there are fetched
    together, in threads, when the first is needed.
    """

    def __init__(self, client: MlflowClient, artifact_uris: Mapping[str, str] | None = None):
        super().__init__()
        self.client = client
        self._artifact_uris = dict(artifact_uris or {})
        self._folders: dict[str, Path | AnalysisError] = {}
        self._scratch = tempfile.TemporaryDirectory(prefix="xlt-scores-")

    def load_payload(self, run_id: str, split: str, lang: str) -> dict:
        return self._download(run_id, example_artifact(split, lang))

    def _folder(self, run_id: str) -> Path:
        """The run's predictions folder (with those of the other known runs on first need)."""
        if run_id not in self._folders:
            pending = [run_id, *(known for known in self._artifact_uris if known != run_id)]
            pending = [known for known in pending if known not in self._folders]
            with ThreadPoolExecutor(DOWNLOAD_THREADS) as pool:
                fetched = zip(pending, pool.map(self._fetch, pending))
                # A progress line of its own, about every 10 %, for a read that takes long.
                for done, (known, folder) in enumerate(fetched, 1):
                    self._folders[known] = folder
                    if progress_due(done, len(pending)):
                        logger.info("Read the predictions of %d/%d runs", done, len(pending))
        found = self._folders[run_id]
        if isinstance(found, AnalysisError):
            raise AnalysisError(str(found)) from found.__cause__
        return found

    def _fetch(self, run_id: str) -> Path | AnalysisError:
        """A run's predictions folder: read in place from a local artifact store (no copy),
        else downloaded once, without MLflow's progress bar; an error is kept and raised to
        each reader of the run's scores."""
        try:
            uri = self._artifact_uris.get(run_id) or self.client.get_run(run_id).info.artifact_uri
            repository = get_artifact_repository(uri, tracking_uri=self.client.tracking_uri)
            if isinstance(repository, LocalArtifactRepository):
                folder = Path(repository.download_artifacts(PREDICTIONS_DIR))
            else:
                target = Path(self._scratch.name) / run_id
                target.mkdir()
                # A progress bar per run and file says nothing in a report's output.
                os.environ.setdefault(PROGRESS_BAR_VARIABLE, "false")
                folder = Path(repository.download_artifacts(PREDICTIONS_DIR, str(target)))
            logger.debug("Run %s: %s/ read from %s", run_id, PREDICTIONS_DIR, folder)
            return folder
        except (MlflowException, OSError) as error:
            failure = AnalysisError(
                f"run {run_id}: its {PREDICTIONS_DIR}/ artifacts could not be read ({error})"
            )
            failure.__cause__ = error
            return failure

    def _download(self, run_id: str, artifact: str) -> dict:
        """One file of a run's predictions folder, read as JSON (its scores as an array:
        a fifth of a list's memory). orjson: a paper-scale report reads 1,520 such files of
        5,010 scores, which took 2.7 s with the json module and 0.8 s with orjson."""
        path = self._folder(run_id) / Path(artifact).name
        if not path.is_file():
            raise AnalysisError(f"run {run_id} has no artifact {artifact}")
        raw = path.read_bytes()
        try:
            content = orjson.loads(raw)
        # NaN or Infinity (a metric of an empty set): json.dumps writes them, orjson refuses.
        except orjson.JSONDecodeError:
            try:
                content = json.loads(raw)
            except ValueError as error:  # damaged: name the run and the file, not only the byte
                raise AnalysisError(
                    f"run {run_id}: its artifact {artifact} is not JSON ({error}; read from {path})"
                ) from None
        if not isinstance(content, dict) or "scores" not in content:
            raise AnalysisError(f"artifact {artifact} of run {run_id} has no 'scores' list")
        content["scores"] = _as_array(content["scores"])
        for field in COMPACT_FIELDS:
            if field in content:
                content[field] = _compact(content[field])
        return content


def _as_array(values):
    """``values`` as a float array when they are numbers, else unchanged (``_stack`` then
    names the problem)."""
    try:
        return np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        return values


def _compact(values):
    """Integer labels or predictions packed one byte each (a list of them holds an 8-byte
    pointer per example): an ``array.array`` iterates, prints and tests empty as the list
    did. Anything else (strings, nested lists, larger numbers) unchanged."""
    if type(values) is not list or not values or type(values[0]) is not int:
        return values
    try:
        return array.array("b", values)
    except (OverflowError, TypeError):
        return values


def probing_distances(client: MlflowClient, run_id: str, state: str) -> dict | None:
    """A trial's probing distances at one model state (``{"related": [...], "unrelated":
    [...]}``, from ``probing/<state>_distances.json``), or None when the run has none (it did
    not probe, or it predates the distances artifact)."""
    return json_artifact(client, run_id, PROBING_DISTANCES.format(state=state))


def json_artifact(client: MlflowClient, run_id: str, artifact: str) -> dict | None:
    """A run's JSON artifact (`artifact`: its path in the run), or None when the run has none."""
    with tempfile.TemporaryDirectory(prefix="xlt-artifact-") as scratch:
        try:
            local = client.download_artifacts(run_id, artifact, scratch)
        except (MlflowException, OSError):
            return None
        with open(local, encoding="utf-8") as handle:
            return json.load(handle)
