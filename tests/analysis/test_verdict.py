"""The verdict in words, the colours of gains and losses, the sanity warnings, the champion
alias rule and the MLflow UI address: pure functions on synthetic frames."""

import json

import pandas as pd
import pytest

from analysis.mlflow_ui import (
    SANITY_WARNINGS_TAG,
    SELECTED_CONFIG_TAG,
    VERDICT_TAG,
    VS_BASELINE_TAG_PREFIX,
    summary_metrics,
    summary_tags,
    summary_view,
    ui_address,
    ui_command,
)
from analysis.model_registry import SweepStamp, moves_alias
from analysis.plots import OUTCOME_COLOURS, outcome_colours
from analysis.publication import AliasHolder
from analysis.sanity import (
    TrainingRecords,
    at_chance,
    chance_level,
    chance_warning,
    loss_blowups,
    loss_warning,
    sanity_warnings,
)
from analysis.select import Selection
from analysis.verdict import (
    BASELINE_ONLY,
    GAIN,
    LOSS,
    NO_DIFFERENCE,
    languages_sentence,
    make_verdict,
    outcome,
    selection_headline,
    untested_headline,
)
from xlt_schema import TAG_PREFIX


def _row(difference: float, significant: bool, low: float, high: float, lang: str = "en"):
    return {
        "lang": lang,
        "metric": "accuracy",
        "system_mean": 0.6 + difference,
        "baseline_mean": 0.6,
        "mean_difference": difference,
        "ci_low": low,
        "ci_high": high,
        "p_value": 0.001 if significant else 0.4,
        "p_corrected": 0.003 if significant else 0.8,
        "significant": significant,
        "n_seeds": 3,
    }


def _frame(*rows) -> pd.DataFrame:
    return pd.DataFrame(list(rows))


@pytest.mark.parametrize(
    ("difference", "significant", "expected"),
    [
        (0.02, True, GAIN),
        (-0.02, True, LOSS),
        (0.02, False, NO_DIFFERENCE),
        (0.0, True, NO_DIFFERENCE),
    ],
)
def test_outcome_needs_significance_and_takes_the_sign(difference, significant, expected):
    assert outcome(difference, significant) == expected


def test_a_significant_gain_beats_the_baseline_with_its_interval():
    row = next(_frame(_row(0.021, True, 0.01, 0.032)).itertuples(index=False))
    result, sentence = selection_headline("ear alpha=1", "dev/en/accuracy", row)
    assert result == GAIN
    assert "ear alpha=1 beats the baseline on dev/en/accuracy" in sentence
    assert "62.1 vs 60.0 %, +2.1 points, 95% CI [+1.0, +3.2]" in sentence
    assert "optimistic" in sentence  # selected on that split


def test_a_significant_loss_is_called_worse_never_better():
    row = next(_frame(_row(-0.004, True, -0.007, -0.001)).itertuples(index=False))
    result, sentence = selection_headline("ear alpha=0.1", "dev/en/accuracy", row)
    assert result == LOSS
    assert "is significantly worse than the baseline" in sentence
    assert "beats" not in sentence
    assert "-0.4 points" in sentence


def test_a_tie_does_not_beat_the_baseline():
    row = next(_frame(_row(0.003, False, -0.01, 0.016)).itertuples(index=False))
    result, sentence = selection_headline("ear", "dev/en/accuracy", row)
    assert result == NO_DIFFERENCE
    assert "does not beat the baseline (no significant difference)" in sentence
    assert "[-1.0, +1.6]" in sentence


def test_languages_are_sorted_into_gains_losses_and_neither():
    test = _frame(
        _row(0.02, True, 0.01, 0.03, "es"),
        _row(-0.018, True, -0.03, -0.006, "de"),
        _row(0.001, False, -0.01, 0.012, "ru"),
    )
    sentence = languages_sentence(test, "test")
    assert "significant gains: es (+2.0)" in sentence
    assert "significant losses: de (-1.8)" in sentence
    assert "no significant difference: ru (+0.1)" in sentence
    none = languages_sentence(_frame(_row(0.001, False, -0.01, 0.01, "es")), "test")
    assert "significant gains: none; significant losses: none" in none


def test_verdict_without_a_test_or_with_only_the_baseline_claims_nothing():
    result, sentence = untested_headline("x", "dev/en/mrr", 0.5, 0.52, "no per-example scores")
    assert result == NO_DIFFERENCE and "no claim that it beats the baseline" in sentence
    assert "-2.0 points" in sentence
    verdict = make_verdict(BASELINE_ONLY, None, "test")
    assert verdict.languages == "" and "Only the baseline finished" in verdict.headline


def test_gains_plot_colours_gains_losses_and_neither_apart():
    test = _frame(
        _row(0.02, True, 0.01, 0.03, "es"),
        _row(-0.018, True, -0.03, -0.006, "de"),
        _row(0.02, False, -0.01, 0.05, "ru"),
    )
    colours = outcome_colours(test)
    assert colours == [OUTCOME_COLOURS[GAIN], OUTCOME_COLOURS[LOSS], OUTCOME_COLOURS[NO_DIFFERENCE]]
    assert len(set(OUTCOME_COLOURS.values())) == len(OUTCOME_COLOURS)  # no verdict too


def test_chance_level_is_one_over_the_labels_or_the_majority_share():
    assert chance_level([0, 1, 2] * 10) == pytest.approx(1 / 3)
    assert chance_level([0] * 8 + [1] * 2) == pytest.approx(0.8)
    # 300 examples at chance 1/3: two standard errors are 5.4 points.
    assert at_chance(0.36, 1 / 3, 300) and not at_chance(0.40, 1 / 3, 300)


