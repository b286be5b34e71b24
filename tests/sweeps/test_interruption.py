"""`StopSignals`: what SIGINT and SIGTERM do to a sweep's driver at each moment (no Ray)."""

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
import types
from pathlib import Path

import pytest
from conftest import scaled_timeout
from tracking_stores import sqlite_uri, tracking_store

from sweeps.safety.interruption import (
    IMPORT_MACHINERY,
    RESEND_AFTER_S,
    TUNE_STOP_SIGNAL,
    StopSignals,
    SweepInterrupted,
    TuneEndedEarly,
    signal_behind,
    unfinished_trials,
)
from xlt_schema import FAILURE_TAG, TRIAL_ID_TAG


def _send(signum: int) -> None:
    # The handler runs in the main thread before the next bytecode after the signal.
    os.kill(os.getpid(), signum)


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_outside_tune_raises_with_the_shells_exit_code(signum, code):
    with StopSignals(), pytest.raises(SweepInterrupted) as raised:
        _send(signum)
    assert raised.value.exit_code == code and raised.value.parent_run_id is None


def test_handlers_are_restored_on_exit():
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    with StopSignals():
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # as ray.init does
    assert {s: signal.getsignal(s) for s in before} == before


def test_take_over_reinstalls_the_handler_ray_init_replaced():
    with StopSignals() as signals:
        signal.signal(signal.SIGTERM, lambda *_: None)
        signals.take_over()
        with pytest.raises(SweepInterrupted):
            _send(signal.SIGTERM)


def test_a_held_signal_is_recorded_and_raised_afterwards():
    with StopSignals() as signals:
        with signals.held():
            _send(signal.SIGTERM)
            recorded = signals.received
        assert recorded == signal.SIGTERM
        with pytest.raises(SweepInterrupted) as raised:
            signals.raise_if_received("after the update")
    assert raised.value.exit_code == 143 and "after the update" in str(raised.value)


def test_in_a_tune_fit_the_first_signal_calls_tunes_stop_and_a_second_stops_at_once():
    calls = []
    with StopSignals() as signals:
        with signals.tune_fit():
            # What Tune does early in `fit`: register its stop handler for SIGUSR1.
            signal.signal(TUNE_STOP_SIGNAL, lambda signum, frame: calls.append(signum))
            _send(signal.SIGTERM)
            assert calls == [signal.SIGTERM]  # Tune's graceful stop, no exception
            with pytest.raises(SweepInterrupted) as raised:
                _send(signal.SIGINT)
        # The first signal decides the exit status.
        assert raised.value.exit_code == 143 and signals.received == signal.SIGTERM


def test_a_signal_before_tune_registers_its_stop_raises():
    # A stale stop handler of an earlier fit must not swallow it: it is reset on entry.
    signal.signal(TUNE_STOP_SIGNAL, lambda *_: None)
    try:
        with StopSignals() as signals, signals.tune_fit(), pytest.raises(SweepInterrupted):
            _send(signal.SIGINT)
    finally:
        signal.signal(TUNE_STOP_SIGNAL, signal.SIG_DFL)


def _main_with(monkeypatch, tmp_path, outcome, argv=()):
    """`cli.main` on a tiny smoke sweep whose `run_sweep` does `outcome()` instead of running."""
    import sweeps.running.runner
    from sweeps import ear_xnli
    from sweeps.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(
        sweeps.running.runner, "run_sweep", lambda spec, options, signals: outcome()
    )
    uri = tracking_store(tmp_path)
    return main(ear_xnli, ["--tracking-uri", uri, "--set", "seeds=0", *argv])


def _interrupted(parent_run_id):
    error = SweepInterrupted(signal.SIGTERM, "phase grid stopped")
    error.parent_run_id = parent_run_id
    raise error


def test_an_interrupted_sweep_exits_143_and_prints_the_resume_command(
    monkeypatch, tmp_path, capsys
):
    import shlex
    import sys

    assert _main_with(monkeypatch, tmp_path, lambda: _interrupted("abc")) == 143
    error = capsys.readouterr().err
    assert "Traceback" not in error and "SIGTERM received; phase grid stopped" in error
    command = shlex.split(error.strip().splitlines()[-1])
    assert command[0] == sys.executable and command[1].endswith("sweeps/ear_xnli.py")
    assert command[-2:] == ["seeds=0", "--resume"] and command.count("--resume") == 1


