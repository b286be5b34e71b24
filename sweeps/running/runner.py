"""`run_sweep`: validate every trial, open the parent MLflow run (or find it again with
`--resume`), run the strategy's phases on Ray Tune, then build the report from MLflow.

The sweep's strategy (`sweeps.spec.strategy`: `grid` and `search` are modules of
sweeps/strategies/) says what the parent run's tags and params add and runs its phases; the
confirmation phase follows whichever ran (sweeps/running/confirmation.py). Each phase is one
Tune experiment `<parent run name>-<phase>` under the storage path
(sweeps/running/tune_phases.py), so an interrupted sweep continues with `Tuner.restore` where
it stopped.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import hashlib
import json
import logging
import os
import signal
import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from sweeps.planning.sweep_checks import check_settings
from sweeps.planning.sweep_file import sweep_text
from sweeps.planning.trial_resources import trial_resources
from sweeps.records import tracking
from sweeps.records.resume_mismatch import no_sweep_to_resume
from sweeps.records.run_context import system_tags
from sweeps.running.confirmation import run_confirmation
from sweeps.running.library_output import ray_log_to_file, worker_variables
from sweeps.running.resources import (
    alive_node_cpus,
    check_cpus_fit,
    check_gpus_present,
)
from sweeps.running.tune_phases import TunePhases, count_failed
from sweeps.safety import driver_lock
from sweeps.safety.dead_baseline import RERUN_ERRORED_TAG, NoReport, dead_baseline
from sweeps.safety.interruption import StopSignals, SweepInterrupted, signal_behind
from sweeps.safety.storage_checks import (
    StorageFull,
    check_storage,
    disk_full_text,
    is_disk_full,
    quiet_disk_full,
)
from sweeps.spec.experiment import RACE_SETTINGS, SweepSpec, setting_defaults
from sweeps.spec.strategy import strategy_named
from xlt_core.config import TrialConfig
from xlt_core.data.hub_presence import check_hub_data
from xlt_core.errors import ConfigError, DataError
from xlt_core.preflight import check_resources, read_data
from xlt_core.registry import PLUGINS_VARIABLE
from xlt_schema import (
    COMPLETE_TAG,
    FAILURE_TAG,
    PAPER_TAG,
    RAY_NAME_TAG,
    REPORTED_TAG,
    STAGE_TAG,
    STORAGE_TAG,
    SWEEP_FILE_ARTIFACT,
    SWEEP_KEY_TAG,
)
from xlt_schema.tracking_store import redact

logger = logging.getLogger(__name__)

RAY_RESULTS = "ray_results"
REPORTS = "reports"


@dataclass(frozen=True)
class SweepOptions:
    tracking_uri: str
    address: str | None = None
    resume: bool = False
    trials_per_gpu: int | None = None
    # Times a trial is restarted from its last checkpoint after an error (a lost node, say).
    max_failures: int = 2
    # Where Tune keeps experiment state and checkpoints: local, or shared (s3://...) on a cluster.
    storage_path: str = RAY_RESULTS
    # How long to wait for an unreachable tracking server before giving up on re-logging.
    tracking_wait_s: float = 600.0


def check_sweep(spec: SweepSpec) -> list[TrialConfig]:
    """All checks that can fail before Ray starts: the dry run's (`check_settings`: values,
    each task's methods, for `search` its ranges and budget), then data files, languages and
    model depth. Every local file a trial will read is read here, once per configuration
    (seeds share their data), so that a missing file or a corrupt line stops the sweep in
    seconds rather than failing every trial; hub data sets are looked up (on the hub, or in
    the cache when it cannot be reached) and read by the trials."""
    trials = check_settings(spec, fits=check_resources)
    checked = set()
    for trial in trials:
        if trial.config_key() not in checked:  # the key leaves out the seed
            check_resources(trial)
            read_data(trial)
            check_hub_data(trial)  # hub data sets there (or cached), before Ray starts
            checked.add(trial.config_key())
    return trials


# The settings that define a sweep (`sweep_key`); then those that only some sweeps set, in
# its key where they are set (the keys of earlier sweeps stay as they were).
SWEEP_KEY_FIELDS = ("experiment", "preset", "strategy", "base", "points", "seeds")
SWEEP_KEY_FIELDS += ("search_trials", "top_k")
SOME_SWEEPS_FIELDS = ("seed_rounds", "search_seeds", "confirm_seeds")
# Strategy `race`'s settings: in the key where they differ from SweepSpec's defaults.
SOME_SWEEPS_FIELDS += RACE_SETTINGS
_SPEC_DEFAULTS = setting_defaults()


def sweep_key(spec: SweepSpec) -> str:
    """A hash of everything that defines the sweep: `--resume` only continues the same sweep."""
    fields = {name: getattr(spec, name) for name in SWEEP_KEY_FIELDS}
    if spec.seed_rounds:  # sequential seeds run other trials than the same seeds up front
        fields["seed_rounds"] = list(spec.seed_rounds)
    if spec.search_seeds > 1:
        fields["search_seeds"] = spec.search_seeds
    if spec.confirm_seeds is not None:  # the default leaves the keys of earlier sweeps alone
        fields["confirm_seeds"] = spec.confirm_seeds
    fields.update(
        (name, getattr(spec, name))
        for name in RACE_SETTINGS
        if getattr(spec, name) != _SPEC_DEFAULTS[name]  # the keys of earlier races stay
    )
    return hashlib.sha256(json.dumps(fields, sort_keys=True, default=str).encode()).hexdigest()[:16]


def run_sweep(spec: SweepSpec, options: SweepOptions, signals: StopSignals | None = None) -> int:
    """Run a sweep that `check_sweep` accepted; returns the number of failed trials.
    Raises SweepInterrupted on SIGINT/SIGTERM (`signals`, else its own StopSignals; the
    tracking store then says so: `_interrupted`), ConfigError on a bad option."""
    key = sweep_key(spec)
    with contextlib.ExitStack() as stack:
        signals = signals or stack.enter_context(StopSignals())
        stack.enter_context(quiet_disk_full())  # a full disk: one line, not its tracebacks
        # One driver per sweep, before Ray or any run: a second is refused (exit 2).
        stack.enter_context(driver_lock.hold(options.tracking_uri, spec.experiment))
        # Ray's import first: the thread below then imports MLflow (over a second, for a new
        # store) while `ray.init` waits for Ray's daemons, rather than before it starts.
        _name_token_auth(options.address)
        import ray  # noqa: F401

        # Ray's and Tune's notes to a file, unless -v (its logger as Ray's import set it up),
        # until Ray has stopped.
        stack.enter_context(ray_log_to_file())
        # Slow steps that overlap others, joined as the block ends: a new SQLite store's tables
        # (MLflow's migrations) are made while Ray starts, and Ray stops while the report is
        # written (`_ray_session`).
        background = stack.enter_context(ThreadPoolExecutor(max_workers=1))
        opening = background.submit(tracking.open_experiment, options.tracking_uri, spec.experiment)
        resumed = None
        if options.resume:  # the store exists (`check_tracking_uri`): open at once
            resumed = _resumable_parent(opening.result()[0], spec, options, key)
        # Before Ray starts and before a parent run saves the storage path: a folder that
        # cannot be written or is nearly full is refused here, not met by every trial.
        storage = (resumed.data.tags if resumed else {}).get(STORAGE_TAG, options.storage_path)
        check_storage(spec.configs(), storage, Path.cwd())
        if resumed is not None and resumed.data.tags.get(COMPLETE_TAG) == "true":
            # Every trial ended before; only the report was interrupted.
            logger.info(
                f"Resuming sweep {spec.experiment}: the report of parent run {resumed.info.run_id}"
            )
            client = opening.result()[0]
            failed = len(tracking.trial_runs(client, resumed, status="FAILED"))
            return _report(spec, options, client, resumed.info.run_id, failed, signals)
        parent_run_id, results, failed = _run_phases(
            spec, options, opening, background, key, resumed, signals
        )
        client = opening.result()[0]
        # A signal from here on (while the parent closes: held till then; before or during
        # the report) names the parent, which `--resume` reports.
        with resumable(parent_run_id):
            finished = _close_phases(spec, options, client, parent_run_id, results, signals)
            logger.info(
                f"{finished} of {len(results)} trials of the reported phase finished; "
                f"{failed} trials failed in all"
            )
            if finished == 0:
                signals.finished()  # closed FAILED: nothing to report or resume
                return max(failed, 1)
            return _report(spec, options, client, parent_run_id, failed, signals)


def _close_phases(spec, options, client, parent_run_id: str, results, signals) -> int:
    """Close the parent once its phases ran: complete, FINISHED (FAILED when no trial of the
    reported phase finished); returns how many finished. Raises NoReport (`dead_baseline`)
    when the baseline has no finished run: the parent is then left resumable, its failed
    baseline trials to run again (RERUN_ERRORED_TAG), or closed when a resume would not
    help."""
    finished = sum(
        1
        for result in results
        if result.error is None and not (result.metrics or {}).get("failure")
    )
    dead = dead_baseline(spec, results) if finished else None
    with signals.held():
        tracking.with_retries(
            lambda: _close_parent(client, parent_run_id, finished, dead),
            options.tracking_wait_s,
            "parent run",
        )
    if dead is not None:
        signals.finished()  # nothing to report; what is left is said in the line
        raise dead
    return finished


def _run_phases(spec, options, opening: Future, background, key: str, resumed, signals):
    """Ray up, the store open (`opening`: its client and the experiment's id), the parent run
    started (or `resumed`), the phases run: (parent run id, the reported phase's results,
    failed trials of all phases); Ray then stops in `background`. On a signal or a crash the
    runs left RUNNING are marked interrupted (`_interrupted`) once Ray is down."""
    parent_run_id = resumed.info.run_id if resumed is not None else None
    try:
        with _ray_session(options.address, signals, background) as cluster:
            client, experiment_id = opening.result()
            resources = trial_resources(spec.cpus_per_trial, options.trials_per_gpu, cluster)
            joined = bool(options.address or os.environ.get("RAY_ADDRESS"))
            check_gpus_present(options.trials_per_gpu, cluster, joined_cluster=joined)
            check_cpus_fit(resources["cpu"], cluster, alive_node_cpus(), joined)
            if resumed is not None:
                tags = resumed.data.tags
                tracking.continue_run(client, resumed)
                logger.info(
                    f"Resuming sweep {spec.experiment}: parent run {parent_run_id}, "
                    f"stage {tags[STAGE_TAG]}"
                )
            else:
                with signals.held():  # a parent run whose tags say how to resume it
                    parent_run_id, tags = _start_parent(client, experiment_id, spec, options, key)
                signals.raise_if_received()
            phases = TunePhases(
                spec, options, client, experiment_id, parent_run_id, tags, resources, signals
            )
            results, failed = strategy_named(spec.strategy).phases(phases).run()
            confirmed = run_confirmation(phases, results)
            results, failed = [*results, *confirmed], failed + count_failed(confirmed)
    except BaseException as error:  # a signal, or a crash: resumable either way
        # Ray is down: no trial writes any more. (Bad input is refused before any trial; a
        # resumed parent whose saved state is refused was set running again: marked too.)
        refused = isinstance(error, (ConfigError, DataError)) and resumed is None
        # A signal is an interruption even when Ray's compiled code re-raised it as another error.
        interruption = signal_behind(error)
        store_full = None
        if parent_run_id is not None and not refused:
            with signals.held():  # a parent run means the store was open
                store_full = _stopped(
                    opening.result()[0], parent_run_id, options, interruption or error
                )
        if interruption is not None:
            interruption.parent_run_id = parent_run_id
            if interruption is not error:
                raise interruption from None
            raise
        full = error if is_disk_full(error) else store_full
        if full is not None and not isinstance(error, StorageFull):
            raise StorageFull(_disk_full_line(options, full)) from None
        raise
    return parent_run_id, results, failed


def _stopped(client, parent_run_id: str, options: SweepOptions, error: BaseException):
    """Mark the runs interrupted. A store on a full disk may not take the update: the runs
    then stay RUNNING, which `--resume` continues all the same, and the store's error is
    returned (the disk being full is then why the sweep stopped); else None."""
    try:
        _interrupted(client, parent_run_id, options, error)
    except Exception as failure:
        if not is_disk_full(failure):
            raise
        logger.warning(
            "The tracking store is on the full disk: its runs stay RUNNING (--resume "
            "continues them)"
        )
        return failure
    return None


def _disk_full_line(options: SweepOptions, error: BaseException) -> str:
    what = disk_full_text(error)
    return (
        f"the disk is full ({what}); the sweep stopped and its state is kept: free space "
        f"(storage {_absolute_storage(options.storage_path)}, working folder {Path.cwd()}), "
        "then continue with --resume"
    )


def _resumable_parent(client, spec: SweepSpec, options: SweepOptions, key: str):
    experiment = client.get_experiment_by_name(spec.experiment)
    resumed = (
        tracking.find_resumable_parent(client, experiment.experiment_id, key)
        if experiment
        else None
    )
    if resumed is None:  # which settings differ from the unfinished sweep's, if there is one
        raise no_sweep_to_resume(
            client,
            experiment,
            sweep_text(spec),
            SWEEP_KEY_FIELDS + SOME_SWEEPS_FIELDS,
            options.tracking_uri,
        )
    return resumed


def _interrupted(client, parent_run_id: str, options: SweepOptions, error: BaseException) -> None:
    stopped = tracking.with_retries(
        lambda: tracking.mark_interrupted(client, parent_run_id),
        options.tracking_wait_s,
        "interrupted runs",
    )
    if not isinstance(error, SweepInterrupted):  # the driver crashed: say why on the parent
        tracking.set_tags(
            client, parent_run_id, {FAILURE_TAG: f"{type(error).__name__}: {error}"[:4000]}
        )
    logger.info(
        f"Parent run {parent_run_id} and {stopped} running trial runs marked KILLED, "
        "xlt.status=interrupted"
    )


@contextlib.contextmanager
def _full_disk_stops(options: SweepOptions):
    """A disk that fills while the report is written ends the sweep in one line (StorageFull),
    as during its trials: the parent is complete, and `--resume` writes the report."""
    try:
        yield
    except Exception as error:
        if is_disk_full(error) and not isinstance(error, StorageFull):
            raise StorageFull(_disk_full_line(options, error)) from None
        raise


@contextlib.contextmanager
def resumable(parent_run_id: str):
    """A stop signal from here on (raised as itself, or behind an error of Ray's compiled
    code) names the parent run, so the driver prints the `--resume` line, not "nothing was
    tracked yet"."""
    try:
        yield
    except BaseException as error:
        interruption = signal_behind(error)
        if interruption is not None:
            interruption.parent_run_id = parent_run_id
        raise


def _report(
    spec: SweepSpec, options: SweepOptions, client, parent_run_id: str, failed: int, signals
):
    """The report (interruptible: the parent is then left without `xlt.reported`, and
    `--resume` writes it); returns `failed`."""
    with resumable(parent_run_id), _full_disk_stops(options):
        # Imported in the block: a signal during the import (seconds) resumes the report too.
        from analysis.report import print_summary, report_sweep

        signals.raise_if_received()  # held while the parent was closed
        report = tracking.with_retries(
            lambda: report_sweep(
                options.tracking_uri,
                spec.experiment,
                parent_run_id,
                out_dir=str(Path(REPORTS) / spec.experiment / parent_run_id),
                register=True,  # a sweep's own report registers its champion
            ),
            options.tracking_wait_s,
            "report",
        )
    with signals.held():  # reported, then done: a signal from here on is only acknowledged
        tracking.with_retries(
            lambda: tracking.set_tags(client, parent_run_id, {REPORTED_TAG: "true"}),
            options.tracking_wait_s,
            "parent run",
        )
        signals.finished()
    print_summary(report)
    return failed


def _start_parent(
    client, experiment_id: str, spec: SweepSpec, options: SweepOptions, key: str
) -> tuple[str, dict]:
    """Start the sweep's parent run, its tags saying how to resume it; (its id, its tags)."""
    note = tracking.unfinished_sweep_note(client, experiment_id, key)
    if note is not None:  # a rerun without --resume: say what happens to the old sweep
        logger.warning(note)
    run_name = f"{spec.experiment}-{spec.preset}-{time.strftime('%Y%m%d-%H%M%S')}"
    tags = _parent_tags(spec, options, key, run_name)
    parent_run_id = tracking.start_parent_run(
        client, experiment_id, params=_parent_params(spec, options), tags=tags
    )
    if spec.paper_card is not None:
        tracking.log_departures(client, parent_run_id, spec.paper_card, spec.departures())
    # The sweep as a file: `--from-run` runs it again.
    client.log_text(parent_run_id, sweep_text(spec), SWEEP_FILE_ARTIFACT)
    what = strategy_named(spec.strategy).describe(spec)
    confirm = len(spec.confirmation_seeds())
    if confirm:
        what += f", then the selected and the baseline x {confirm} fresh seeds"
    logger.info(
        f"Sweep {spec.experiment} ({spec.preset}, {spec.strategy}): {what}; "
        f"MLflow {redact(options.tracking_uri)}, parent run {parent_run_id}"
    )
    return parent_run_id, tags


def _parent_tags(spec: SweepSpec, options: SweepOptions, key: str, run_name: str) -> dict:
    tags = {
        "mlflow.runName": run_name,
        **system_tags(),  # MLflow's own (source, git commit, user) and library versions
        SWEEP_KEY_TAG: key,
        RAY_NAME_TAG: run_name,
        STORAGE_TAG: _absolute_storage(options.storage_path),
        STAGE_TAG: spec.strategy,
        **spec.extra_tags,
        **strategy_named(spec.strategy).parent_tags(spec, run_name),
    }
    if spec.paper_card is not None:
        tags[PAPER_TAG] = spec.paper_card.paper
    return tags


def _parent_params(spec: SweepSpec, options: SweepOptions) -> dict:
    """The sweep's settings as the parent run's params; those left unset (None) are left out."""
    params = {
        "preset": spec.preset,
        "strategy": spec.strategy,
        "significance_test": spec.significance_test,
        **({"selection_metric": spec.selection_metric} if spec.selection_metric else {}),
        "log_models": spec.log_models,
        "seeds": ",".join(map(str, spec.seeds)),
        "n_configurations": len(spec.points),
        "confirm_seeds": ",".join(map(str, spec.confirmation_seeds())) or "none",
        **strategy_named(spec.strategy).parent_params(spec),
        "trials_per_gpu": options.trials_per_gpu,
        "max_failures": options.max_failures,
        **({"seed_rounds": ",".join(map(str, spec.seed_rounds))} if spec.seed_rounds else {}),
        **{f"base.{k}": v for k, v in spec.base.items()},
    }
    return {name: value for name, value in params.items() if value is not None}


def _close_parent(client, parent_run_id: str, finished: int, dead: NoReport | None = None):
    tags = client.get_run(parent_run_id).data.tags
    for stale in (FAILURE_TAG, RERUN_ERRORED_TAG):  # an earlier driver's, now resumed
        if stale in tags:
            client.delete_tag(parent_run_id, stale)
    if dead is not None and dead.rerun:  # resumable: not complete, the reason on it
        tracking.set_tags(
            client, parent_run_id, {FAILURE_TAG: str(dead)[:4000], RERUN_ERRORED_TAG: "true"}
        )
        client.set_terminated(parent_run_id, status="FAILED")
        return
    if dead is not None:
        tracking.set_tags(client, parent_run_id, {FAILURE_TAG: str(dead)[:4000]})
    tracking.set_tags(client, parent_run_id, {COMPLETE_TAG: "true"})
    # FAILED with nothing to report: a closed FAILED parent is not resumed (`is_done`).
    client.set_terminated(parent_run_id, status="FINISHED" if finished and not dead else "FAILED")


# Ray starts its workers at niceness 15 (its `worker_niceness`): beside any other CPU-bound
# process a trial then gets a few per cent of a core (measured: 4 % each beside two busy
# loops, 2026-12-02). Trials are the sweep's work: a local Ray runs them at normal priority.
# Ray also starts one idle worker per CPU for the first driver; Tune's trial actors never use
# them (each actor gets a process of its own), so they only took CPU from Ray's start.
LOCAL_RAY_CONFIG = {"worker_niceness": 0, "prestart_worker_first_driver": False}
# How often `shutdown_ray` looks whether Ray reset SIGTERM's handler.
RESTORE_EVERY_S = 0.005
# Ray's authentication mode: `token` or `disabled` (docs/usage.md#the-demo).
RAY_AUTH_MODE_ENV = "RAY_AUTH_MODE"


def _name_token_auth(address: str | None) -> None:
    """For a local Ray started here: token authentication, as Ray turns it on for a new local
    cluster (its token in ~/.ray/auth_token, made if missing), asked for by name, so that Ray
    does not warn that it chose it. Only before Ray's import, which reads the mode; a mode the
    user set is kept, and a cluster's (`address`, $RAY_ADDRESS) is its own."""
    if not (address or os.environ.get("RAY_ADDRESS")) and "ray" not in sys.modules:
        os.environ.setdefault(RAY_AUTH_MODE_ENV, "token")


@contextlib.contextmanager
def _ray_session(address: str | None, signals: StopSignals, pool: ThreadPoolExecutor):
    """Join `address` (or $RAY_ADDRESS), else start a local Ray; yields its resources. A Ray
    started here is shut down when the block ends: at once after an error (no trial writes
    any more once it returns), in `pool`'s thread after success, while the report is written
    (the shutdown waits a second or more for Ray's processes to exit)."""
    import ray

    started = not ray.is_initialized()
    try:
        if started:
            try:
                if address or os.environ.get("RAY_ADDRESS"):
                    ray.init(address=address, runtime_env=_worker_env())
                else:
                    # "local" starts a private Ray: a plain ray.init() would attach to the last
                    # cluster started on this machine (/tmp/ray/ray_current_cluster), which may
                    # be dead or not ours.
                    with sigterm_blocked():  # for Ray's processes: see `sigterm_blocked`
                        ray.init(
                            address="local",
                            include_dashboard=False,
                            runtime_env=_worker_env(),
                            _system_config=LOCAL_RAY_CONFIG,
                        )
            except SystemExit as exit:
                # ray.init's own SIGTERM handler (sys.exit(SIGTERM)) while it starts.
                if exit.code != signal.SIGTERM:
                    raise
                raise SweepInterrupted(signal.SIGTERM) from None
            signals.take_over()  # ray.init replaced the SIGTERM handler
        yield ray.cluster_resources()
    except BaseException:
        if started:
            shutdown_ray()
        raise
    if started:
        # Ray objects left in reference cycles (Tune's actor handles) are freed now, before
        # the shutdown starts: freed later by the report's garbage collection, in the main
        # thread while Ray stops in `pool`'s, an actor handle's `__del__` reaches the core
        # worker as it goes, and Ray ends the process with exit 1 (CI, 2026-12-06).
        gc.collect()
        pool.submit(shutdown_ray)


def shutdown_ray() -> None:
    """`ray.shutdown()`, SIGTERM's handler kept. Ray's C++ side resets SIGTERM to its default
    action early in the shutdown, under Python's feet (`signal.getsignal` still names the
    handler), and stopping Ray's processes then takes seconds: a SIGTERM meanwhile, while the
    report was written, killed the driver (exit -15, no report, no resume line). A watcher
    sets the handler's C function back within RESTORE_EVERY_S, through Python's documented
    `PyOS_getsig` / `PyOS_setsig` (the shutdown runs in a thread beside the report, where
    `signal.signal` may not be called)."""
    import ray

    api = ctypes.pythonapi
    api.PyOS_getsig.restype = api.PyOS_setsig.restype = ctypes.c_void_p
    api.PyOS_getsig.argtypes = [ctypes.c_int]
    api.PyOS_setsig.argtypes = [ctypes.c_int, ctypes.c_void_p]
    handler = api.PyOS_getsig(signal.SIGTERM)
    done = threading.Event()

    def keep_handler() -> None:
        while not done.wait(RESTORE_EVERY_S):
            if api.PyOS_getsig(signal.SIGTERM) != handler:
                api.PyOS_setsig(signal.SIGTERM, handler)

    watcher = threading.Thread(target=keep_handler, daemon=True)
    watcher.start()
    try:
        ray.shutdown()
    finally:
        done.set()
        watcher.join()
        api.PyOS_setsig(signal.SIGTERM, handler)


@contextlib.contextmanager
def sigterm_blocked():
    """SIGTERM blocked in this thread while the block runs, so that the processes a local
    `ray.init` starts inherit it blocked (a signal mask survives fork and exec; Ray blocks
    SIGINT in them the same way). A SIGTERM to the driver's whole process group (`timeout`,
    systemd, Slurm) then reaches the driver alone: before, Ray's GCS died with it and the
    driver hung 60 s, then exited 1 with its runs left RUNNING. The driver stops Ray's
    processes itself (`ray.shutdown`: SIGTERM, then SIGKILL a second later). A SIGTERM that
    comes to the driver meanwhile is delivered as the block ends."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _worker_env() -> dict:
    """The driver's XLT_PLUGINS, the trials' log level and the libraries' quiet settings
    (sweeps/running/library_output.py) for every worker, a cluster's included (whose nodes do not
    inherit the driver's environment)."""
    env = {PLUGINS_VARIABLE: os.environ.get(PLUGINS_VARIABLE), **worker_variables()}
    return {"env_vars": {name: value for name, value in env.items() if value}}


def _absolute_storage(path: str) -> str:
    return path if "://" in path else str(Path(path).resolve())
