"""A Tune callback that ends a phase at the first trial that failed on a full disk, so that
the other trials do not each run into it (and fail) in turn."""

from __future__ import annotations

import signal
from pathlib import Path

from ray.tune import Callback

from sweeps.safety.interruption import TUNE_STOP_SIGNAL
from sweeps.safety.saved_state import drop_if_damaged, error_files_say_disk_full


class StopOnFullDisk(Callback):
    """Calls Tune's own graceful stop (its handler for TUNE_STOP_SIGNAL, as a Ctrl-C
    does): Tune saves its state with the running trials unfinished, so `--resume` continues
    them; the runner then sees the full disk in the results (`TunePhases.fit`). An error
    pickle the full disk cut short is deleted first: Tune would fail on it as `fit` ends."""

    def on_trial_error(self, iteration: int, trials: list, trial, **info) -> None:
        if not trial.error_file:
            return
        pickled = Path(trial.pickled_error_file) if trial.pickled_error_file else None
        if not error_files_say_disk_full(Path(trial.error_file), pickled):
            return
        if pickled is not None:
            drop_if_damaged(pickled)
        tune_stop = signal.getsignal(TUNE_STOP_SIGNAL)
        if callable(tune_stop):  # registered by Tune for the length of `fit`
            tune_stop(TUNE_STOP_SIGNAL, None)
