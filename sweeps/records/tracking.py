"""MLflow layout of a sweep: one parent run per invocation, one nested child run per trial.

Child runs are written from inside the trials (Ray workers), through the tracking URI
alone, so workers on other nodes need no shared file system when the URI is a server.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, TypeVar

import requests

from sweeps.records.uri_probe import (
    check_scheme,
    is_database_uri,
    probe_database,
    probe_server,
)
from xlt_schema import (
    COMPLETE_TAG,
    DEPARTURES_ARTIFACT,
    FAILURE_TAG,
    INTERRUPTED,
    PARENT_ROLE,
    PARENT_RUN_TAG,
    PREVIOUS_FAILURE_TAG,
    REPORTED_TAG,
    ROLE_TAG,
    RUN_STATUS_TAG,
    SWEEP_KEY_TAG,
    TRIAL_ID_TAG,
    TRIAL_ROLE,
)
from xlt_schema.lock_file import UnsafeLockFile, open_lock_file
from xlt_schema.tracking_store import (
    sqlite_problem,
    sqlite_write_problem,
    take_credentials,
)

# MLflow is imported where it is used: a sweep driver on a new store first imports it in the
# thread that opens the store (`open_experiment`), while Ray starts (1.2-1.6 s of imports
# that otherwise come before Ray's start).
if TYPE_CHECKING:
    from mlflow.tracking import MlflowClient

logger = logging.getLogger(__name__)

DEFAULT_TRACKING_URI = "sqlite:///mlflow.db"
# What a trial writes to its last Ray checkpoint so its results survive a tracking outage.
RESULTS_FILE = "results.json"
# The trained model (a `save_pretrained` folder), when the sweep logs models.
MODEL_DIR = "model"
PREDICTIONS_DIR = "predictions"
# Probing histograms (`probing/<model state>.png`) of adjustment trials.
PROBING_DIR = "probing"
# requests' errors that mean the tracking server did not answer: connection refused or reset,
# no answer in time, retries on 429/5xx answers (a proxy in front of a stopped server) used up.
# MlflowClient wraps them in an MlflowException whose context is the requests error.
TRACKING_ERRORS = (
    requests.exceptions.ConnectionError,
    requests.exceptions.Timeout,
    requests.exceptions.RetryError,
)
# MLflow's error code for "try again later" (`ErrorCode.Name(TEMPORARILY_UNAVAILABLE)`): an
# HTTP 503, or its SQL store's OperationalError.
_UNAVAILABLE = "TEMPORARILY_UNAVAILABLE"

T = TypeVar("T")


def resolve_tracking_uri(cli_value: str | None) -> str:
    """--tracking-uri, else MLFLOW_TRACKING_URI, else ./mlflow.db; local SQLite paths are
    made absolute because Ray runs each trial in its own working directory. A server's
    `user:password@` leave the URI for MLflow's credential variables (`take_credentials`):
    what the sweep prints, logs, hands to Tune or reports never holds them."""
    uri = cli_value or os.environ.get("MLFLOW_TRACKING_URI") or DEFAULT_TRACKING_URI
    uri = take_credentials(uri)
    if uri.startswith("sqlite:///") and not uri.startswith("sqlite:////"):
        uri = "sqlite:///" + str(Path(uri.removeprefix("sqlite:///")).resolve())
    return uri


def check_tracking_uri(uri: str, timeout_s: float = 5.0, must_exist: bool = False) -> None:
    """Refuse a tracking URI that cannot work before anything starts: a server that does not
    answer as MLflow's does, a database whose driver is missing or whose server does not
    accept a connection, a scheme MLflow has no store for (sweeps/records/uri_probe.py), a
    SQLite file in a missing directory, that is not a database (as SQLite's or MLflow's) or
    that cannot be written, a plain directory store (MLflow 3.17 refuses it), and with `must_exist`
    (`--resume`) a missing store, rather than one created empty. An existing SQLite store is
    brought to MLflow's schema here (`prepare_store`); a new one needs a directory this user
    can write, and `open_experiment` makes its tables (seconds of MLflow's migrations), which
    the sweep does while Ray starts."""
    from xlt_core.errors import ConfigError

    if uri.startswith(("http://", "https://")):
        probe_server(uri, timeout_s)
    elif is_database_uri(uri):
        probe_database(uri, timeout_s)
    elif uri.startswith("sqlite:///"):
        path = Path(uri.removeprefix("sqlite:///"))
        if not path.parent.is_dir():
            raise ConfigError(
                "--tracking-uri",
                uri,
                f"a SQLite file in an existing directory ({path.parent} does not exist)",
            )
        if must_exist and not (path.is_file() and path.stat().st_size):
            raise ConfigError(
                "--resume", True, f"a tracking store with the sweep to resume; {path} has none"
            )
        if path.is_file() and path.stat().st_size:
            _check_mlflow_database(path, uri)
            prepare_store(uri)
        elif not os.access(path.parent, os.W_OK):
            raise ConfigError(
                "--tracking-uri",
                uri,
                f"a SQLite file in a directory this user can write ({path.parent} is not)",
            )
    elif uri.startswith("file:") or "://" not in uri:
        raise ConfigError(
            "--tracking-uri",
            uri,
            "sqlite:///path/to/mlflow.db or http(s)://host:port "
            "(MLflow 3.17 refuses a plain directory store)",
        )
    else:
        check_scheme(uri)  # Databricks', a plugin's: a store MLflow knows, or refused


def prepare_store(uri: str) -> None:
    """A SQLite store: create (or migrate) its tables under an exclusive lock, then check that
    the file can be written. Two sweeps started together on a new file would otherwise both
    create MLflow's tables (as constructing an `MlflowClient` does), and one fails ("table ...
    already exists"). A tracking server: nothing to do."""
    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient

    from xlt_core.errors import ConfigError

    if not uri.startswith("sqlite:///"):
        return
    path = Path(uri.removeprefix("sqlite:///"))
    try:
        lock = open_lock_file(f"{path}.lock")  # never through a planted symlink
    except UnsafeLockFile as error:
        raise ConfigError(
            "--tracking-uri", uri, f"a store without a planted lock file: {error}"
        ) from None
    except OSError as error:  # a read-only folder or file system
        raise ConfigError(
            "--tracking-uri",
            uri,
            f"a SQLite file in a folder this user can write ({path.parent}: {error.strerror})",
        ) from None
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the other sweep waits, then finds the tables made
        try:
            MlflowClient(uri).search_experiments(max_results=1)
        except MlflowException as error:
            raise ConfigError("--tracking-uri", uri, f"a SQLite file this user can write ({error})")
        problem = sqlite_write_problem(path)
        if problem is not None:
            raise ConfigError(
                "--tracking-uri", uri, f"a SQLite file this user can write ({problem})"
            )


def _check_mlflow_database(path: Path, uri: str) -> None:
    """Refuse a damaged or foreign file before MLflow, Ray or a resume writes to it."""
    from xlt_core.errors import ConfigError

    problem = sqlite_problem(path)
    if problem is not None:
        raise ConfigError(
            "--tracking-uri", uri, f"an intact MLflow SQLite database; {path} {problem}"
        )


# MLflow 3.17's UI shows an experiment of this kind as model training (runs, metrics)
# rather than as a GenAI app (traces); a sweep is model training.
EXPERIMENT_KIND_TAG = "mlflow.experimentKind"
MODEL_TRAINING_KIND = "custom_model_development"


def open_experiment(tracking_uri: str, name: str) -> tuple[MlflowClient, str]:
    """A client of the store (its tables made first if it is new: `prepare_store`) and the id
    of experiment `name` in it (`ensure_experiment`)."""
    prepare_store(tracking_uri)
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri)
    return client, ensure_experiment(client, name, tracking_uri)


