"""Strategy `race` without Ray: its dry run and checks, and its rounds on a fake TunePhases
whose scores are given (no eliminations: the dry run's worst case; one clear loser: dropped
after round 1, its runs and the parent tagged, the winner named and confirmed). Then a real
race of the tiny model through Ray and MLflow, interrupted and resumed (slow)."""

import dataclasses
import json
import os
import tempfile

import numpy as np
import pytest
from sweep_helpers import (
    DEMO_SETTINGS,
    child_runs,
    interrupt_driver,
    kill_driver,
    parent_runs,
    resume_sweep,
    set_arguments,
    start_script,
    wait_for,
)

from analysis.seed_race import RACE_TAG, RaceDesign, race_round
from sweeps import ear_xnli
from sweeps.cli import main
from sweeps.spec.experiment import experiment_spec
from sweeps.strategies import race
from xlt_core.errors import ConfigError
from xlt_schema import (
    CONFIG_KEY_TAG,
    CONFIG_LABEL_TAG,
    CONFIRM_POINTS_TAG,
    PHASE_TAG,
    WINNER_TAG,
)

SEEDS = [0, 1, 2, 3, 4]
# The real race's smallest settings: the tiny model as the demo sweep trains it, 3 seeds (a
# round of 2, then 1: the race's fewest), no confirmation phase (tests/sweeps/
# test_confirmation.py runs it; the race only names its points: test below).
RACE_SEEDS = [0, 1, 2]
REAL_RACE = {
    **DEMO_SETTINGS,
    "max_eval_examples": "50",
    "confirm_seeds": "0",
    "log_models": "false",
}


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


@pytest.mark.parametrize(
    "first, rounds",
    [
        (2, [("race-round1", [0, 1]), ("race-round2", [2]), ("race-round3", [3]),
             ("race-round4", [4])]),
        (3, [("race-round1", [0, 1, 2]), ("race-round2", [3]), ("race-round3", [4])]),
        (5, [("race-round1", [0, 1, 2, 3, 4])]),
    ],
)  # fmt: skip
def test_the_worst_case_is_the_trials_of_a_race_without_eliminations(monkeypatch, first, rounds):
    _scripted(monkeypatch, np.zeros((2, 5)))  # two tied candidates: nobody is dropped
    spec = dataclasses.replace(_spec(), race_first_seeds=first)
    phases = FakePhases(spec)
    results, failed = race.RacePhases(phases).run()
    assert len(results) == race.STRATEGY.trial_count(spec)[0] == 15 and failed == 0
    assert [(phase, seeds) for phase, _, seeds in phases.grids] == rounds
    assert sum(len(labels) for _, labels, _ in phases.grids) == len(rounds) * 3
    plan = race.STRATEGY.plan(spec)
    assert sum(entry.trials for phase in plan for entry in phase.entries) == 15
    assert race.STRATEGY.parent_params(spec)["race_rounds"] == len(rounds)


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
    named = phases.client.tags["parent"][WINNER_TAG]  # the winner the report selects
    assert named == phases.tags[WINNER_TAG] == spec.trial_config(spec.points[1]).config_key()


def test_a_race_needs_two_seeds_and_a_configuration_besides_the_baseline():
    with pytest.raises(ConfigError, match="at least 2 seeds"):
        race.STRATEGY.check(_spec([0]), None)
    spec = _spec()
    with pytest.raises(ConfigError, match="a configuration to race"):
        race.STRATEGY.check(dataclasses.replace(spec, points=spec.baseline_points()), None)


def _scores(runs, labels: list[str], seeds: list[int], metric: str) -> np.ndarray:
    """The race's (configurations, seeds) matrix from its finished runs, NaN where none."""
    matrix = np.full((len(labels), len(seeds)), np.nan)
    for run in runs:
        label, seed = run.data.tags[CONFIG_LABEL_TAG], int(run.data.params["seed"])
        if label in labels and run.info.status == "FINISHED":
            matrix[labels.index(label), seeds.index(seed)] = run.data.metrics[metric]
    return matrix


def _replayed(record: dict, runs) -> list[tuple]:
    """Each round's leader and dropped configurations as an uninterrupted race decides them
    on the runs' scores (analysis/seed_race.py)."""
    labels, seeds = record["rounds"][0]["running"], RACE_SEEDS
    design = RaceDesign(candidates=len(labels), round_seeds=race.round_seeds(len(seeds)))
    scores = _scores(runs, labels, seeds, record["metric"])
    alive, rounds = np.ones(len(labels), dtype=bool), []
    for index, seen in enumerate(design.cumulative_seeds[: len(record["rounds"])]):
        best, dropped = race_round(design, index, scores[:, :seen], alive)
        alive[[elimination.candidate for elimination in dropped]] = False
        rounds.append((labels[best], sorted(labels[e.candidate] for e in dropped)))
    return rounds


def _round_finished(uri: str, phase: str) -> list:
    runs = child_runs(uri)
    done = [r for r in runs if r.data.tags.get(PHASE_TAG) == phase and r.info.status == "FINISHED"]
    return done if len(done) == 3 * 2 else []  # the baseline and 2 configurations x 2 seeds


@pytest.mark.slow
def test_a_real_race_interrupted_after_round_1_resumes_the_same_race(tmp_path):
    """The tiny model, through Ray and MLflow: SIGINT once round 1's trials are logged, then
    `--resume` finishes the same race (its rounds as the scores decide them, no trial run
    twice) and writes the report with its Seed race section, selecting the race's winner."""
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    args = ["--preset", "smoke", "--strategy", "race", "--tracking-uri", uri]
    args += set_arguments({**REAL_RACE, "seeds": ",".join(map(str, RACE_SEEDS))})
    ray_tmpdir = tempfile.mkdtemp(prefix="xr", dir="/tmp")  # Ray's socket paths are short
    env = {**os.environ, "RAY_TMPDIR": ray_tmpdir}
    driver = start_script(tmp_path, *args, env=env)
    try:
        first = wait_for(lambda: _round_finished(uri, "race-round1"), 600, "round 1's trials")
        assert interrupt_driver(driver, ray_tmpdir) == 130
    finally:
        if driver.poll() is None:
            kill_driver(driver, ray_tmpdir)
    first = {r.info.run_id: r.info.end_time for r in first}

    resumed = resume_sweep(tmp_path, args, env)
    runs = child_runs(uri)
    assert {r.info.run_id: r.info.end_time for r in runs if r.info.run_id in first} == first
    trials = [(r.data.tags[CONFIG_KEY_TAG], r.data.params["seed"]) for r in runs]
    assert len(trials) == len(set(trials)) and {r.info.status for r in runs} == {"FINISHED"}
    (parent,) = parent_runs(uri)
    record = json.loads(parent.data.tags[RACE_TAG])
    assert record["trials"] == len(runs)
    rounds = [(r["leader"], sorted(r["dropped"])) for r in record["rounds"]]
    assert rounds == _replayed(record, runs)
    winner = rounds[-1][0]
    keys = {r.data.tags[CONFIG_LABEL_TAG]: r.data.tags[CONFIG_KEY_TAG] for r in runs}
    assert parent.data.tags[WINNER_TAG] == keys[winner]
    report = tmp_path / "reports" / "ear_xnli" / parent.info.run_id
    assert "## Seed race" in (report / "report.md").read_text()
    assert json.loads((report / "selected_config.json").read_text())["config_key"] == keys[winner]
    verdict = next(line for line in resumed.stdout.splitlines() if line.startswith("Verdict:"))
    assert f"the selected configuration {winner} " in verdict
