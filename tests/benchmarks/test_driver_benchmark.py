"""The driver-scaling case (`python -m benchmarks --only driver`): its no-op trial gives what a
trial's tracking and the report read, and a quick run prints its figures. Nothing here
asserts on a timing."""

import sys
from pathlib import Path

import pytest
from quick_runs import run_quick

REPO = Path(__file__).resolve().parents[2]
# `benchmarks` is a folder of the repository, not an installed package.
sys.path.insert(0, str(REPO))

from benchmarks.driver_scale import (  # noqa: E402
    EVAL_EXAMPLES,
    noop_trial,
    tree_bytes,
)
from sweeps.running.trainable import TRIAL_FUNCTION_ENV, trial_function  # noqa: E402
from xlt_core.config import TrialConfig  # noqa: E402

FIGURES = (
    "driver peak RSS",
    "driver wall per trial",
    "driver CPU per trial",
    "tracking store per trial",
)
# Each size's line of the searcher's own CPU, and the ratio of the CPU per trial.
SEARCHER = "searcher CPU per trial, Optuna TPE alone ({} trials)"
RATIO = "driver CPU per trial, 8 trials / 4 trials"


def test_the_noop_trial_scores_the_dev_set_and_every_test_language():
    config = TrialConfig(method="ear", target_langs=("es", "de"), seed=1)
    result = noop_trial(config, reporter=None)
    assert set(result.metrics) == {
        config.selection_metric(),
        *(f"test/{lang}/accuracy" for lang in ("en", "es", "de")),
    }
    assert set(result.example_scores) == {"dev-en", "test-en", "test-es", "test-de"}
    scores = result.example_scores["test-es"]["scores"]
    assert len(scores) == EVAL_EXAMPLES and set(scores) <= {0.0, 1.0}
    assert result.metrics["test/es/accuracy"] == sum(scores) / EVAL_EXAMPLES
    # The same configuration and seed score alike (a retried trial reports what it did).
    assert noop_trial(config, reporter=None).metrics == result.metrics


def test_the_trial_function_is_run_trial_unless_the_environment_names_another(monkeypatch):
    monkeypatch.delenv(TRIAL_FUNCTION_ENV, raising=False)
    from xlt_core.trial import run_trial

    assert trial_function() is run_trial
    monkeypatch.setenv(TRIAL_FUNCTION_ENV, "benchmarks.driver_scale:noop_trial")
    assert trial_function() is noop_trial


def test_tree_bytes_counts_a_file_or_a_folder(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x").write_bytes(b"12345")
    (tmp_path / "b").write_bytes(b"123")
    assert tree_bytes(tmp_path / "a") == 5
    assert tree_bytes(tmp_path / "b") == 3
    assert tree_bytes(tmp_path) == 8
    assert tree_bytes(tmp_path / "absent") == 0


@pytest.mark.slow
def test_quick_driver_cases_print_their_figures():
    """--quick: the default case at 4 and 8 trials (then their ratio), the 10,000-trial
    option at 6."""
    out = run_quick("--only", "driver,driver-10k").stdout
    for trials, runs in ((4, 8), (8, 12), (6, 10)):  # + phase 2: 2 configurations x 2 seeds
        for figure in FIGURES:
            assert f"{figure} ({trials}-trial search, {runs} trial runs)" in out
        assert SEARCHER.format(trials) in out
    assert RATIO in out and "<= 1.20 x" in out
    assert "torch not imported" in out  # Optuna, ASHA, the report: the driver stays torch-free
