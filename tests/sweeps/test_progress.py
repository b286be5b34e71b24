"""A sweep's progress lines (`sweeps.running.progress`): the ETA arithmetic, and what a trial that
ends says."""

import math

import pytest
from ray.tune.experiment import Trial

from sweeps.running import progress
from sweeps.running.progress import (
    ProgressCallback,
    eta_seconds,
    format_duration,
    progress_line,
    trial_outcome,
)
from sweeps.spec.trial_contract import FAILURE, TRIAL_COMPLETE
from xlt_schema import DEV_CURVE
from xlt_schema.log import DEFAULT, QUIET, configure


def test_no_eta_before_a_trial_has_ended():
    assert eta_seconds([], running_elapsed=[5.0], pending=3, slots=2) is None


def test_pending_trials_fill_the_earliest_free_slot():
    # Mean 10 s; running trials free their slots in 4 s and 8 s; three pending trials start
    # at 4 (-> 14), 8 (-> 18) and 14 (-> 24).
    assert eta_seconds([8.0, 12.0], running_elapsed=[6.0, 2.0], pending=3, slots=2) == 24.0


def test_idle_slots_start_pending_trials_at_once():
    assert eta_seconds([10.0], running_elapsed=[], pending=4, slots=2) == 20.0


def test_a_trial_running_longer_than_the_mean_is_taken_as_ending_now():
    assert eta_seconds([10.0], running_elapsed=[30.0], pending=0, slots=1) == 0.0
    assert eta_seconds([10.0], running_elapsed=[30.0], pending=1, slots=1) == 10.0


def test_nothing_left():
    assert eta_seconds([10.0], running_elapsed=[], pending=0, slots=2) == 0.0


@pytest.mark.parametrize(
    "seconds, text", [(44.6, "45s"), (185, "3m05s"), (7620, "2h07m"), (0, "0s")]
)
def test_format_duration(seconds, text):
    assert format_duration(seconds) == text


def test_progress_line():
    assert (
        progress_line("grid", 3, 1, 2, 1, 75.0)
        == "[grid] trials: 3 ended (1 failed), 2 running, 1 pending; ETA 1m15s"
    )
    assert progress_line("final", 0, 0, 2, 4, None).endswith("ETA after the first trial ends")


@pytest.mark.parametrize(
    "result, errored, outcome",
    [
        ({DEV_CURVE: 0.37, TRIAL_COMPLETE: True}, False, (False, "dev score 0.370")),
        ({DEV_CURVE: 0.5}, False, (False, "stopped early, dev score 0.500")),  # by ASHA
        (
            {DEV_CURVE: math.nan, FAILURE: "TrainingDiverged: loss became nan\nmore"},
            False,
            (True, "failed: TrainingDiverged: loss became nan"),
        ),
        ({}, True, (True, "failed (its error is above)")),
    ],
)
def test_trial_outcome(result, errored, outcome):
    assert trial_outcome(result, errored) == outcome


class FakeTrial:
    def __init__(self, name: str, status: str = Trial.PENDING):
        self.trial_id, self.name, self.status, self.last_result = name, name, status, {}

    def __str__(self) -> str:
        return self.name


@pytest.fixture
def frozen_clock(monkeypatch):
    """Trials that start and end at the same instant: ETA 0s whatever the machine's speed."""
    monkeypatch.setattr(progress.time, "time", lambda: 1000.0)


def run_two_trials(second_result: dict) -> None:
    """Two trials of a phase start, then end: the first with dev score 0.4."""
    trials = [FakeTrial("a seed=0"), FakeTrial("a seed=1")]
    callback = ProgressCallback("grid")
    callback.setup(total_num_samples=2)
    for trial in trials:
        callback.on_trial_start(0, trials, trial)
        trial.status = Trial.RUNNING
    for trial, result in zip(trials, [{DEV_CURVE: 0.4, TRIAL_COMPLETE: True}, second_result]):
        trial.last_result = result
        callback.on_trial_complete(0, trials, trial)
        trial.status = Trial.TERMINATED


def test_a_trial_that_ends_gets_a_line_with_its_score_and_a_start_none(capsys, frozen_clock):
    configure(DEFAULT)
    run_two_trials({DEV_CURVE: 0.3, TRIAL_COMPLETE: True})
    assert capsys.readouterr().out.splitlines() == [
        "[grid] a seed=0: dev score 0.400; trials: 1 ended, 1 running, 0 pending; ETA 0s",
        "[grid] a seed=1: dev score 0.300; trials: 2 ended, 0 running, 0 pending; ETA 0s",
    ]


def test_a_failed_trial_shows_even_with_q(capsys, frozen_clock):
    configure(QUIET)
    run_two_trials({FAILURE: "DataError: line 3 of train-en.tsv", TRIAL_COMPLETE: True})
    assert capsys.readouterr().out.splitlines() == [
        "[grid] a seed=1: failed: DataError: line 3 of train-en.tsv; "
        "trials: 2 ended (1 failed), 0 running, 0 pending; ETA 0s"
    ]