def test_interrupted_before_the_parent_run_exists_says_to_start_again(
    monkeypatch, tmp_path, capsys
):
    assert _main_with(monkeypatch, tmp_path, lambda: _interrupted(None)) == 143
    assert "nothing was tracked yet; run the same command again" in capsys.readouterr().err


def test_a_driver_crash_exits_3_with_the_resume_command(monkeypatch, tmp_path, capsys):
    def crash():
        raise RuntimeError("a bug")

    assert _main_with(monkeypatch, tmp_path, crash) == 3
    error = capsys.readouterr().err
    assert "RuntimeError: a bug" in error and error.strip().endswith("--resume")


@pytest.mark.parametrize("failed, code", [(0, 0), (2, 1)])
def test_exit_status_of_a_sweep_that_ran_to_its_end(monkeypatch, tmp_path, failed, code):
    assert _main_with(monkeypatch, tmp_path, lambda: failed) == code


def test_a_second_signal_names_itself_and_keeps_the_first_signals_exit_status():
    with StopSignals() as signals:
        with signals.tune_fit():
            signal.signal(TUNE_STOP_SIGNAL, lambda signum, frame: None)
            _send(signal.SIGINT)
            with pytest.raises(SweepInterrupted) as raised:
                _send(signal.SIGTERM)
    assert raised.value.exit_code == 130
    assert str(raised.value) == "SIGINT received; SIGTERM again: stopped at once"


def test_once_the_sweep_is_reported_a_signal_is_only_acknowledged(capsys):
    """A signal during Ray's shutdown, after the report: exit 0, nothing left to resume
    (it raised before, and the driver said "continue with --resume" though nothing could)."""
    with StopSignals() as signals:
        with signals.held():  # the report being marked written
            _send(signal.SIGTERM)
            signals.finished()
        _send(signal.SIGINT)  # Ray shutting down: no SweepInterrupted
    out = capsys.readouterr().out
    assert out.count("received: the sweep has already finished; exiting") == 2


def _wait_for_the_raise() -> None:
    """Sleep until a put-off raise comes (then SweepInterrupted leaves here), at most
    scaled_timeout(20) seconds."""
    deadline = time.monotonic() + scaled_timeout(20)
    while time.monotonic() < deadline:
        time.sleep(0.01)


class _FrameOfTheImport:
    """A meta path finder that keeps the frame of importlib's code that asked it."""

    frame = None

    def find_spec(self, name, path=None, target=None):
        if name == "a_module_nobody_has":
            _FrameOfTheImport.frame = sys._getframe(1)
        return None


def _a_frame_of_importlib() -> types.FrameType:
    finder = _FrameOfTheImport()
    sys.meta_path.insert(0, finder)
    try:
        with contextlib.suppress(ImportError):
            import a_module_nobody_has  # noqa: F401
    finally:
        sys.meta_path.remove(finder)
    frame = _FrameOfTheImport.frame
    assert frame.f_code.co_filename.startswith(IMPORT_MACHINERY)
    return frame


def test_a_signal_inside_importlibs_code_raises_a_moment_later_outside_it():
    frame = _a_frame_of_importlib()
    with StopSignals() as signals:
        signals._handle(signal.SIGINT, frame)  # as if SIGINT came while importlib ran
        with pytest.raises(SweepInterrupted) as raised:
            _wait_for_the_raise()
    assert raised.value.exit_code == 130
    assert str(raised.value) == "SIGINT received"  # the first signal, sent again


def test_a_raise_put_off_while_ray_init_held_the_handler_is_made_when_it_is_taken_back():
    frame = _a_frame_of_importlib()
    with StopSignals() as signals:
        signal.signal(signal.SIGTERM, lambda *_: None)  # ray.init's, while it starts
        signals._handle(signal.SIGTERM, frame)  # as if SIGTERM came while importlib ran
        time.sleep(RESEND_AFTER_S * 10)  # the resend finds another handler: none is sent
        with pytest.raises(SweepInterrupted) as raised:
            signals.take_over()
    assert raised.value.exit_code == 143
    assert str(raised.value) == "SIGTERM received"