def ensure_experiment(client: MlflowClient, name: str, tracking_uri: str) -> str:
    """The experiment's id, creating it when missing (artifacts beside a local SQLite file);
    either way it is tagged as model training (`EXPERIMENT_KIND_TAG`)."""
    experiment = client.get_experiment_by_name(name)
    if experiment is not None:
        if experiment.tags.get(EXPERIMENT_KIND_TAG) != MODEL_TRAINING_KIND:
            client.set_experiment_tag(
                experiment.experiment_id, EXPERIMENT_KIND_TAG, MODEL_TRAINING_KIND
            )
        return experiment.experiment_id
    artifact_location = None
    if tracking_uri.startswith("sqlite:///"):
        artifact_location = (
            Path(tracking_uri.removeprefix("sqlite:///")).parent / "mlartifacts"
        ).as_uri()
    return client.create_experiment(
        name,
        artifact_location=artifact_location,
        tags={EXPERIMENT_KIND_TAG: MODEL_TRAINING_KIND},
    )


def start_parent_run(
    client: MlflowClient, experiment_id: str, params: Mapping[str, object], tags: Mapping[str, str]
) -> str:
    from mlflow.utils.mlflow_tags import MLFLOW_RUN_NAME

    run = client.create_run(
        experiment_id, tags={ROLE_TAG: PARENT_ROLE, **tags}, run_name=tags.get(MLFLOW_RUN_NAME)
    )
    log_params(client, run.info.run_id, params)
    return run.info.run_id


