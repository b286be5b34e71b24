"""A sweep's phases on Ray Tune, whichever strategy runs them (sweeps/strategies/):
each phase is one Tune experiment `<parent run name>-<phase>` under the storage path, built,
or restored with `Tuner.restore` where an interrupted sweep stopped, then fitted. After each
fit the trial runs it left open or unlogged are set right (sweeps/records/phase_runs.py)."""

from __future__ import annotations

import dataclasses
import errno
import logging
import os
from pathlib import Path

from sweeps.records import phase_runs
from sweeps.running.library_output import quiet_tune
from sweeps.running.state_snapshots import periodic_snapshots_only
from sweeps.running.tune_names import tune_trial_dirname, tune_trial_name
from sweeps.safety.dead_baseline import RERUN_ERRORED_TAG
from sweeps.safety.interruption import TuneEndedEarly, unfinished_trials
from sweeps.safety.saved_state import (
    check_saved_state,
    drop_damaged_error_pickles,
    errored_by_full_disk,
    recover_deleted_checkpoints,
    unrestorable,
)
from sweeps.safety.storage_checks import is_disk_full
from sweeps.spec.trial_contract import TrialRequest
from xlt_schema import RAY_NAME_TAG, STORAGE_TAG
from xlt_schema.tracking_store import credentials_env

logger = logging.getLogger(__name__)

AUTO_LOGGERS_OFF_ENV = "TUNE_DISABLE_AUTO_CALLBACK_LOGGERS"


class TunePhases:
    """The phases of one sweep, each a Tune experiment that can be restored: `run_grid` runs
    a grid phase; a strategy with another kind of phase builds its tuner (`trainable`,
    `run_config`, `tune_config`) and hands it to `fit`."""

    def __init__(
        self, spec, options, client, experiment_id, parent_run_id, tags, resources, signals
    ):
        self.spec, self.options, self.client, self.resources = spec, options, client, resources
        self.signals = signals
        self.parent_run_id, self.tags = parent_run_id, tags
        self.restored_phases: set[str] = set()
        self.storage = tags.get(STORAGE_TAG, options.storage_path)
        # What every trial is asked; each phase sets its own phase, points and seeds.
        self.request = TrialRequest(
            base=spec.base,
            phase=spec.strategy,
            experiment_id=experiment_id,
            parent_run_id=parent_run_id,
            threads=resources["cpu"],
            log_model=spec.log_models,
        )

    def run_grid(self, phase: str, points: list[dict], seeds: list[int]):
        """Run (or restore and finish) a grid phase: every point with every seed. Its
        results hold one per trial, or the sweep stops here: no `xlt.complete` for a phase
        whose trials were not all run."""
        results = self.fit(phase, self.grid_tuner(phase, points, seeds))
        if len(results) != len(points) * len(seeds):
            raise unrestorable(
                self.path(phase), f"{len(results)} of {len(points) * len(seeds)} trials ended"
            )
        return results

    def name(self, phase: str) -> str:
        return f"{self.tags[RAY_NAME_TAG]}-{phase}"

    def path(self, phase: str) -> str:
        return f"{self.storage.rstrip('/')}/{self.name(phase)}"

    def trainable(self):
        from ray import tune

        from sweeps.running.trainable import run_tracked_trial

        # Where to track reaches the trials through Ray's object store (`with_parameters`),
        # not their config: Tune writes the config to params.json, result.json and the
        # experiment state (uploaded with an s3:// storage path), and Ray logs it. A database
        # URI may hold a password; a server's went to MLflow's variables (`take_credentials`).
        trainable = tune.with_parameters(
            run_tracked_trial,
            tracking_uri=self.options.tracking_uri,
            credentials=credentials_env(),
        )
        return tune.with_resources(trainable, self.resources)

    def run_config(self, phase: str):
        return _run_config(phase, self.name(phase), self.storage, self.options.max_failures)

    def restorable(self, phase: str, planned: int | None = None):
        """The phase's Tuner restored from its saved state, or None when there is none;
        DataError when the state cannot be restored (`sweeps.safety.saved_state`). Errored trials
        stay as they ended, unless one errored on a full disk or the parent asks for it
        (RERUN_ERRORED_TAG: a dead baseline): then they all run again from their last
        checkpoints (Tune resumes all errored trials or none)."""
        from ray import tune

        path = self.path(phase)
        if not tune.Tuner.can_restore(path):
            return None
        trials = check_saved_state(path, planned)
        recover_deleted_checkpoints(path, trials)
        drop_damaged_error_pickles(path)  # Tune's results would fail on them
        full_disk = [t for t in trials if t.status == "ERROR" and errored_by_full_disk(t)]
        self.restored_phases.add(phase)
        logger.info(
            f"Restoring phase {phase} from {path}: finished trials are kept, "
            "unfinished ones continue from their checkpoints"
        )
        try:
            return tune.Tuner.restore(
                path,
                self.trainable(),
                resume_unfinished=True,
                resume_errored=bool(full_disk) or self.tags.get(RERUN_ERRORED_TAG) == "true",
                restart_errored=False,
            )
        except Exception as error:  # tuner.pkl cut short, say
            raise unrestorable(path, f"{type(error).__name__}: {error}") from None

    def restored_results(self, phase: str):
        tuner = self.restorable(phase)
        return tuner.get_results() if tuner is not None else []

    def grid_tuner(self, phase: str, points: list[dict], seeds: list[int]):
        from ray import tune

        restored = self.restorable(phase, len(points) * len(seeds))
        if restored is not None:
            return restored
        request = dataclasses.replace(self.request, phase=phase)
        return tune.Tuner(
            self.trainable(),
            param_space=request.to_space(points=points, seeds=seeds),
            tune_config=tune_config(),
            run_config=self.run_config(phase),
        )

    def fit(self, phase: str, tuner):
        """The phase's results; SweepInterrupted when a signal stopped it (what ended is
        recorded first: ASHA's stops, results kept through a tracking outage)."""
        # Tune adds the loggers a RunConfig lacks. A new phase's names the CSV and JSON ones;
        # Tune's TensorBoard logger would import tensorboardX and with it torch, 1.4 s of the
        # driver's before the first trial, for files nothing here reads. A restored phase
        # keeps Tune's automatic loggers: its saved RunConfig may predate the explicit ones.
        os.environ[AUTO_LOGGERS_OFF_ENV] = "0" if phase in self.restored_phases else "1"
        quiet_tune()  # Tune's own output: its configuration box and results folder
        # Snapshots on Tune's own period: forced after every checkpoint they grew as n^2.
        with self.signals.tune_fit(), periodic_snapshots_only():
            results = _fit_results(tuner, self.path(phase))
        saved = self.saved_trials(phase)
        _raise_if_disk_full(results, saved)  # the sweep stops, its state resumable
        statuses = {trial.trial_id: trial.status for trial in saved}
        wait_s = self.options.tracking_wait_s
        phase_runs.close_stopped_trials(
            self.client, self.request.experiment_id, self.parent_run_id, results, statuses, wait_s
        )
        phase_runs.relog_results(self.client, results, wait_s)
        unfinished = unfinished_trials(statuses, results)
        detail = f"phase {phase} stopped with {unfinished} of {len(statuses)} trials unfinished"
        self.signals.raise_if_received(detail)
        phase_runs.close_lost_trials(self.client, self.parent_run_id, results, wait_s)
        if unfinished:  # no signal of ours: a fault, never reported as a Ctrl-C
            raise TuneEndedEarly(f"{detail}, without a stop signal")
        return results

    def saved_trials(self, phase: str) -> list:
        """The trials (and their statuses) in the experiment state Tune saved last. Not the
        ResultGrid's statuses: on a signal `fit` saves the state, then stops the running
        trials and marks them TERMINATED in memory only. Nor Tune's auto-filled `done` in the
        last result: with `reuse_actors` a finished trial's saved last result reads
        done=False."""
        from ray.tune import ExperimentAnalysis

        return ExperimentAnalysis(self.path(phase)).trials


