"""The verdict is decided on runs that took no part in the selection: the confirmation
phase's fresh seeds when the sweep has them, else the selecting runs with their p-values
Bonferroni-adjusted over the candidates (analysis/verdict_runs.py)."""

import math
import re

import numpy as np
import pandas as pd
import pytest
from fake_sweeps import complete_parent, log_skilled_trials, trial_tags
from mlflow import MlflowClient

from analysis.collect import ExampleScores, collect_trials
from analysis.report import report_sweep
from analysis.select import compare_average
from analysis.verdict import NO_DIFFERENCE
from analysis.verdict_runs import adjusted_average, adjusted_for_selection, verdict_runs
from xlt_schema import CONFIRM_PHASE, PHASE_TAG

N = 300
KEYS = ("dev/en", "test/en", "test/es")
BASELINE = ("finetune", "finetune", {})
LUCKY = ("ear alpha=1", "ear", {"alpha": "1"})
OTHER = ("ear alpha=2", "ear", {"alpha": "2"})


def _log_runs(client, experiment_id, parent, config, seeds, skill, rng, difficulty, phase):
    label, method, params = config
    tags = {**trial_tags(parent, label, method, "none", params), PHASE_TAG: phase}
    log_skilled_trials(client, experiment_id, tags, params, seeds, (rng, skill, difficulty))


def _sweep(root, experiment: str, confirm: bool, planned: str) -> str:
    """A finished grid sweep in which the selected configuration's selecting runs are far
    better than the baseline on test (its seeds' luck), while on the confirmation phase's
    fresh seeds it is exactly as good (``confirm``)."""
    uri, client, experiment_id, parent = complete_parent(
        root, experiment, {"significance_test": "ttest", "confirm_seeds": planned}
    )
    rng = np.random.default_rng(3)
    difficulty = {key: rng.beta(2, 2, size=N) for key in KEYS}
    even = {"dev": 0.6, "test": 0.6}
    runs = (client, experiment_id, parent)
    _log_runs(*runs, BASELINE, (0, 1, 2), even, rng, difficulty, "grid")
    _log_runs(*runs, LUCKY, (0, 1, 2), {"dev": 0.75, "test": 0.75}, rng, difficulty, "grid")
    _log_runs(*runs, OTHER, (0, 1, 2), even, rng, difficulty, "grid")
    if confirm:
        for config in (BASELINE, LUCKY):
            _log_runs(*runs, config, (3, 4, 5), even, rng, difficulty, CONFIRM_PHASE)
    client.set_terminated(parent)
    return uri


def test_the_verdict_is_decided_on_the_confirmation_runs(tmp_path):
    # On 0.5.0 the confirmation runs joined the selection's and the lucky runs won: a gain.
    uri = _sweep(tmp_path, "confirmed", confirm=True, planned="3,4,5")
    report = report_sweep(uri, "confirmed", out_dir=str(tmp_path / "out"))
    assert report.selection.config_label == LUCKY[0]
    assert report.selection.n_seeds == 3  # the confirmation runs took no part in it
    assert report.verdict.outcome == NO_DIFFERENCE
    assert "confirmation phase's 3 fresh seeds (3, 4, 5)" in report.verdict.headline
    assert "(crossed test, 3 seeds)" in report.verdict.headline
    assert "Finished trials: 9 (and 6 of the confirmation phase)" in report.markdown
    section = report.markdown.split("## Selected configuration vs baseline (test)")[1]
    assert "Decided on the confirmation phase's 3 fresh seeds" in section.split("|")[0]
    # The per-language comparison is the confirmation's: no language gains there.
    assert not report.comparison["significant"].any()