def log_departures(client: MlflowClient, run_id: str, card, departures: list) -> None:
    """A paper preset's parent run: its card's departures from the paper, as the report
    reads them (`DEPARTURES_ARTIFACT`; `card`: a sweeps.spec.paper_cards.PaperCard)."""
    content = {
        "paper": card.paper,
        "citation": card.citation,
        "departures": [departure.to_dict() for departure in departures],
    }
    client.log_dict(run_id, content, DEPARTURES_ARTIFACT)


def trial_run_filter(parent_run_id: str, trial_id: str) -> str:
    """The MLflow search filter of the child run of Ray trial `trial_id`."""
    return f"tags.`{PARENT_RUN_TAG}` = '{parent_run_id}' and tags.`{TRIAL_ID_TAG}` = '{trial_id}'"


def find_or_create_trial_run(
    client: MlflowClient,
    experiment_id: str,
    parent_run_id: str,
    trial_id: str,
    tags: Mapping[str, str],
    run_name: str,
) -> str:
    """The child run of this Ray trial: a restarted trial finds and reuses its run."""
    existing = client.search_runs(
        [experiment_id],
        filter_string=trial_run_filter(parent_run_id, trial_id),
        max_results=1,
    )
    if existing:
        return existing[0].info.run_id
    run = client.create_run(
        experiment_id,
        tags={
            PARENT_RUN_TAG: parent_run_id,
            ROLE_TAG: TRIAL_ROLE,
            TRIAL_ID_TAG: trial_id,
            **tags,
        },
        run_name=run_name,
    )
    return run.info.run_id


def log_params(client: MlflowClient, run_id: str, params: Mapping[str, object]) -> None:
    from mlflow.entities import Param

    client.log_batch(run_id, params=[Param(key, str(value)) for key, value in params.items()])


def log_metrics(client: MlflowClient, run_id: str, metrics: Mapping[str, float], step: int) -> None:
    from mlflow.entities import Metric

    timestamp = int(time.time() * 1000)
    client.log_batch(
        run_id,
        metrics=[Metric(key, float(value), timestamp, step) for key, value in metrics.items()],
    )


def set_tags(client: MlflowClient, run_id: str, tags: Mapping[str, str]) -> None:
    from mlflow.entities import RunTag

    client.log_batch(run_id, tags=[RunTag(key, str(value)) for key, value in tags.items()])


