"""SIGINT and SIGTERM stop a sweep cleanly: `StopSignals` routes them to Ray Tune's own
graceful stop while a Tune experiment runs, and raises `SweepInterrupted` anywhere else.

Tune handles a first Ctrl-C itself: it leaves its loop, saves the experiment state (the
running trials stay RUNNING there, so `Tuner.restore` continues them from their last
checkpoints), then stops the trials. It does nothing for SIGTERM, and `ray.init` installs a
SIGTERM handler that exits at once. Here both signals take that graceful path; a second
signal stops at once (Tune's periodic state snapshot is then what a resume starts from).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# Tune installs its own SIGINT handler in `fit` unless this is set; we call its stop ourselves.
TUNE_SIGINT_ENV = "TUNE_DISABLE_SIGINT_HANDLER"
# Tune's stop handler is always registered for SIGUSR1 during `fit` (ray/tune/tune.py).
TUNE_STOP_SIGNAL = signal.SIGUSR1


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


class StopSignals:
    """While entered (main thread only; elsewhere it does nothing), SIGINT and SIGTERM:

    - inside `tune_fit()`: the first one ends the Tune experiment gracefully (Tune's own
      stop), and `raise_if_received` raises SweepInterrupted after it;
    - inside `held()`: are recorded only, so that a short update of the tracking store is
      not cut in half;
    - anywhere else: raise SweepInterrupted at once.
    """

    def __init__(self):
        self.received: int | None = None
        self._mode = "raise"
        self._saved: dict[int, object] = {}
        self._active = False

    def __enter__(self) -> StopSignals:
        self._active = threading.current_thread() is threading.main_thread()
        if self._active:
            self._saved = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
            self._saved_env = os.environ.get(TUNE_SIGINT_ENV)
            os.environ[TUNE_SIGINT_ENV] = "1"
            self.take_over()
        return self

    def __exit__(self, *exc) -> None:
        if not self._active:
            return
        for signum, handler in self._saved.items():
            signal.signal(signum, handler)
        if self._saved_env is None:
            os.environ.pop(TUNE_SIGINT_ENV, None)
        else:
            os.environ[TUNE_SIGINT_ENV] = self._saved_env

    def take_over(self) -> None:
        """(Re)install the handlers: `ray.init` replaces the SIGTERM handler with its own."""
        if self._active:
            for signum in STOP_SIGNALS:
                signal.signal(signum, self._handle)

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
            self._mode = previous

    def raise_if_received(self, detail: str = "") -> None:
        if self.received is not None:
            raise SweepInterrupted(self.received, detail)

    def _handle(self, signum: int, frame) -> None:
        first = self.received is None
        if first:
            self.received = signum
        name = signal.Signals(signum).name
        if self._mode == "held":
            print(f"{name} received: finishing an update of the tracking store", flush=True)
            return
        tune_stop = signal.getsignal(TUNE_STOP_SIGNAL)
        if self._mode == "tune" and first and callable(tune_stop):
            print(
                f"{name} received: stopping the running trials and saving the sweep's state "
                "(send it again to stop at once)",
                flush=True,
            )
            tune_stop(signum, frame)
            return
        raise SweepInterrupted(self.received)