def test_a_resend_already_on_its_way_when_the_handler_is_taken_back_raises_once():
    # The resend's timer sends the signal while our handler is installed, and the main thread
    # calls take_over before the signal is delivered (here: held back by the thread's mask).
    # One raise must come, as the first signal: take_over raising it too made the delivered
    # signal a second one, "stopped at once", while the first raise unwound.
    frame = _a_frame_of_importlib()
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTERM])
    try:
        with StopSignals() as signals:
            signals._handle(signal.SIGTERM, frame)  # as if SIGTERM came while importlib ran
            deadline = time.monotonic() + scaled_timeout(20)
            while signal.SIGTERM not in signal.sigpending() and time.monotonic() < deadline:
                time.sleep(0.01)
            assert signal.SIGTERM in signal.sigpending(), "the resend was not sent"
            try:
                signals.take_over()  # the signal is on its way: nothing is raised here
            except SweepInterrupted:
                pytest.fail("take_over raised the signal that was already sent again")
            with pytest.raises(SweepInterrupted) as raised:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM])
                _wait_for_the_raise()
            time.sleep(RESEND_AFTER_S * 10)  # a second signal would raise here
    finally:
        signal.sigtimedwait([signal.SIGTERM], 0)  # one still held back would end pytest
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM])
    assert str(raised.value) == "SIGTERM received"


class _DropsWhatItRaises:
    def __del__(self):
        signal.raise_signal(signal.SIGTERM)  # the handler runs here; Python drops its raise


def test_a_raise_that_python_drops_is_made_again():
    with StopSignals():
        with pytest.raises(SweepInterrupted) as raised:
            _DropsWhatItRaises()  # made and dropped: its __del__ runs now
            _wait_for_the_raise()
    assert raised.value.exit_code == 143
    assert str(raised.value) == "SIGTERM received"


# A SIGINT arriving while the main thread waits for the import lock in importlib's code (as
# the smoke sweep's driver does while its store opens in a thread that imports MLflow): the
# handler runs as the lock is taken, before importlib's `try`. Raised there, the lock stayed
# held and the next import in another thread waited forever (the CI drill of 2026-12-03).
SIGNAL_IN_AN_IMPORT = textwrap.dedent(
    """
    import _imp, importlib, signal, sys, threading, time
    from sweeps.safety.interruption import IMPORT_MACHINERY, StopSignals, SweepInterrupted

    sys.path.insert(0, sys.argv[1])
    main = threading.main_thread().ident
    held = threading.Event()

    def hold_the_import_lock_then_signal():
        _imp.acquire_lock()
        held.set()
        try:  # until the main thread waits for the lock inside importlib's code
            while not sys._current_frames()[main].f_code.co_filename.startswith(
                IMPORT_MACHINERY
            ):
                time.sleep(0.001)
            time.sleep(0.1)
            signal.pthread_kill(main, signal.SIGINT)
            time.sleep(0.1)
        finally:
            _imp.release_lock()

    with StopSignals():
        threading.Thread(target=hold_the_import_lock_then_signal).start()
        held.wait()
        try:
            import first_module
            time.sleep(30)
            print("not interrupted")
        except SweepInterrupted as interruption:
            print(f"interrupted: {interruption}")
    importer = threading.Thread(
        target=importlib.import_module, args=("second_module",), daemon=True
    )
    importer.start()
    importer.join(10)
    print("the import lock is", "still held" if importer.is_alive() else "free")
    """
)