def test_chance_warning_only_when_every_configuration_is_at_chance():
    labels = [0, 1, 2] * 100
    warning = chance_warning({"finetune": 0.333, "ear": 0.34}, "dev/en/accuracy", labels)
    assert "Every configuration, the baseline included, is at chance level" in warning
    assert "chance 33.3 %" in warning and "3 labels, 300 examples" in warning
    assert chance_warning({"finetune": 0.333, "ear": 0.62}, "dev/en/accuracy", labels) == ""


def test_loss_warning_names_the_runs_whose_loss_blew_up():
    curves = {"ear seed 0": [1.1, 5.0, -6e7], "finetune seed 0": [1.1, 0.7], "short": [2.0]}
    assert loss_blowups(curves) == [("ear seed 0", 1.1, -6e7)]
    warning = loss_warning(curves)
    assert "in 1 of 3 runs: ear seed 0: 1.1 -> -6e+07" in warning
    assert loss_warning({"finetune seed 0": [1.1, 0.9, 0.5]}) == ""


@pytest.mark.parametrize(
    ("sweep", "holder", "moves"),
    [
        (SweepStamp("new", 2000, True), None, True),
        (SweepStamp("new", 2000, True), AliasHolder("1", "old", 1000), True),
        (SweepStamp("old", 1000, True), AliasHolder("2", "new", 2000), False),
        (SweepStamp("new", 2000, False), AliasHolder("1", "old", 1000), False),
        (SweepStamp("same", 1000, True), AliasHolder("1", "same", 1000), True),
        (SweepStamp("new", 2000, True), AliasHolder("1", None, None), True),  # untagged
    ],
)
def test_champion_moves_only_to_a_newer_complete_sweep(sweep, holder, moves):
    refusal = moves_alias(sweep, holder)
    assert (refusal == "") is moves
    if not sweep.complete:
        assert "not complete" in refusal


def test_ui_address_opens_the_runs_in_model_training_mode():
    local = "sqlite:////home/me/mlflow.db"
    assert ui_address(local, "3") == (
        "http://127.0.0.1:5000/#/experiments/3/runs?workflowType=machine_learning"
        "&viewStateShareKey=xlt-sweep-summary"
    )
    assert ui_command(local) == "mlflow ui --backend-store-uri sqlite:////home/me/mlflow.db"
    server = "http://10.0.0.5:5000/"
    assert ui_address(server, "7").startswith("http://10.0.0.5:5000/#/experiments/7/runs?")
    assert ui_command(server) == ""


def test_parent_summary_has_the_selection_and_per_language_outcomes():
    selection = Selection(
        config_key="k",
        config_label="ear alpha=1",
        method="ear",
        params={},
        metric="dev/en/accuracy",
        mean=0.62,
        std=0.01,
        n_seeds=2,
        run_ids=("a", "b"),
    )
    test = _frame(_row(0.02, True, 0.01, 0.03, "es"), _row(-0.018, True, -0.03, -0.006, "de"))
    verdict = make_verdict((GAIN, "..."), test, "test")
    metrics = summary_metrics(selection, 0.6, test, "test")
    assert metrics["selected/dev/en/accuracy"] == 0.62
    assert metrics["baseline/dev/en/accuracy"] == 0.6
    assert metrics["vs_baseline/test/de/accuracy"] == pytest.approx(-0.018)
    assert metrics["vs_baseline_p/test/es/accuracy"] == 0.003
    tags = summary_tags(selection, verdict, test, "test", ("a warning",))
    assert tags[SELECTED_CONFIG_TAG] == "ear alpha=1" and tags[VERDICT_TAG] == GAIN
    assert tags[f"{VS_BASELINE_TAG_PREFIX}test/es"] == GAIN
    assert tags[f"{VS_BASELINE_TAG_PREFIX}test/de"] == LOSS
    assert tags[SANITY_WARNINGS_TAG] == "1"
    assert len(tags) == 5 and all(key.startswith(TAG_PREFIX) for key in tags)  # all ours
    # The runs table's shared view shows the tags and the differences, not the p-values.
    columns = json.loads(summary_view(metrics, tags))["selectedColumns"]
    assert (
        f"tags.`{VERDICT_TAG}`" in columns and "metrics.`vs_baseline/test/es/accuracy`" in columns
    )
    assert "metrics.`selected/dev/en/accuracy`" in columns
    assert not any("vs_baseline_p/" in column for column in columns)


# Trials that neither diverged nor logged a loss curve.
_NO_CURVES = TrainingRecords(diverged={}, loss_curves={})


class _Labels:
    """Example scores whose dev artifact records these gold labels."""

    def __init__(self, labels):
        self.labels = labels

    def payload(self, run_id, split, lang):
        return {"metric": "accuracy", "labels": self.labels}


def test_sweep_at_chance_is_warned_from_the_dev_labels_it_logged():
    trials = pd.DataFrame(
        {
            "run_id": ["a", "b", "c", "d"],
            "config_label": ["finetune", "finetune", "ear", "ear"],
            "seed": [0, 1, 0, 1],
            "dev/en/accuracy": [0.33, 0.35, 0.34, 0.32],
        }
    )
    labels = [0, 1, 2] * 100
    (warning,) = sanity_warnings(_NO_CURVES, _Labels(labels), trials, "dev/en/accuracy")
    assert "at chance level on dev/en/accuracy" in warning
    learned = trials.assign(**{"dev/en/accuracy": [0.33, 0.35, 0.61, 0.63]})
    assert sanity_warnings(_NO_CURVES, _Labels(labels), learned, "dev/en/accuracy") == []
    # Without an accuracy there is no chance level to compare with.
    f1 = trials.rename(columns={"dev/en/accuracy": "dev/en/f1"})
    assert sanity_warnings(_NO_CURVES, _Labels(labels), f1, "dev/en/f1") == []
