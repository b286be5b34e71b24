"""SIGINT and SIGTERM stop a sweep cleanly: `StopSignals` routes them to Ray Tune's own
graceful stop while a Tune experiment runs, and raises `SweepInterrupted` anywhere else.

Tune handles a first Ctrl-C itself: it leaves its loop, saves the experiment state (the
running trials stay RUNNING there, so `Tuner.restore` continues them from their last
checkpoints), then stops the trials. It does nothing for SIGTERM, and `ray.init` installs a
SIGTERM handler that exits at once. Here both signals take that graceful path; a second
signal stops at once (Tune's periodic state snapshot is then what a resume starts from),
with the first one's exit status: raised wherever the main thread is, it may come back
wrapped (Ray's compiled `CoreWorker.wait` re-raises it as a SystemError), which
`signal_behind` sees through. Once the report is written (`finished`) a signal is only
acknowledged.

Raised wherever the main thread is, except where a raise would do harm: inside importlib's
own code (which takes the import lock before its `try`: raised there, the lock stays held and
the next import in another thread, such as MLflow's in the store's opening, waits forever),
the raise waits for the signal to be sent again a moment later; and one that Python drops (a
raise in a `__del__` or a weakref callback goes to `sys.unraisablehook`) is sent again too.

Only a real signal is an interruption: a phase whose trials Tune left unfinished without one
is a `TuneEndedEarly` fault, and a trial whose worker died is a failed trial
(`unfinished_trials`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading

logger = logging.getLogger(__name__)

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# Tune installs its own SIGINT handler in `fit` unless this is set; we call its stop ourselves.
TUNE_SIGINT_ENV = "TUNE_DISABLE_SIGINT_HANDLER"
# Tune's stop handler is always registered for SIGUSR1 during `fit` (ray/tune/tune.py).
TUNE_STOP_SIGNAL = signal.SIGUSR1
# The file name of importlib's frozen code: no raise in its frames (`StopSignals._handle`).
IMPORT_MACHINERY = "<frozen importlib."
# After this long a signal whose raise was put off is sent to the main thread again.
RESEND_AFTER_S = 0.02
# The statuses of a trial Tune saw to its end (returned, stopped by ASHA, or errored).
ENDED_STATUSES = ("TERMINATED", "ERROR")


class SweepInterrupted(BaseException):
    """The driver got SIGINT or SIGTERM. A BaseException, like KeyboardInterrupt, so that no
    `except Exception` on the way (a retry loop, a library) swallows it."""

    def __init__(self, signum: int, detail: str = ""):
        self.signum = signum
        # The sweep's parent run when there was one (`--resume` continues it), else None.
        self.parent_run_id: str | None = None
        name = signal.Signals(signum).name
        super().__init__(f"{name} received; {detail}" if detail else f"{name} received")

    @property
    def exit_code(self) -> int:
        """The shell's convention for a process ended by a signal: 130 SIGINT, 143 SIGTERM."""
        return 128 + self.signum


class TuneEndedEarly(RuntimeError):
    """Tune's loop ended with trials that neither ended nor failed, and no stop signal reached
    the driver: a fault of Tune or Ray, reported as such (never as a Ctrl-C); what ended is
    kept and `--resume` continues the rest."""