def test_a_signal_while_importlib_takes_the_import_lock_leaves_the_lock_free(tmp_path):
    for name in ("first_module", "second_module"):
        (tmp_path / f"{name}.py").write_text("")
    done = subprocess.run(
        [sys.executable, "-c", SIGNAL_IN_AN_IMPORT, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=scaled_timeout(60),
    )
    assert done.stdout.splitlines() == [
        "interrupted: SIGINT received",
        "the import lock is free",
    ], done.stderr


def _raised_in_rays_compiled_code():
    """What a second Ctrl-C during Tune's `CoreWorker.wait` becomes (seen with Ray 2.60): a
    SystemError caused by the handler's SweepInterrupted."""
    try:
        raise SweepInterrupted(signal.SIGINT, "SIGINT again: stopped at once")
    except SweepInterrupted as interruption:
        raise SystemError(
            "<cyfunction CoreWorker.wait> returned a result with an exception set"
        ) from interruption


def test_signal_behind_finds_the_interruption_a_wrapped_error_stands_for():
    with pytest.raises(SystemError) as raised:
        _raised_in_rays_compiled_code()
    assert signal_behind(raised.value).exit_code == 130
    assert signal_behind(RuntimeError("a bug")) is None
    unrelated = RuntimeError("a bug while handling")
    unrelated.__context__ = SweepInterrupted(signal.SIGINT)  # only a cause counts
    assert signal_behind(unrelated) is None


def test_a_second_ctrl_c_wrapped_by_ray_exits_130_in_one_line(monkeypatch, tmp_path, capsys):
    """Issue 22 item 10: it exited 3 with a SystemError traceback."""
    assert _main_with(monkeypatch, tmp_path, _raised_in_rays_compiled_code) == 130
    error = capsys.readouterr().err
    assert "Traceback" not in error and "SystemError" not in error
    assert error.startswith("interrupted (SIGINT received; SIGINT again: stopped at once)")


class _Result:
    """A stand-in for a Ray Tune `Result`: its last metrics and its error."""

    def __init__(self, trial_id=None, error=None, config=None, **metrics):
        self.metrics = {**({"trial_id": trial_id} if trial_id else {}), **metrics}
        self.error = error
        self.checkpoint = None
        self.config = config or {}  # the trial's space (`TrialRequest.to_space`)


class ActorDiedError(RuntimeError):
    """Named as Ray's: what Tune's result holds for a trial whose worker process died."""


def test_a_trial_whose_worker_died_is_failed_not_unfinished():
    # Tune saves such a trial PENDING, though its result holds the error (Ray 2.60).
    statuses = {"a": "TERMINATED", "b": "PENDING", "c": "ERROR"}
    lost = _Result("b", ActorDiedError("the actor died"))
    assert unfinished_trials(statuses, [_Result("a"), lost, _Result("c", ValueError())]) == 0
    assert unfinished_trials(statuses, [_Result("a"), _Result("b"), _Result("c")]) == 1
    # A worker that died before its first report: its result has no trial id.
    assert unfinished_trials(statuses, [_Result("a"), _Result(None, ActorDiedError())]) == 0
    assert unfinished_trials({**statuses, "d": "RUNNING"}, [_Result(None, ActorDiedError())]) == 1


class _FakeTuner:
    """`Tuner.fit` without Ray: each trial's MLflow run made as its trainable would, the
    results and the saved statuses given."""

    def __init__(self, phases, trials: dict, statuses: dict):
        self.phases, self.trials, self.statuses = phases, trials, statuses

    def fit(self):
        from sweeps.records import tracking

        results = []
        for trial_id, (run_status, result) in self.trials.items():
            run_id = tracking.find_or_create_trial_run(
                self.phases.client,
                self.phases.request.experiment_id,
                self.phases.parent_run_id,
                trial_id=trial_id,
                tags={"xlt.role": "trial"},
                run_name=trial_id,
            )
            if run_status != "RUNNING":
                self.phases.client.set_terminated(run_id, status=run_status)
            results.append(result)
        return results


def _sweep_without_ray(monkeypatch, tmp_path, fit_outcome, resume=False, statuses=None):
    """`run_sweep` of a one-seed smoke sweep in a SQLite store under `tmp_path`, with Ray,
    the resource checks and the report stubbed out; `fit_outcome(phases)` stands for
    `Tuner.fit` (a _FakeTuner, or raises), `statuses` for the state Tune saved. Returns
    (run_sweep's value, the store's URI)."""
    from sweep_helpers import smoke_spec

    import sweeps.running.runner as runner
    from sweeps.running.tune_phases import TunePhases

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(runner, "_ray_session", lambda *a: contextlib.nullcontext({"CPU": 2}))
    monkeypatch.setattr(runner, "trial_resources", lambda *a: {"cpu": 1})
    for name in ("check_gpus_present", "check_cpus_fit", "alive_node_cpus", "check_storage"):
        monkeypatch.setattr(runner, name, lambda *a, **k: None)
    monkeypatch.setattr(runner, "_report", lambda spec, options, client, run, failed, s: failed)
    monkeypatch.setattr(TunePhases, "grid_tuner", lambda self, *a: fit_outcome(self))
    saved = [types.SimpleNamespace(trial_id=t, status=s) for t, s in (statuses or STATUSES).items()]
    monkeypatch.setattr(TunePhases, "saved_trials", lambda self, phase: saved)
    uri = tracking_store(tmp_path)
    spec = smoke_spec("ear_xnli", ["seeds=0"])
    options = runner.SweepOptions(tracking_uri=uri, resume=resume, max_failures=0)
    return runner.run_sweep(spec, options), uri


# The smoke sweep with one seed: three trials (the baseline and two EAR configurations).
STATUSES = {"t1": "TERMINATED", "t2": "PENDING", "t3": "TERMINATED"}


def _parent_and_trials(uri):
    from sweep_helpers import child_runs, parent_runs

    (parent,) = parent_runs(uri)
    return parent, {run.data.tags[TRIAL_ID_TAG]: run for run in child_runs(uri)}


def test_a_lost_worker_is_a_failed_trial_with_its_cause_not_a_ctrl_c(monkeypatch, tmp_path):
    """Issue 22 item 6: with --max-failures 0 it was reported as SIGINT (exit 130)."""
    trials = {
        "t1": ("FINISHED", _Result("t1", None, trial_complete=True)),
        "t2": ("RUNNING", _Result("t2", ActorDiedError("The actor died unexpectedly"))),
        "t3": ("FINISHED", _Result("t3", None, trial_complete=True)),
    }
    failed, uri = _sweep_without_ray(
        monkeypatch, tmp_path, lambda phases: _FakeTuner(phases, trials, STATUSES)
    )
    assert failed == 1  # the report is written from the finished trial; the CLI exits 1
    parent, runs = _parent_and_trials(uri)
    assert parent.info.status == "FINISHED" and "xlt.status" not in parent.data.tags
    assert runs["t1"].info.status == "FINISHED" == runs["t3"].info.status
    assert runs["t2"].info.status == "FAILED"
    assert runs["t2"].data.tags[FAILURE_TAG] == "ActorDiedError: The actor died unexpectedly"


def test_trials_left_unfinished_without_a_signal_are_a_fault_not_an_interruption(
    monkeypatch, tmp_path
):
    trials = {
        "t1": ("FINISHED", _Result("t1")),
        "t2": ("RUNNING", _Result("t2")),
        "t3": ("FINISHED", _Result("t3")),
    }
    with pytest.raises(TuneEndedEarly, match="1 of 3 trials unfinished, without a stop signal"):
        _sweep_without_ray(
            monkeypatch, tmp_path, lambda phases: _FakeTuner(phases, trials, STATUSES)
        )
    parent, _ = _parent_and_trials(sqlite_uri(tmp_path))
    assert parent.data.tags[FAILURE_TAG].startswith("TuneEndedEarly: phase grid stopped")


def test_a_wrapped_second_signal_leaves_no_failure_tag_and_a_resume_clears_a_stale_one(
    monkeypatch, tmp_path
):
    """Issue 22 item 10: `failure=SystemError` was left on the parent, even after a resume."""

    def crash(phases):
        raise RuntimeError("a bug")

    def second_ctrl_c(phases):
        _raised_in_rays_compiled_code()

    with pytest.raises(RuntimeError):
        _sweep_without_ray(monkeypatch, tmp_path, crash)
    uri = sqlite_uri(tmp_path)
    assert _parent_and_trials(uri)[0].data.tags[FAILURE_TAG] == "RuntimeError: a bug"
    with pytest.raises(SweepInterrupted) as raised:
        _sweep_without_ray(monkeypatch, tmp_path, second_ctrl_c, resume=True)
    parent, _ = _parent_and_trials(uri)
    assert raised.value.exit_code == 130 and raised.value.parent_run_id == parent.info.run_id
    assert parent.data.tags["xlt.status"] == "interrupted"
    assert parent.data.tags[FAILURE_TAG] == "RuntimeError: a bug"  # the earlier crash's, kept
    trials = {trial: ("FINISHED", _Result(trial)) for trial in STATUSES}
    finished = dict.fromkeys(STATUSES, "TERMINATED")
    failed, _ = _sweep_without_ray(
        monkeypatch,
        tmp_path,
        lambda phases: _FakeTuner(phases, trials, finished),
        resume=True,
        statuses=finished,
    )
    parent, _ = _parent_and_trials(uri)
    assert failed == 0 and parent.info.status == "FINISHED"
    assert FAILURE_TAG not in parent.data.tags and "xlt.status" not in parent.data.tags


# --- a dead baseline (issue 41, item 3) -----------------------------------------------------


def _smoke_space(point: dict, seed: int = 0) -> dict:
    from sweeps.spec.trial_contract import TrialRequest

    request = TrialRequest(
        base={"task": "xnli"}, phase="grid", experiment_id="1", parent_run_id="p", threads=1
    )
    return {**request.to_space(), "point": point, "seed": seed}


def _smoke_points():
    """The one-seed smoke sweep's baseline point and its two EAR points."""
    from sweep_helpers import smoke_spec

    spec = smoke_spec("ear_xnli", ["seeds=0"])
    (baseline,) = spec.baseline_points()
    return baseline, [point for point in spec.points if point != baseline]


def _fake_fit(trials: dict, statuses: dict):
    return lambda phases: _FakeTuner(phases, trials, statuses)


def test_a_dead_baseline_ends_without_a_report_and_a_resume_reruns_its_trial(monkeypatch, tmp_path):
    """With --max-failures 0 the baseline's worker died: before, the report raised "the
    sweep has no finished baseline runs" (exit 3, a traceback, `--resume` failing the same
    way for ever). Now NoReport (one line, exit 1: `test_a_dead_baseline_...one_line`), the
    parent left resumable, and `--resume` asks Tune to run the errored trial again."""
    from sweeps.safety.dead_baseline import RERUN_ERRORED_TAG, NoReport
    from xlt_schema import COMPLETE_TAG

    baseline, (ear1, ear2) = _smoke_points()
    ended = {
        "t2": ("FINISHED", _Result("t2", config=_smoke_space(ear1), trial_complete=True)),
        "t3": ("FINISHED", _Result("t3", config=_smoke_space(ear2), trial_complete=True)),
    }
    died = _Result("t1", ActorDiedError("The actor died unexpectedly"), _smoke_space(baseline))
    trials = {"t1": ("RUNNING", died), **ended}
    statuses = {"t1": "PENDING", "t2": "TERMINATED", "t3": "TERMINATED"}  # as Tune saves it
    with pytest.raises(NoReport) as dead:
        _sweep_without_ray(monkeypatch, tmp_path, _fake_fit(trials, statuses), statuses=statuses)
    message = str(dead.value)
    assert dead.value.rerun and message.startswith("no report can be made: the baseline")
    assert "finetune seed=0 (ActorDiedError: The actor died unexpectedly)" in message
    assert "\n" not in message
    parent, runs = _parent_and_trials(sqlite_uri(tmp_path))
    assert parent.info.status == "FAILED" and COMPLETE_TAG not in parent.data.tags
    assert parent.data.tags[RERUN_ERRORED_TAG] == "true"
    assert runs["t1"].info.status == "FAILED" and runs["t2"].info.status == "FINISHED"

    asked = []

    finished = dict.fromkeys(statuses, "TERMINATED")

    def fixed(phases):  # what Tune's restore with resume_errored=True then runs: t1 alone
        asked.append(phases.tags.get(RERUN_ERRORED_TAG))
        again = _Result("t1", config=_smoke_space(baseline), trial_complete=True)
        rerun = _FakeTuner(phases, {"t1": ("FINISHED", again)}, finished)
        # Tune's results: t1's, then t2's and t3's as it kept them
        return types.SimpleNamespace(fit=lambda: rerun.fit() + [r for _, r in ended.values()])

    failed, uri = _sweep_without_ray(monkeypatch, tmp_path, fixed, resume=True, statuses=finished)
    parent, runs = _parent_and_trials(uri)
    assert failed == 0 and asked == ["true"]
    assert parent.info.status == "FINISHED" and parent.data.tags[COMPLETE_TAG] == "true"
    assert FAILURE_TAG not in parent.data.tags and RERUN_ERRORED_TAG not in parent.data.tags
    assert {run.info.status for run in runs.values()} == {"FINISHED"}


def test_a_baseline_that_diverged_is_closed_for_a_resume_would_not_help(monkeypatch, tmp_path):
    from sweeps.safety.dead_baseline import NoReport
    from xlt_schema import COMPLETE_TAG

    baseline, (ear1, ear2) = _smoke_points()
    diverged = _Result(
        "t1", config=_smoke_space(baseline), failure="TrainingDiverged: loss became nan at step 3"
    )
    trials = {
        "t1": ("FAILED", diverged),
        "t2": ("FINISHED", _Result("t2", config=_smoke_space(ear1), trial_complete=True)),
        "t3": ("FINISHED", _Result("t3", config=_smoke_space(ear2), trial_complete=True)),
    }
    statuses = dict.fromkeys(trials, "TERMINATED")
    with pytest.raises(NoReport) as dead:
        _sweep_without_ray(monkeypatch, tmp_path, _fake_fit(trials, statuses), statuses=statuses)
    assert not dead.value.rerun and "start the sweep again without --resume" in str(dead.value)
    parent, _ = _parent_and_trials(sqlite_uri(tmp_path))
    # Closed: `--resume` finds nothing to continue (no loop), the reason on the parent.
    assert parent.info.status == "FAILED" and parent.data.tags[COMPLETE_TAG] == "true"
    assert parent.data.tags[FAILURE_TAG] == str(dead.value)


def test_a_sweep_whose_baseline_finished_once_is_reported():
    from sweep_helpers import smoke_spec

    from sweeps.safety.dead_baseline import dead_baseline

    baseline, (ear1, _) = _smoke_points()
    spec = smoke_spec("ear_xnli", ["seeds=0,1"])
    died = _Result("t1", ActorDiedError("died"), _smoke_space(baseline, 0))
    finished = _Result("t2", config=_smoke_space(baseline, 1), trial_complete=True)
    ear = _Result("t3", config=_smoke_space(ear1), trial_complete=True)
    assert dead_baseline(spec, [died, finished, ear]) is None
    assert dead_baseline(spec, [died, ear]) is not None


def test_a_resume_asked_to_rerun_errored_trials_restores_them(monkeypatch):
    """What `--resume` of a dead baseline's parent asks Tune: its errored trials resumed."""
    from ray import tune

    from sweeps.running import tune_phases
    from sweeps.safety.dead_baseline import RERUN_ERRORED_TAG

    asked = {}
    monkeypatch.setattr(tune.Tuner, "can_restore", staticmethod(lambda path: True))
    monkeypatch.setattr(
        tune.Tuner, "restore", staticmethod(lambda path, trainable, **how: asked.update(how))
    )
    monkeypatch.setattr(tune_phases, "check_saved_state", lambda path, planned: [])
    phases = types.SimpleNamespace(
        path=lambda phase: "/nonexistent/sweep-grid",
        restored_phases=set(),
        tags={RERUN_ERRORED_TAG: "true"},
        trainable=lambda: None,
    )
    tune_phases.TunePhases.restorable(phases, "grid")
    assert asked["resume_errored"] is True and asked["restart_errored"] is False
    phases.tags = {}
    tune_phases.TunePhases.restorable(phases, "grid")
    assert asked["resume_errored"] is False


def test_a_dead_baseline_ends_the_command_in_one_line_and_exit_1(monkeypatch, tmp_path, capsys):
    import sweeps.running.runner
    from sweeps import ear_xnli
    from sweeps.cli import EXIT_TRIALS_FAILED, main
    from sweeps.safety.dead_baseline import NoReport

    def dead():
        raise NoReport("no report can be made: the baseline has no finished run ...", True)

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sweeps.running.runner, "run_sweep", lambda spec, options, signals: dead())
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    assert main(ear_xnli, ["--tracking-uri", uri, "--set", "seeds=0"]) == EXIT_TRIALS_FAILED
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error: no report can be made") and line.endswith("--resume")