def find_resumable_parent(client: MlflowClient, experiment_id: str, sweep_key: str | None):
    """The newest parent run of this sweep (same settings; of any sweep when `sweep_key` is
    None) with work left, or None: trials that did not all end, or a report not written (a
    sweep with no finished trial, closed FAILED, has none to write)."""
    filter_string = f"tags.`{ROLE_TAG}` = '{PARENT_ROLE}'"
    if sweep_key is not None:
        filter_string += f" and tags.`{SWEEP_KEY_TAG}` = '{sweep_key}'"
    runs = client.search_runs(
        [experiment_id], filter_string=filter_string, order_by=["attributes.start_time DESC"]
    )
    return next((run for run in runs if not is_done(run)), None)


def unfinished_sweep_note(client: MlflowClient, experiment_id: str, sweep_key: str) -> str | None:
    """The line a new sweep (no `--resume`) prints when a parent of the same settings still
    has work left, or None. That parent is left as it is: a driver may still run it, and its
    runs are tracked data; `--resume` continues the newest unfinished parent, which the new
    sweep's becomes."""
    parent = find_resumable_parent(client, experiment_id, sweep_key)
    if parent is None:
        return None
    return (
        f"Note: an unfinished sweep with these settings exists, parent run {parent.info.run_id} "
        f"(started {started_at(parent)}, {parent.info.status}); it is left as it is, its runs "
        "kept, and a new sweep starts without --resume: --resume continues the newest "
        "unfinished sweep of these settings (this new one while it has work left, then "
        f"{parent.info.run_id})"
    )


def started_at(run) -> str:
    """When `run` started, in local time to the minute: `2026-12-06 06:05`."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(run.info.start_time / 1000))


def is_done(parent) -> bool:
    """Whether a parent run needs nothing more: every trial ended and the report is written."""
    tags = parent.data.tags
    return tags.get(COMPLETE_TAG) == "true" and (
        tags.get(REPORTED_TAG) == "true" or parent.info.status != "FINISHED"
    )


def mark_interrupted(client: MlflowClient, parent_run_id: str) -> int:
    """After a SIGINT/SIGTERM stopped the sweep (and Ray is down): the trial runs still RUNNING
    and the parent become KILLED with tag `xlt.status=interrupted`. Returns how many trial
    runs were stopped."""
    running = trial_runs(client, client.get_run(parent_run_id), status="RUNNING")
    for run_id in [run.info.run_id for run in running] + [parent_run_id]:
        set_tags(client, run_id, {RUN_STATUS_TAG: INTERRUPTED})
        client.set_terminated(run_id, status="KILLED")
    return len(running)


def trial_runs(client: MlflowClient, parent, status: str) -> list:
    """The trial runs of sweep `parent` (a parent Run) with MLflow status `status`."""
    return client.search_runs(
        [parent.info.experiment_id],
        filter_string=(
            f"tags.`{PARENT_RUN_TAG}` = '{parent.info.run_id}' and tags.`{ROLE_TAG}` = "
            f"'{TRIAL_ROLE}' and attributes.status = '{status}'"
        ),
        max_results=50000,
    )


def was_interrupted(run) -> bool:
    return run.data.tags.get(RUN_STATUS_TAG) == INTERRUPTED


def continue_run(client: MlflowClient, run) -> None:
    """A run that `--resume` continues: RUNNING again, its `xlt.status=interrupted` cleared."""
    if was_interrupted(run):
        client.delete_tag(run.info.run_id, RUN_STATUS_TAG)
    if run.info.status != "RUNNING":
        client.update_run(run.info.run_id, status="RUNNING")


def write_trial_results(
    directory: Path,
    metrics: Mapping[str, float],
    step: int,
    example_scores: Mapping[str, dict],
    pending_curves: list,
) -> None:
    """A finished trial's results as files (kept in its Ray checkpoint): final metrics at
    `step`, per-example scores, and curve points MLflow has not received yet."""
    (directory / PREDICTIONS_DIR).mkdir(parents=True, exist_ok=True)
    for key, payload in example_scores.items():
        (directory / PREDICTIONS_DIR / f"{key}.json").write_text(json.dumps(payload))
    (directory / RESULTS_FILE).write_text(
        json.dumps({"metrics": dict(metrics), "step": step, "pending_curves": pending_curves})
    )


def has_trial_results(directory: str | Path) -> bool:
    return (Path(directory) / RESULTS_FILE).is_file()


def read_trial_metrics(directory: str | Path) -> dict[str, float]:
    return json.loads((Path(directory) / RESULTS_FILE).read_text())["metrics"]


def log_trial_results(client: MlflowClient, run_id: str, directory: str | Path) -> None:
    """Log what `write_trial_results` wrote to the trial's run and mark it FINISHED."""
    directory = Path(directory)
    saved = json.loads((directory / RESULTS_FILE).read_text())
    for step, metrics in saved["pending_curves"]:
        log_metrics(client, run_id, metrics, step)
    if any((directory / PREDICTIONS_DIR).iterdir()):
        client.log_artifacts(run_id, str(directory / PREDICTIONS_DIR), PREDICTIONS_DIR)
    for folder in (MODEL_DIR, PROBING_DIR):  # present when the sweep logs models / the trial probed
        if (directory / folder).is_dir() and any((directory / folder).iterdir()):
            client.log_artifacts(run_id, str(directory / folder), folder)
    log_metrics(client, run_id, saved["metrics"], saved["step"])
    run = client.get_run(run_id)
    if was_interrupted(run):  # re-logged from the checkpoint after an interrupted sweep
        client.delete_tag(run_id, RUN_STATUS_TAG)
    earlier_failure = run.data.tags.get(FAILURE_TAG)
    if earlier_failure:  # an attempt failed, a retry finished: keep the story, not the verdict
        set_tags(client, run_id, {PREVIOUS_FAILURE_TAG: earlier_failure})
        client.delete_tag(run_id, FAILURE_TAG)
    client.set_terminated(run_id, status="FINISHED")


