"""Every trial of the efimov2023 `paper` presets of adjust_xnli and adjust_ner against the
paper's card (`sweeps/papers/efimov2023.yaml`): each setting the card fixes (or the `ours` of
its declared departure) is what the trial's TrialConfig holds, so a changed default or preset
breaks it; the card's quotes are the paper's lines."""

import dataclasses

import pytest
from paper_card_checks import PAPER_TEXTS, misquoted, preset_mismatches, spec_mismatches

from sweeps import adjust_ner, adjust_xnli
from sweeps.spec.experiment import experiment_spec
from sweeps.spec.paper_cards import load_card
from sweeps.spec.trial_contract import trial_config

CARD = load_card("efimov2023")
SCRIPTS = [adjust_xnli, adjust_ner]
IDS = ["adjust_xnli", "adjust_ner"]


@pytest.mark.parametrize("script", SCRIPTS, ids=IDS)
def test_every_trial_of_the_paper_preset_holds_the_cards_settings(script):
    assert preset_mismatches(script, "paper") == []
    spec = experiment_spec(script, "paper", None)
    assert spec.seeds == [1, 2, 3, 4, 5]  # L125: five runs
    # what the card checks is what the paper says, read back (a few by hand)
    for point in spec.points:
        trial = trial_config(spec.base, point, 1)
        assert trial.target_langs == ("es", "ru", "vi", "hi")  # L97
        assert (trial.parallel_max_sentences, trial.parallel_pool_sentences) == (30_000, 250_000)
        assert trial.parallel_data == "hub:sentence-transformers/parallel-sentences-wikimatrix"
        assert (trial.batch_size, trial.continual_pairs, trial.precision) == (32, 16, "fp32")
        # the released code's adjustment batch (its README, as issue 42 quotes it)
        assert (trial.adjust_batch_size, trial.adjust_learning_rate) == (32, 5e-5)
        if point.get("adaptation") == "adjusted_continual":
            assert (trial.continual_alpha, trial.continual_reg_weight) == (0.01, 0.01)  # Eq. 2


def test_the_presets_take_the_budget_of_the_script_each_task_ran():
    xnli = experiment_spec(adjust_xnli, "paper", None).base
    ner = experiment_spec(adjust_ner, "paper", None).base
    # the authors' no-trainer scripts: train_xnli_no_trainer.sh (lr 5e-5, 2 epochs, 128) and
    # train_ner_no_trainer.sh (lr 2e-5, 3 epochs) on run_ner_no_trainer.py (max_length 128)
    assert (xnli["learning_rate"], xnli["epochs"], xnli["max_seq_length"]) == (5e-5, 2.0, 128)
    assert (ner["learning_rate"], ner["epochs"], ner["max_seq_length"]) == (2e-5, 3.0, 128)
    # no released loop clips (E17): no card value, the one departure of every experiment
    for experiment in CARD.experiments:
        assert "max_grad_norm" not in CARD.settings(experiment)
        clipping = [d for d in CARD.departures(experiment) if d.setting == "max_grad_norm"]
        assert len(clipping) == 1 and clipping[0].paper.startswith("not stated")
        assert clipping[0].ours == 1.0
    assert xnli["max_grad_norm"] == ner["max_grad_norm"] == 1.0
    assert xnli["mixed_language"] is True  # L103, Table 2 bottom
    assert xnli["warmup_ratio"] == ner["warmup_ratio"] == 0.0


def test_the_check_fails_on_a_trial_that_leaves_the_card():
    spec = experiment_spec(adjust_xnli, "paper", None)
    points = [*spec.points]
    points[2] = {**points[2], "continual_alpha": 0.1}
    spec = dataclasses.replace(spec, base={**spec.base, "learning_rate": 2e-5}, points=points)
    found = spec_mismatches(spec, CARD)
    assert len(found) == 3 * 5 + 5  # every trial's learning rate, the continual point's alpha
    assert any("continual_alpha=0.1, card 0.01" in line for line in found)


def test_departures_are_declared_for_the_experiments_they_apply_to():
    names = {d.setting for d in CARD.departures("adjust_ner")}
    assert {"word aligner", "max_grad_norm", "NER metric", "evals_per_epoch"} <= names
    xnli = {d.setting for d in CARD.departures("adjust_xnli")}
    assert not {"NER metric", "max_seq_length", "adjust_batch_size"} & xnli
    assert "QA answer normalisation" in {d.setting for d in CARD.departures("adjust_qa")}
    # the released code's [CLS]/[SEP] links, for every experiment and both presets; its
    # continual regulariser weight is the released preset's own (a departure there only)
    for experiment in CARD.experiments:
        for preset in ("paper", "released"):
            found = {d.setting: d for d in CARD.departures(experiment, preset)}
            assert "--include_clssep" in found["[CLS]/[SEP] alignment"].paper
        released = {d.setting: d for d in CARD.departures(experiment, "released")}
        assert released["continual_reg_weight"].ours == 1.0
        assert "--base_diff_wght 1" in released["continual_reg_weight"].reason
        assert "continual_reg_weight" not in {d.setting for d in CARD.departures(experiment)}


@pytest.mark.skipif(not PAPER_TEXTS.is_dir(), reason="the paper texts are not at ../shared/papers")
def test_every_quote_of_the_card_is_on_its_line():
    assert misquoted(CARD) == []