# --- SIGTERM to the driver's whole process group (issue 41, item 2) -------------------------

STARTS_A_CHILD_WITH_SIGTERM_BLOCKED = """
import subprocess, sys, time
from sweeps.running.runner import sigterm_blocked

with sigterm_blocked():  # as a local ray.init starts Ray's processes
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
print(child.pid, flush=True)
time.sleep(600)
"""


def _blocked_signals(pid: int) -> int:
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return int(next(line for line in lines if line.startswith("SigBlk:")).split()[1], 16)


def test_a_group_sigterm_reaches_the_driver_but_not_the_processes_ray_starts(tmp_path):
    """What `timeout -s TERM`, systemd and Slurm send: before, Ray's GCS died with the driver's
    group and the driver hung, then exited 1. The processes a local `ray.init` starts inherit
    SIGTERM blocked (`runner.sigterm_blocked`); the driver's own mask is restored."""
    driver = subprocess.Popen(
        [sys.executable, "-c", STARTS_A_CHILD_WITH_SIGTERM_BLOCKED],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    child = int(driver.stdout.readline())
    try:
        assert not _blocked_signals(driver.pid) & (1 << (signal.SIGTERM - 1))
        assert _blocked_signals(child) & (1 << (signal.SIGTERM - 1))
        os.killpg(driver.pid, signal.SIGTERM)  # the whole group, the child in it
        assert driver.wait(timeout=scaled_timeout(60)) == -signal.SIGTERM
        assert os.getpgid(child) == driver.pid  # in the group that got SIGTERM, and alive
        assert Path(f"/proc/{child}/status").read_text().split("State:")[1].split()[0] != "Z"
    finally:
        os.kill(child, signal.SIGKILL)
        driver.kill()
        driver.wait()


def _catches_sigterm() -> bool:
    lines = Path(f"/proc/{os.getpid()}/status").read_text().splitlines()
    caught = int(next(line for line in lines if line.startswith("SigCgt:")).split()[1], 16)
    return bool(caught & (1 << (signal.SIGTERM - 1)))


def test_while_ray_shuts_down_sigterm_keeps_its_handler(monkeypatch):
    """Ray's C++ side resets SIGTERM to its default action early in `ray.shutdown` (which the
    driver runs beside the report), then stops Ray's processes for seconds: a SIGTERM then
    killed the driver (exit -15, no report, no resume line; found by the SIGTERM drill)."""
    import ctypes
    import threading

    import ray

    from sweeps.running.runner import shutdown_ray

    api = ctypes.pythonapi
    api.PyOS_setsig.argtypes = [ctypes.c_int, ctypes.c_void_p]
    api.PyOS_setsig.restype = ctypes.c_void_p
    reset, stop = threading.Event(), threading.Event()

    def ray_shutdown():  # as Ray's: SIG_DFL at the C level, then its processes stopped
        api.PyOS_setsig(signal.SIGTERM, 0)
        reset.set()
        stop.wait(scaled_timeout(60))

    monkeypatch.setattr(ray, "shutdown", ray_shutdown)
    previous = signal.signal(signal.SIGTERM, lambda *args: None)
    shutdown = threading.Thread(target=shutdown_ray)
    try:
        shutdown.start()
        assert reset.wait(scaled_timeout(60))
        deadline = time.monotonic() + scaled_timeout(60)
        while not _catches_sigterm() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _catches_sigterm() and shutdown.is_alive()  # back while Ray still shuts down
    finally:
        stop.set()
        shutdown.join()
        signal.signal(signal.SIGTERM, previous)
