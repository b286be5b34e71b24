"""The ETA arithmetic of a sweep's progress lines (`sweeps.progress`)."""

import pytest

from sweeps.progress import eta_seconds, format_duration, progress_line


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
