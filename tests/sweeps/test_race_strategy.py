"""Strategy `race` without Ray: its dry run and checks, and its rounds on a fake TunePhases
whose scores are given (no eliminations: the dry run's worst case; one clear loser: dropped
after round 1, its runs and the parent tagged, the winner confirmed)."""

import dataclasses
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest
from conftest import scaled_timeout, what_went_wrong
from scripted_trials import EXAMPLES, GAINS, GATE_VARIABLE, GATED_TRIAL
from sweep_helpers import REPO, SCRIPT, child_runs, kill_driver, parent_runs, start_script, wait_for

from analysis.seed_race import RACE_TAG, race_round
from sweeps import ear_xnli
from sweeps.cli import main
from sweeps.running.trainable import TRIAL_FUNCTION_ENV
from sweeps.spec.experiment import experiment_spec
from sweeps.strategies import race
from xlt_core.errors import ConfigError
from xlt_schema import CONFIRM_POINTS_TAG, PHASE_TAG

SEEDS = [0, 1, 2, 3, 4]


def _spec(seeds=SEEDS):
    spec = experiment_spec(ear_xnli, "smoke", None)  # finetune (baseline) and 2 EAR settings
    return dataclasses.replace(spec, seeds=list(seeds), strategy="race")


class FakeClient:
    def __init__(self):
        self.tags: dict[str, dict] = {}

    def set_tag(self, run_id, key, value):
        self.tags.setdefault(run_id, {})[key] = value

    def log_batch(self, run_id, tags):
        for tag in tags:
            self.set_tag(run_id, tag.key, tag.value)


class FakeResult:
    error, metrics = None, {}


class FakePhases:
    """TunePhases as the race uses it: each grid phase's trials, recorded."""

    def __init__(self, spec):
        self.spec, self.client, self.parent_run_id, self.tags = spec, FakeClient(), "parent", {}
        self.grids = []

    def run_grid(self, phase, points, seeds):
        self.grids.append(
            (phase, [self.spec.trial_config(p).config_label() for p in points], seeds)
        )
        return [FakeResult() for _ in points for _ in seeds]


def _scripted(monkeypatch, rows):
    """The race reads `rows` (candidates x seeds) as its finished runs' scores."""

    def scores(client, parent, spec, configs, seeds):
        matrix = np.asarray(rows, dtype=float)[:, : len(seeds)]
        ids = {
            config.config_key(): [f"{config.config_label()}#{s}" for s in seeds]
            for config in configs
        }
        return "dev/en/accuracy", matrix, ids

    monkeypatch.setattr(race, "race_scores", scores)