def tune_config(**kwargs):
    from ray import tune

    # A freed slot takes the next trial in the same worker process (the function
    # trainable's `reset_config`) instead of waiting for a new actor to start.
    # Tune names each trial as its MLflow run is named; its directory keeps Tune's name.
    return tune.TuneConfig(
        reuse_actors=True,
        trial_name_creator=tune_trial_name,
        trial_dirname_creator=tune_trial_dirname,
        **kwargs,
    )


def _run_config(phase: str, name: str, storage: str, max_failures: int):
    from ray import tune
    from ray.tune.logger import CSVLoggerCallback, JsonLoggerCallback

    from sweeps.running.progress import ProgressCallback
    from sweeps.safety.full_disk_stop import StopOnFullDisk

    return tune.RunConfig(
        name=name,
        storage_path=storage,
        checkpoint_config=tune.CheckpointConfig(num_to_keep=1),
        failure_config=tune.FailureConfig(max_failures=max_failures),
        # The trials' result files (`Result.metrics_dataframe` reads them), without the
        # TensorBoard logger Tune would add: see `TunePhases.fit`.
        callbacks=[
            ProgressCallback(phase),
            CSVLoggerCallback(),
            JsonLoggerCallback(),
            StopOnFullDisk(),
        ],
        verbose=0,  # the progress lines replace Tune's status table
    )


def count_failed(results) -> int:
    return sum(
        1 for result in results if result.error is not None or (result.metrics or {}).get("failure")
    )


def _fit_results(tuner, path: str):
    """`tuner.fit()`'s results. Tune unpickles each failed trial's `error.pkl` as `fit` ends;
    one that a full disk cut short failed it there (EOFError): such files are deleted and the
    results, saved whole, read again."""
    try:
        return tuner.fit()
    except Exception:
        if not drop_damaged_error_pickles(path):
            raise
    return tuner.get_results()


def _raise_if_disk_full(results, saved_trials) -> None:
    """Raise the full disk a trial of a finished `fit` failed on: its result's error, or an
    ENOSPC error naming the error file of a trial whose error files the full disk cut short
    (the result then holds no error text)."""
    full = [result.error for result in results if is_disk_full(result.error)]
    if full:
        raise full[0]
    for trial in saved_trials:
        if trial.status == "ERROR" and errored_by_full_disk(trial):
            where = str(Path(trial.path, trial.run_metadata.error_filename))
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), where)