def is_tracking_outage(error: BaseException) -> bool:
    """Whether `error` means the tracking server did not answer, so that waiting may help:
    a requests error of TRACKING_ERRORS (MlflowClient raises it wrapped in an MlflowException),
    a SQLite database locked by another writer, or MLflow's "temporarily unavailable" (an HTTP
    503, a SQL store's OperationalError). Anything else (a refused request, a bug, a local
    disk error such as a PermissionError writing an artifact) is not an outage."""
    from mlflow.exceptions import MlflowException

    chain = []
    while error is not None and error not in chain:
        chain.append(error)
        error = error.__cause__ or (None if error.__suppress_context__ else error.__context__)
    if any(isinstance(link, TRACKING_ERRORS) for link in chain):
        return True
    for link in chain:
        if isinstance(link, sqlite3.OperationalError):
            # "database is locked": another writer holds it; anything else is the disk's fault.
            return "locked" in str(link) or "busy" in str(link)
    return any(
        isinstance(link, MlflowException) and link.error_code == _UNAVAILABLE for link in chain
    )


def with_retries(
    action: Callable[[], T],
    deadline_s: float,
    what: str,
    first_wait_s: float = 1.0,
    max_wait_s: float = 30.0,
) -> T:
    """Run `action`, retrying with exponential backoff while the tracking server does not
    answer (`is_tracking_outage`), until `deadline_s` seconds have passed (then the last error
    is raised). Any other error is raised at once."""
    deadline, wait = time.monotonic() + deadline_s, first_wait_s
    while True:
        try:
            return action()
        except Exception as error:
            if not is_tracking_outage(error) or time.monotonic() + wait > deadline:
                raise
            logger.warning(
                f"tracking server not answering ({what}): {type(error).__name__}; "
                f"retrying in {wait:.0f}s"
            )
            time.sleep(wait)
            wait = min(2 * wait, max_wait_s)