def test_without_confirmation_the_verdict_is_adjusted_over_the_candidates(tmp_path):
    uri = _sweep(tmp_path, "unconfirmed", confirm=False, planned="none")
    report = report_sweep(uri, "unconfirmed", out_dir=str(tmp_path / "out"))
    headline = report.verdict.headline
    assert (
        "(confirm_seeds=0 turned the confirmation phase off): p-values Bonferroni-adjusted "
        "over its 2 candidates" in headline
    )
    client = MlflowClient(uri)
    trials = collect_trials(client, report.parent_run_id)
    baseline_key = trials.loc[trials["method"] == "finetune", "config_key"].iloc[0]
    raw = compare_average(ExampleScores(client), trials, report.selection.config_key, baseline_key)
    printed = float(re.search(r"p = ([0-9.e-]+) \(crossed", headline).group(1))
    assert printed == pytest.approx(min(1.0, 2 * raw["p_value"]), rel=1e-2)


def _frame(rows):
    return pd.DataFrame(rows, columns=["config_key", "method", "adaptation", "seed"])


def test_verdict_runs_prefers_a_confirmation_that_holds_both_configurations():
    trials = _frame(
        [
            (key, method, "none", seed)
            for key, method in (("b", "finetune"), ("x", "ear"), ("y", "ear"), ("z", "ear"))
            for seed in (0, 1)
        ]
    )
    confirmation = _frame(
        [(key, m, "none", s) for key, m in (("b", "finetune"), ("x", "ear")) for s in (2, 3)]
    )
    confirmed = verdict_runs(trials, confirmation, ("x", "b"), "2,3", "finetune")
    assert confirmed.trials is confirmation and confirmed.candidates == 1
    assert "2 fresh seeds (2, 3)" in confirmed.note
    other = verdict_runs(trials, confirmation, ("y", "b"), "2,3", "finetune")
    assert other.trials is trials and other.candidates == 3
    assert "re-ran another configuration" in other.note
    assert (
        "this sweep has no confirmation phase"
        in verdict_runs(trials, pd.DataFrame(), ("x", "b"), None, "finetune").note
    )
    assert (
        "has no finished runs"
        in verdict_runs(trials, pd.DataFrame(), ("x", "b"), "2,3", "finetune").note
    )
    one = verdict_runs(
        trials[trials["config_key"].isin(["b", "x"])],
        pd.DataFrame(),
        ("x", "b"),
        "none",
        "finetune",
    )
    assert one.candidates == 1 and "nothing was selected" in one.note


def test_the_adjustment_multiplies_by_the_candidates_and_caps_at_one():
    table = pd.DataFrame({"p_corrected": [0.01, 0.02, 0.4], "significant": [True, True, True]})
    adjusted = adjusted_for_selection(table, 3)
    assert adjusted["p_corrected"].tolist() == pytest.approx([0.03, 0.06, 1.0])
    assert adjusted["significant"].tolist() == [True, False, False]
    assert adjusted_for_selection(table, 1) is table
    assert adjusted_average({"p_value": 0.02, "x": 1}, 4) == {"p_value": 0.08, "x": 1}
    assert math.isnan(adjusted_average({"p_value": math.nan}, 4)["p_value"])  # one seed


def test_the_verdict_is_against_the_baseline_the_report_names(tmp_path):
    # `--baseline adv`: the verdict compares with ADV, as the per-language comparison does;
    # before 0.7.0 it compared with fine-tuning whatever the report named.
    uri, client, experiment_id, parent = complete_parent(
        tmp_path, "named_baseline", {"significance_test": "ttest", "confirm_seeds": "none"}
    )
    rng = np.random.default_rng(5)
    difficulty = {key: rng.beta(2, 2, size=N) for key in KEYS}
    runs = (client, experiment_id, parent)
    _log_runs(*runs, BASELINE, (0, 1, 2), {"dev": 0.5, "test": 0.5}, rng, difficulty, "grid")
    _log_runs(*runs, LUCKY, (0, 1, 2), {"dev": 0.75, "test": 0.75}, rng, difficulty, "grid")
    adv = ("adv", "adv", {})
    _log_runs(*runs, adv, (0, 1, 2), {"dev": 0.74, "test": 0.75}, rng, difficulty, "grid")
    client.set_terminated(parent)
    report = report_sweep(
        uri, "named_baseline", out_dir=str(tmp_path / "out"), baseline_method="adv"
    )
    assert report.selection.config_label == LUCKY[0]
    assert report.verdict.outcome == NO_DIFFERENCE  # against fine-tuning: a gain