def test_the_dry_run_prints_the_rounds_at_their_worst_case(capsys):
    argv = ["--preset", "smoke", "--strategy", "race", "--set", "seeds=0,1,2,3,4"]
    assert main(ear_xnli, [*argv, "--set", "confirm_seeds=0", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "Round 1 (race-round1): 3 configurations (at most) x 2 seeds = 6 trials" in out
    assert "Round 4 (race-round4): 3 configurations (at most) x 1 seed = 3 trials" in out
    assert (
        "Trials: 15 at most; the race's own 15 at most (no eliminations), about 8 expected" in out
    )


def test_the_worst_case_is_the_trials_of_a_race_without_eliminations(monkeypatch):
    _scripted(monkeypatch, np.zeros((2, 5)))  # two tied candidates: nobody is dropped
    spec = _spec()
    phases = FakePhases(spec)
    results, failed = race.RacePhases(phases).run()
    assert len(results) == race.STRATEGY.trial_count(spec)[0] == 15 and failed == 0
    assert [(phase, seeds) for phase, _, seeds in phases.grids] == [
        ("race-round1", [0, 1]), ("race-round2", [2]), ("race-round3", [3]), ("race-round4", [4])
    ]  # fmt: skip
    assert sum(len(labels) for _, labels, _ in phases.grids) == 4 * 3
    plan = race.STRATEGY.plan(spec)
    assert sum(entry.trials for phase in plan for entry in phase.entries) == 15


def test_a_clear_loser_is_dropped_tagged_and_the_winner_confirmed(monkeypatch):
    _scripted(monkeypatch, [[5.0, 5.1, 5.2, 5.0, 5.1], [1.0, 1.1, 1.2, 1.0, 1.1]])
    spec = _spec()
    phases = FakePhases(spec)
    results, _ = race.RacePhases(phases).run()
    labels = [spec.trial_config(p).config_label() for p in spec.points]
    baseline, winner, loser = labels  # the smoke points: finetune, then the EAR settings
    assert phases.grids == [("race-round1", [baseline, winner, loser], [0, 1])]
    assert len(results) == 6
    record = json.loads(phases.client.tags["parent"][RACE_TAG])
    (only,) = record["rounds"]
    assert only["leader"] == winner and list(only["dropped"]) == [loser]
    assert only["dropped"][loser]["t"] == -np.inf and only["dropped"][loser]["seeds"] == 2
    dropped = json.loads(phases.client.tags[f"{loser}#1"][race.DROPPED_TAG])
    assert dropped["round"] == 1 and dropped["leader"] == winner
    confirmed = json.loads(phases.tags[CONFIRM_POINTS_TAG])
    assert confirmed == [spec.points[0], spec.points[1]]


def test_a_race_needs_two_seeds_and_a_configuration_besides_the_baseline():
    with pytest.raises(ConfigError, match="at least 2 seeds"):
        race.STRATEGY.check(_spec([0]), None)
    spec = _spec()
    with pytest.raises(ConfigError, match="a configuration to race"):
        race.STRATEGY.check(dataclasses.replace(spec, points=spec.baseline_points()), None)


def _round_runs(uri: str, phase: str, status: str) -> list:
    return [
        run
        for run in child_runs(uri)
        if run.data.tags.get(PHASE_TAG) == phase and run.info.status == status
    ]


def test_the_scripted_scores_drop_the_released_setting_after_round_2():
    """What the slow test below expects, from analysis.seed_race on the scripted dev
    accuracies (tests/scripted_trials.py): the paper's EAR setting leads, the released one
    (the baseline's scores) is kept after round 1 (p 0.063 on 1 df) and dropped after round 2."""
    design = race.race_design(_spec())
    paper = [0.5 + gain / EXAMPLES for gain in GAINS]
    scores = np.array([paper, [0.5] * 5])  # the smoke points' order: alpha 1, then 0.1
    assert race_round(design, 0, scores[:, :2], np.ones(2, bool)) == (0, [])
    best, (dropped,) = race_round(design, 1, scores[:, :3], np.ones(2, bool))
    assert (best, dropped.candidate, dropped.seeds) == (0, 1, 3)


@pytest.mark.slow
def test_a_race_killed_mid_race_resumes_the_same_race_to_its_verdict(tmp_path):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    gate = tmp_path / "gate"
    args = ["--preset", "smoke", "--strategy", "race", "--tracking-uri", uri]
    args += ["--set", "seeds=0,1,2,3,4", "--set", "confirm_seeds=2", "--set", "log_models=false"]
    ray_tmpdir = tempfile.mkdtemp(prefix="xr", dir="/tmp")  # Ray's socket paths are short
    env = {
        **os.environ,
        "RAY_TMPDIR": ray_tmpdir,
        TRIAL_FUNCTION_ENV: GATED_TRIAL,  # seed 2's trials (round 2) wait for the gate
        GATE_VARIABLE: str(gate),
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(REPO), str(REPO / "tests"), os.environ.get("PYTHONPATH")])
        ),
    }
    driver = start_script(tmp_path, *args, env=env)
    try:
        wait_for(lambda: _round_runs(uri, "race-round2", "RUNNING"), 600, "a round-2 trial")
    finally:
        kill_driver(driver, ray_tmpdir)
    first = {r.info.run_id: r.info.end_time for r in child_runs(uri)
             if r.data.tags[PHASE_TAG] == "race-round1"}  # fmt: skip
    assert len(first) == 6

    gate.touch()
    resumed = subprocess.run(
        [sys.executable, str(SCRIPT), *args, "--resume"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=scaled_timeout(600),
    )  # fmt: skip
    assert resumed.returncode == 0, what_went_wrong(resumed)
    runs = child_runs(uri)
    assert {r.info.run_id: r.info.end_time for r in runs if r.info.run_id in first} == first
    trials = sorted((r.data.tags[PHASE_TAG], r.data.params["method"], r.data.params.get("alpha"),
                     r.data.params["seed"]) for r in runs)  # fmt: skip
    assert len(trials) == len(set(trials)) == 6 + 3 + 4  # 2 rounds, then the confirmation
    assert {t[0] for t in trials} == {"race-round1", "race-round2", "confirm"}
    (parent,) = parent_runs(uri)
    record = json.loads(parent.data.tags[RACE_TAG])
    assert [len(r["dropped"]) for r in record["rounds"]] == [0, 1]
    (loser,) = record["rounds"][1]["dropped"]
    assert "alpha=0.1" in loser and "alpha=1 " in record["rounds"][1]["leader"] + " "
    dropped = [r for r in runs if race.DROPPED_TAG in r.data.tags]
    assert len(dropped) == 3 and all(r.data.params["alpha"] == "0.1" for r in dropped)
    assert "Verdict:" in resumed.stdout
    report = tmp_path / "reports" / "ear_xnli" / parent.info.run_id / "report.md"
    assert "## Seed race" in report.read_text() and "dropped (behind" in report.read_text()
