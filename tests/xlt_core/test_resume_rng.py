"""A resumed trial reproduces an uninterrupted one (issue 22, item 10): the checkpoint holds
the random-number state (dropout draws from torch's generator), so training N steps without
a stop and stopping after step k, restoring, continuing to N give the same losses."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch
from tiny_trials import TINY_TRIAL

from xlt_core import random_state
from xlt_core.config import TrialConfig
from xlt_core.reporting import ListReporter
from xlt_core.trial import run_trial

# The synthetic XNLI task, 64 examples in batches of 8: 8 steps, a checkpoint every 2.
SETTINGS = {
    **TINY_TRIAL,
    "task": "xnli",
    "data_source": "synthetic",
    "max_train_examples": 64,
    "max_eval_examples": 16,
    "evals_per_epoch": 4,
    "learning_rate": 1e-3,
}


class Stopped(Exception):
    pass


class StopsOnce(ListReporter):
    """Raises once, right after the checkpoint of step `at` is kept (a killed trial)."""

    def __init__(self, at: int):
        super().__init__()
        self.at = at

    def report(self, step, metrics, checkpoint_dir=None):
        super().report(step, metrics, checkpoint_dir)
        if step == self.at:
            self.at = None
            raise Stopped


def _losses(reports) -> dict[int, float]:
    return {step: metrics["train/loss"] for step, metrics in reports}


def test_a_resumed_trial_reproduces_the_uninterrupted_losses(tmp_path):
    config = TrialConfig.from_dict({**SETTINGS, "cache_dir": str(tmp_path)})
    with ListReporter() as reporter:
        run_trial(config, reporter)
        whole = _losses(reporter.reports)
    assert sorted(whole) == [2, 4, 6, 8]
    with StopsOnce(at=4) as reporter:
        with pytest.raises(Stopped):
            run_trial(config, reporter)
        stopped = len(reporter.reports)
        run_trial(config, reporter)  # restores step 4 from the kept checkpoint
        resumed = _losses(reporter.reports[stopped:])
    assert sorted(resumed) == [6, 8]
    for step in (6, 8):
        assert resumed[step] == pytest.approx(whole[step], abs=1e-6), step


def test_capture_and_restore_cover_python_numpy_and_torch():
    saved = random_state.capture()
    drawn = (random.random(), np.random.rand(), torch.rand(1).item())
    random_state.restore(saved)
    assert (random.random(), np.random.rand(), torch.rand(1).item()) == drawn
