"""Progress of a running phase: a line when a trial ends, with its dev score (or why it
failed), the trials ended, running and pending and an ETA from the trials ended so far; with
`-v` also one when a trial starts. It replaces Tune's status table (the runner sets
`RunConfig(verbose=0)`)."""

from __future__ import annotations

import heapq
import logging
import time

from ray import tune
from ray.tune.experiment import Trial

from sweeps.spec.trial_contract import FAILURE, TRIAL_COMPLETE
from xlt_schema import DEV_CURVE

logger = logging.getLogger(__name__)


def eta_seconds(
    durations: list[float], running_elapsed: list[float], pending: int, slots: int
) -> float | None:
    """Seconds until the phase ends, or None before any trial has ended (nothing to go by).

    Every trial is taken to last the mean of `durations`: a running trial needs the mean less
    what it has run (none when it ran longer), and pending trials take the earliest free of
    `slots` parallel slots in turn."""
    if not durations:
        return None
    mean = sum(durations) / len(durations)
    free_at = [max(0.0, mean - elapsed) for elapsed in running_elapsed]
    free_at += [0.0] * max(0, slots - len(free_at))
    heapq.heapify(free_at)
    for _ in range(pending):
        heapq.heappush(free_at, heapq.heappop(free_at) + mean)
    return max(free_at, default=0.0) if pending or running_elapsed else 0.0


def format_duration(seconds: float) -> str:
    """`45s`, `3m05s`, `2h07m`."""
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def progress_line(
    phase: str,
    ended: int,
    failed: int,
    running: int,
    pending: int,
    eta: float | None,
    trial: str | None = None,
) -> str:
    """`[phase] trials: ...; ETA ...`, after `trial` (the trial that ended: its name and
    outcome) when given."""
    what = f"{ended} ended" + (f" ({failed} failed)" if failed else "")
    guess = "after the first trial ends" if eta is None else format_duration(eta)
    ending = f" {trial};" if trial else ""
    return f"[{phase}]{ending} trials: {what}, {running} running, {pending} pending; ETA {guess}"


def trial_outcome(result: dict, errored: bool) -> tuple[bool, str]:
    """(whether the trial failed, what its progress line says of it) from its last result:
    its dev score, `stopped early` (ASHA) with the score it had, or why it failed."""
    if errored:
        return True, "failed (its error is above)"
    if result.get(FAILURE):
        return True, f"failed: {str(result[FAILURE]).splitlines()[0][:200]}"
    score = result.get(DEV_CURVE)
    scored = f"dev score {score:.3f}" if isinstance(score, (int, float)) else "no dev score"
    return False, scored if result.get(TRIAL_COMPLETE) else f"stopped early, {scored}"


class ProgressCallback(tune.Callback):
    """Logs `progress_line` as a trial ends (INFO; WARNING when it failed) and, for `-v`, as
    one starts (DEBUG). Trials ended before a resume count as ended but not in the ETA (their
    durations belong to an earlier driver)."""

    def __init__(self, phase: str):
        self.phase = phase
        self.durations: list[float] = []
        self.started: dict[str, float] = {}
        self.failed: set[str] = set()
        self.total = 0
        self.slots = 1

    def setup(self, total_num_samples: int | None = None, **info) -> None:
        self.total = total_num_samples or 0
        self.started = {}  # a resumed driver: earlier start times mean nothing here

    def on_trial_start(self, iteration, trials, trial, **info) -> None:
        self.started[trial.trial_id] = time.time()
        self.slots = max(self.slots, len(self.started))
        self._log_progress(trials)

    def on_trial_complete(self, iteration, trials, trial, **info) -> None:
        self._end(trials, trial, errored=False)

    def on_trial_error(self, iteration, trials, trial, **info) -> None:
        self._end(trials, trial, errored=True)

    def _end(self, trials, trial, errored: bool) -> None:
        failed, outcome = trial_outcome(trial.last_result or {}, errored)
        if failed:
            self.failed.add(trial.trial_id)
        start = self.started.pop(trial.trial_id, None)
        if start is not None and not failed:
            self.durations.append(time.time() - start)
        line = self._progress(trials, trial.trial_id, f"{trial}: {outcome}")
        # A failed trial is a warning: -q shows it too.
        logger.log(logging.WARNING if failed else logging.INFO, line)

    def _log_progress(self, trials) -> None:
        logger.debug(self._progress(trials))

    def _progress(self, trials, ending: str | None = None, outcome: str | None = None) -> str:
        """`progress_line` of the phase now; `ending`: the trial that ends, `outcome` its name
        and outcome."""
        # Tune updates a trial's status after these callbacks: the ending one is still RUNNING.
        ended = {t.trial_id for t in trials if t.status in (Trial.TERMINATED, Trial.ERROR)}
        ended |= {ending} if ending else set()
        # A starting trial may still read PENDING: the trials started here count as running.
        running = {t.trial_id for t in trials if t.status == Trial.RUNNING} | set(self.started)
        running -= ended
        pending = max(self.total, len(trials)) - len(ended) - len(running)
        now = time.time()
        elapsed = [now - self.started[t] for t in running if t in self.started]
        eta = eta_seconds(self.durations, elapsed, pending, self.slots)
        failed = len(self.failed & ended)
        return progress_line(self.phase, len(ended), failed, len(running), pending, eta, outcome)
