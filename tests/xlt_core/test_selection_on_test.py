"""`selection_dev=test`, the released EAR scripts' checkpoint rule (KB-Ding/EAR@b508ce7
run/train.py:186-224): each evaluation also scores the test sets, and the trial keeps the
checkpoint with the best accuracy pooled over them (it leaks test: only `--preset released`
takes it, tests/sweeps/test_released_selection.py)."""

import pytest
from tiny_trials import TINY_TRIAL

from xlt_core.config import TrialConfig
from xlt_core.errors import ConfigError
from xlt_core.reporting import ListReporter
from xlt_core.train import TEST_SELECTION_CURVE
from xlt_core.trial import run_trial
from xlt_schema import DEV_CURVE, example_scores_key


def test_a_trial_keeps_the_checkpoint_with_the_best_pooled_test_accuracy(tmp_path):
    config = TrialConfig.from_dict(
        {
            **TINY_TRIAL,
            "task": "xnli",
            "selection_dev": "test",
            "target_langs": "es,de",
            "max_train_examples": 400,
            "max_eval_examples": 40,
            "evals_per_epoch": 4,
            "epochs": 3.0,
            "learning_rate": 5e-3,
            "max_seq_length": 48,
            "cache_dir": str(tmp_path),
        }
    )
    with ListReporter() as reporter:
        result = run_trial(config, reporter)
    curve = [(step, metrics[TEST_SELECTION_CURVE]) for step, metrics in reporter.reports]
    assert all(DEV_CURVE in metrics for _, metrics in reporter.reports)  # English dev still logged
    best = max(score for _, score in curve)
    # The first evaluation that reached the best pooled score is the one kept.
    assert result.best_step == next(step for step, score in curve if score == best)
    # In this trial it is neither the last evaluation nor English dev's best: keeping the last
    # weights, or selecting on dev, fails this test.
    dev = [(step, metrics[DEV_CURVE]) for step, metrics in reporter.reports]
    best_dev = max(score for _, score in dev)
    assert result.best_step != curve[-1][0]
    assert result.best_step != next(step for step, score in dev if score == best_dev)
    # The kept weights are that checkpoint's: the final test sets, pooled, score exactly it.
    right = [
        score
        for lang in config.test_langs
        for score in result.example_scores[example_scores_key("test", lang)]["scores"]
    ]
    assert sum(right) / len(right) == pytest.approx(best)
    assert len(right) == 40 * len(config.test_langs)


def test_selection_on_test_is_refused_where_accuracy_does_not_pool():
    with pytest.raises(ConfigError) as error:
        TrialConfig.from_dict({"task": "ner", "selection_dev": "test"})
    assert error.value.field == "selection_dev"
    assert "pools accuracy over the test sets" in str(error.value)
