"""A raced sweep's report selects the race's winner (the parent's WINNER_TAG), not the
best dev mean over every run: its selection, verdict and Seed race section name the same
configuration, though another has the better mean (a fake sweep as the sweeps layer logs it)."""

import json

from test_registry_reports import BEST, FEW_KEYS, _make_sweep

from analysis.collect import collect_trials
from analysis.report import report_sweep
from analysis.seed_race import RACE_TAG
from xlt_schema import WINNER_TAG

WINNER = "ear alpha=0.1 beta=1 layer=6 m=1"  # the fake sweep's weaker EAR setting


def _race(winner: str) -> dict:
    return {
        "design": "race over seed rounds [2]",
        "metric": "dev/en/accuracy",
        "trials": 8,
        "max_trials": 8,
        "rounds": [{"round": 1, "seeds": [0, 1], "running": [BEST, WINNER], "leader": winner,
                    "dropped": {}}],
    }  # fmt: skip


def test_the_report_selects_the_race_winner_not_the_best_mean(tmp_path):
    uri, client, parent, _ = _make_sweep(tmp_path, "raced", "ttest", False, None, FEW_KEYS)
    trials = collect_trials(client, parent)
    keys = dict(zip(trials["config_label"], trials["config_key"]))
    means = trials.groupby("config_label")["dev/en/accuracy"].mean()
    assert means[BEST] > means[WINNER]  # the generic rule would select BEST
    client.set_tag(parent, WINNER_TAG, keys[WINNER])
    client.set_tag(parent, RACE_TAG, json.dumps(_race(WINNER)))
    report = report_sweep(uri, "raced", out_dir=str(tmp_path / "out"))
    assert report.selection.config_label == WINNER
    markdown = (tmp_path / "out" / "report.md").read_text()
    assert f"| {WINNER} | 1 | 2 | won |" in markdown
    verdict = next(line for line in markdown.splitlines() if "selected configuration" in line)
    assert WINNER in verdict and BEST not in verdict
