"""A sweep whose trials kept their checkpoints by test (`selection_dev=test`, the released EAR
scripts' rule, `--preset released` only): its report marks every number "selected on test, as
the released scripts do: not a claim" and its verdict claims nothing, where the same scores
selected on dev are a gain."""

import json

import numpy as np
import pandas as pd
import pytest
from fake_sweeps import complete_parent, log_skilled_trials, trial_tags

from analysis.report import report_sweep
from analysis.verdict import GAIN, NO_DIFFERENCE, SELECTED_ON_TEST, Verdict, claimless

SEEDS = (0, 1, 2)
N = 300
KEYS = ("dev/en", "test/en", "test/es", "test/de")
MARK = "_Selected on test, as the released scripts do: not a claim._"


def _sweep(root, experiment: str, selection_dev: str) -> str:
    """A finished sweep of the baseline (skill 0.6) and an EAR configuration 15 points better
    on dev and test, every trial logged with `selection_dev`."""
    uri, client, experiment_id, parent = complete_parent(
        root, experiment, {"significance_test": "ttest"}
    )
    rng = np.random.default_rng(11)
    difficulty = {key: rng.beta(2, 2, size=N) for key in KEYS}
    configs = {
        "finetune": ("finetune", {}, 0.6),
        "ear alpha=1": ("ear", {"alpha": "1"}, 0.75),
    }
    for label, (method, params, skill) in configs.items():
        tags = trial_tags(parent, label, method, "none", params)
        logged = {**params, "selection_dev": selection_dev}
        draw = (rng, {"dev": skill, "test": skill}, difficulty)
        log_skilled_trials(client, experiment_id, tags, logged, SEEDS, draw)
    client.set_terminated(parent)
    return uri


@pytest.mark.parametrize("selection_dev", ["test", "en"])
def test_a_sweep_selected_on_test_is_marked_everywhere_and_claims_nothing(tmp_path, selection_dev):
    uri = _sweep(tmp_path, f"on_{selection_dev}", selection_dev)
    out = tmp_path / "out"
    report = report_sweep(uri, f"on_{selection_dev}", out_dir=str(out))
    markdown = (out / "report.md").read_text()
    lines = markdown.splitlines()
    headings = [i for i, line in enumerate(lines) if line.startswith("#")]
    verdict = markdown.split("## Verdict against the baseline")[1].split("\n## ")[0]
    on_test = selection_dev == "test"
    # Selected on dev, the same scores are a gain: the marking and the silence come from the
    # trials' param alone.
    assert report.verdict.outcome == (NO_DIFFERENCE if on_test else GAIN)  # tag and summary
    assert ("beats the baseline" in verdict) is not on_test
    assert all((lines[i + 2] == MARK) is on_test for i in headings)
    assert len(headings) >= 6  # title, verdict, dev and test tables, selection, comparisons
    latex = (out / "report.tex").read_text()
    captions = latex.count(r"\caption{")
    assert captions >= 1  # the effect sizes' table
    # Each caption (title, then note) carries the mark.
    assert latex.count(MARK.strip("_")) == (captions if on_test else 0)
    assert json.loads((out / "selected_config.json").read_text())["selected_on_test"] is on_test
    if on_test:
        assert f"No claim: every number of this sweep is {SELECTED_ON_TEST}." in verdict
        assert "significant gains" not in verdict


def test_one_trial_selected_on_test_takes_the_claim_away():
    gain = Verdict(GAIN, "The selected configuration beats the baseline.", "On test, ...")
    mixed = pd.DataFrame({"selection_dev": ["en", "test"]})
    verdict = claimless(gain, mixed)
    assert (verdict.outcome, verdict.languages) == (NO_DIFFERENCE, "")
    assert "beats" not in verdict.headline
    # Selected on dev, or from a sweep that logged no such param: the verdict stands.
    assert claimless(gain, mixed.iloc[:1]) is gain
    assert claimless(gain, pd.DataFrame({"seed": [0]})) is gain