def signal_behind(error: BaseException) -> SweepInterrupted | None:
    """The SweepInterrupted that `error` is, or was caused by; else None. A stop signal's
    handler raises wherever the main thread is, and Ray's compiled code it may land in (a
    second Ctrl-C during `CoreWorker.wait`) re-raises it as a SystemError caused by it."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, SweepInterrupted):
            return error
        seen.add(id(error))
        error = error.__cause__
    return None


def unfinished_trials(statuses: dict[str, str], results) -> int:
    """How many trials of a finished `Tuner.fit` neither ended nor failed: `statuses` are the
    trials' statuses in the experiment state Tune saved last (by trial id), `results` its
    ResultGrid. A trial whose worker died (Tune's ActorDiedError, `--max-failures` used up)
    is saved PENDING although its result holds the error: it failed, it is not unfinished.
    An errored result without a trial id (no report before its worker died) is taken to be
    one of the unended trials."""
    errored = [(result.metrics or {}).get("trial_id") for result in results if result.error]
    unended = {trial for trial, status in statuses.items() if status not in ENDED_STATUSES}
    anonymous = sum(trial is None for trial in errored)
    return max(0, len(unended - set(errored)) - anonymous)


class StopSignals:
    """While entered (main thread only; elsewhere it does nothing), SIGINT and SIGTERM:

    - inside `tune_fit()`: the first one ends the Tune experiment gracefully (Tune's own
      stop), and `raise_if_received` raises SweepInterrupted after it;
    - inside `held()`: are recorded only, so that a short update of the tracking store is
      not cut in half;
    - after `finished()`: are acknowledged only (the sweep's work is done);
    - anywhere else: raise SweepInterrupted at once (a later signal too: "stop at once"),
      or a moment later where a raise would do harm or be dropped (the module's docstring).
    """

    def __init__(self):
        self.received: int | None = None
        self._mode = "raise"
        self._saved: dict[int, object] = {}
        self._active = False
        self._put_off = PutOffRaise(self._handle)
        # The last raise made, (signal, first): to make it again if Python drops it.
        self._last_raise: tuple[int, bool] | None = None

    def __enter__(self) -> StopSignals:
        self._active = threading.current_thread() is threading.main_thread()
        if self._active:
            self._saved = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
            self._saved_env = os.environ.get(TUNE_SIGINT_ENV)
            os.environ[TUNE_SIGINT_ENV] = "1"
            self._saved_unraisablehook = sys.unraisablehook
            sys.unraisablehook = self._unraisable
            self.take_over()
        return self

    def __exit__(self, *exc) -> None:
        if not self._active:
            return
        for signum, handler in self._saved.items():
            signal.signal(signum, handler)
        sys.unraisablehook = self._saved_unraisablehook
        if self._saved_env is None:
            os.environ.pop(TUNE_SIGINT_ENV, None)
        else:
            os.environ[TUNE_SIGINT_ENV] = self._saved_env

    def take_over(self) -> None:
        """(Re)install the handlers: `ray.init` replaces the SIGTERM handler with its own. A
        raise put off while it was replaced (its resend found another handler) is made now."""
        if not self._active:
            return
        with self._put_off.lock:
            for signum in STOP_SIGNALS:
                signal.signal(signum, self._handle)
            if self._put_off.sent:  # on its way to `_handle`, which raises it
                return
            pending, self._put_off.pending = self._put_off.pending, None
        if pending is not None and self._mode == "raise":
            self._raise(*pending)

    @contextlib.contextmanager
    def tune_fit(self):
        """Around `Tuner.fit`: a first signal ends the fit gracefully (then the caller records
        what ended and calls `raise_if_received`); a second one raises at once."""
        self.take_over()
        if self._active:
            # Ignored until Tune registers its stop handler for it early in `fit`; a signal
            # before that raises SweepInterrupted (no trial has started yet).
            saved_usr1 = signal.signal(TUNE_STOP_SIGNAL, signal.SIG_IGN)
        self._mode = "tune"
        try:
            yield
        finally:
            self._mode = "raise"
            if self._active:
                signal.signal(TUNE_STOP_SIGNAL, saved_usr1)

    @contextlib.contextmanager
    def held(self):
        """Signals are recorded, not acted on, until the block ends."""
        previous, self._mode = self._mode, "held"
        try:
            yield
        finally:
            if self._mode == "held":  # not `finished()` inside: that lasts
                self._mode = previous

    def finished(self) -> None:
        """The sweep's work is done (every trial ended, the report written or none to write):
        a signal from here on is only acknowledged, and the driver exits as it was about to
        (0, or 1 when trials failed; the rest is Ray's shutdown): nothing is left to resume."""
        self._mode = "done"
        if self.received is not None:  # held while the report was marked written
            name = signal.Signals(self.received).name
            logger.warning(f"{name} received: the sweep has already finished; exiting")

    def raise_if_received(self, detail: str = "") -> None:
        if self.received is not None:
            raise SweepInterrupted(self.received, detail)

    def _handle(self, signum: int, frame) -> None:
        resent = self._put_off.take()
        first = self.received is None if resent is None else resent[1]
        if self.received is None:
            self.received = signum
        name = signal.Signals(signum).name
        if self._mode == "done":
            self.finished()  # says so
            return
        if self._mode == "held":
            logger.warning(f"{name} received: finishing an update of the tracking store")
            return
        tune_stop = signal.getsignal(TUNE_STOP_SIGNAL)
        if self._mode == "tune" and first and callable(tune_stop):
            logger.warning(
                f"{name} received: stopping the running trials and saving the sweep's state "
                "(send it again to stop at once)"
            )
            tune_stop(signum, frame)
            return
        if frame is not None and frame.f_code.co_filename.startswith(IMPORT_MACHINERY):
            self._put_off.resend(signum, first)
            return
        self._raise(signum, first)

    def _raise(self, signum: int, first: bool) -> None:
        # The first signal decides the exit status; a later one only makes it stop at once.
        self._last_raise = (signum, first)
        name = signal.Signals(signum).name
        raise SweepInterrupted(self.received, "" if first else f"{name} again: stopped at once")

    def _unraisable(self, unraisable) -> None:
        """`sys.unraisablehook`: a raise that Python dropped (in a `__del__`, a weakref
        callback) is made again; anything else goes to the hook that was there before."""
        if isinstance(unraisable.exc_value, SweepInterrupted) and self._last_raise is not None:
            self._put_off.resend(*self._last_raise)
        else:
            self._saved_unraisablehook(unraisable)


class PutOffRaise:
    """A raise that `StopSignals` put off (`pending`: (signal, first), None when none is),
    its signal sent to the main thread again after RESEND_AFTER_S. The resend timer and the
    main thread decide under `lock` which of them makes the raise: the timer once it has sent
    the signal again (`sent`), else `StopSignals.take_over`; never both."""

    def __init__(self, handler):
        self.pending: tuple[int, bool] | None = None
        self.sent = False
        self.lock = threading.RLock()  # re-entered by a handler run inside it
        self._handler = handler

    def take(self) -> tuple[int, bool] | None:
        """The raise put off, now taken: (signal, first), or None."""
        with self.lock:
            pending, self.pending, self.sent = self.pending, None, False
        return pending

    def resend(self, signum: int, first: bool) -> None:
        """Send `signum` to the main thread again in a moment, as the `first` signal or not,
        unless another signal comes before or the handler is no longer installed."""

        def send() -> None:
            with self.lock:
                if self.pending is pending and signal.getsignal(signum) == self._handler:
                    self.sent = True
                    signal.pthread_kill(threading.main_thread().ident, signum)

        pending = (signum, first)
        with self.lock:
            self.pending, self.sent = pending, False
        timer = threading.Timer(RESEND_AFTER_S, send)
        timer.daemon = True
        timer.start()
