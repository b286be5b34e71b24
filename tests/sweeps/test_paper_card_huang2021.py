"""Every trial of every huang2021 `paper` preset against the paper's card
(`sweeps/papers/huang2021.yaml`): each setting the card fixes (or the `ours` of its declared
departure) is what the trial's TrialConfig holds, so a changed default or preset breaks it
(`paper_card_checks`, shared with the other papers' tests)."""

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import scaled_timeout
from paper_card_checks import PAPER_TEXTS, misquoted, preset_mismatches, spec_mismatches

from sweeps import robust_pawsx, robust_xnli, rs_da_m_curve, rs_syntax
from sweeps.spec.experiment import experiment_spec
from sweeps.spec.paper_cards import load_card
from sweeps.spec.trial_contract import trial_config

CARD = load_card("huang2021")
SCRIPTS = [robust_xnli, robust_pawsx, rs_syntax, rs_da_m_curve]
IDS = [script.EXPERIMENT for script in SCRIPTS]
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("script", SCRIPTS, ids=IDS)
def test_every_trial_of_the_paper_preset_holds_the_cards_settings(script):
    assert script.PAPER == "huang2021"
    assert preset_mismatches(script, "paper") == []
    spec = experiment_spec(script, "paper", None)
    assert spec.seeds == list(range(1, 11))  # L144: 10 seeds
    # what the card checks is what XTREME's scripts say, read back by hand
    trial = trial_config(spec.base, spec.points[-1], 1)
    assert (trial.learning_rate, trial.batch_size, trial.epochs, trial.max_seq_length) == (
        2e-5,
        32,
        5.0,
        128,
    )
    assert (trial.warmup_ratio, trial.precision, trial.model, trial.synonym_lookup) == (
        0.0,
        "fp32",
        "bert-base-multilingual-cased",
        "exact",  # as the released RS-DA code looks words up
    )
    assert trial.group_by_length is False  # random batches, as XTREME's run_classify.py


def test_the_check_fails_on_a_trial_that_leaves_the_card():
    spec = experiment_spec(robust_pawsx, "paper", None)
    spec = dataclasses.replace(spec, base={**spec.base, "epochs": 2.0})
    found = spec_mismatches(spec, CARD)
    assert len(found) == len(spec.points) * 10
    assert all("epochs=2.0, card 5.0" in f for f in found)
    spec = experiment_spec(robust_pawsx, "paper", None)
    points = [{**p, "m": 3} if p["method"] == "rs_da" else p for p in spec.points]
    spec = dataclasses.replace(spec, points=points)
    found = spec_mismatches(spec, CARD)
    assert len(found) == 10 and all(f.endswith(": m=3, card 10") for f in found)


def test_robust_presets_run_the_papers_grid_at_enc_x_with_its_m():
    for script, m in ((robust_xnli, 3), (robust_pawsx, 10)):
        spec = experiment_spec(script, "paper", None)
        assert [p["method"] for p in spec.points].count("finetune") == 1
        for method in ("adv", "rs_rp"):
            epsilons = sorted(p["epsilon"] for p in spec.points if p["method"] == method)
            assert epsilons == [0.001, 0.01, 0.1, 1.0]  # L166
        assert [p["m"] for p in spec.points if p["method"] == "rs_da"] == [m]  # L166
        assert spec.base["perturbation_site"] == "encoder_output"  # L84, L102
        assert spec.significance_test == "bootstrap"  # Tables 1-2 captions
        assert spec.paper_card is CARD
    syntax = experiment_spec(rs_syntax, "paper", None).points
    assert {p.get("m") for p in syntax if p["method"] != "finetune"} == {10}
    curve = experiment_spec(rs_da_m_curve, "paper", None).points
    assert [p["m"] for p in curve if p["method"] == "rs_da"] == [1, 3, 5, 10, 15, 20]


def test_the_smoke_presets_are_unchanged_and_have_no_card():
    smoke = experiment_spec(robust_xnli, "smoke", None)
    assert smoke.paper_card is None and smoke.departures() == []
    assert smoke.seeds == [0, 1] and smoke.base["model"] == "tiny"
    assert smoke.base["epochs"] == 3.0 and "precision" not in smoke.base
    assert [p.get("epsilon") for p in smoke.points if p["method"] in ("adv", "rs_rp")] == [
        0.001,
        0.001,
    ]


@pytest.mark.skipif(
    not PAPER_TEXTS.is_dir(), reason="the paper texts (../shared/papers) are absent"
)
def test_every_quote_of_the_huang2021_card_is_on_its_line_of_the_paper():
    assert misquoted(CARD) == []


def test_paper_dry_run_prints_the_budget_and_the_departures():
    out = subprocess.run(
        [sys.executable, "sweeps/robust_xnli.py", "--preset", "paper", "--dry-run"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=scaled_timeout(120),
        check=True,
    ).stdout
    assert "10 configurations x 10 seeds = 100 trials" in out
    assert "Paper card: huang2021" in out
    for departure in ("adv_steps", "evals_per_epoch", "RS-DA epochs", "mixed_language"):
        assert f"{departure}:" in out
