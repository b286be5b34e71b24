"""The group-sequential design over seed rounds (analysis/sequential.py): its boundaries
against published ones, and its type-I error, power and seeds spent on simulated XNLI-like
comparisons (analysis/seed_simulation.py)."""

import dataclasses
import os
from types import SimpleNamespace

import numpy as np
import pytest

from analysis.seed_simulation import design_figures
from analysis.sequential import (
    CONTINUE,
    EFFICACY,
    FUTILITY,
    MAXIMUM,
    SequentialDesign,
    adjusted_p_value,
    crossed_z,
    decide,
    obrien_fleming_spending,
    run_rounds,
)

COMPARISONS = 2000


def test_boundaries_match_gsdesign_five_equal_looks():
    # gsDesign(k = 5, test.type = 2, alpha = 0.025, sfu = sfLDOF) and ldbounds'
    # ldBounds(5, iuse = 1, alpha = 0.05): 4.8769, 3.3569, 2.6803, 2.2898, 2.0310.
    design = SequentialDesign((2, 2, 2, 2, 2))
    assert design.bounds == pytest.approx([4.8769, 3.3569, 2.6803, 2.2898, 2.0310], abs=2e-3)


def test_the_boundaries_spend_exactly_the_alpha():
    design = SequentialDesign()
    assert obrien_fleming_spending(1.0, 0.05) == pytest.approx(0.05)
    # Reaching the last round with |z| at its boundary is as extreme as alpha itself.
    assert adjusted_p_value(design, 2, design.bounds[-1]) == pytest.approx(0.05, abs=2e-4)
    assert adjusted_p_value(design, 0, design.bounds[0]) == pytest.approx(
        obrien_fleming_spending(design.information[0], 0.05), abs=2e-4
    )


def test_adjusted_p_values_order_earlier_stops_as_more_extreme():
    design = SequentialDesign()
    first = adjusted_p_value(design, 0, design.bounds[0] + 0.5)
    last = adjusted_p_value(design, 2, design.bounds[0] + 0.5)
    assert first < last < 0.05
    assert adjusted_p_value(design, 2, 1.0) > 0.05


@pytest.fixture(scope="module")
def null_figures():
    return design_figures(SequentialDesign(), 0.0, comparisons=COMPARISONS, seed=0)


@pytest.fixture(scope="module")
def alternative_figures():
    return design_figures(SequentialDesign(), 0.02, comparisons=COMPARISONS, seed=1)


def test_type_one_error_is_five_percent(null_figures):
    assert null_figures.comparisons >= 2000
    assert null_figures.sequential_rejects == pytest.approx(0.05, abs=0.015)
    assert null_figures.fixed_rejects == pytest.approx(0.05, abs=0.015)
    # The sweep's seed-averaged t-test, on the same runs, does not hold its level.
    assert null_figures.ttest_rejects > 0.08


def test_futility_saves_seeds_under_the_null(null_figures):
    assert null_figures.sequential_mean_seeds < 0.8 * null_figures.max_seeds


def test_power_is_close_to_fixed_seeds_with_fewer_seeds(alternative_figures):
    figures = alternative_figures
    assert figures.sequential_rejects > figures.fixed_rejects - 0.05
    assert figures.sequential_rejects > 0.5
    assert figures.sequential_mean_seeds < figures.max_seeds


def test_a_clear_gain_stops_at_the_first_round_and_a_null_one_for_futility():
    rng = np.random.default_rng(4)
    design = SequentialDesign()
    noise = rng.normal(0, 0.3, (2, design.max_seeds, 500))
    differences = noise + np.array([0.2, 0.0])[:, None, None]
    differences[1, :3] -= differences[1, :3].mean()  # exactly none in the first round
    stopped, decision, z = run_rounds(design, differences)
    assert list(decision) == [EFFICACY, FUTILITY]
    assert list(stopped) == [0, 0]
    assert z[0] > design.bounds[0]


def test_the_last_round_decides_between_efficacy_and_the_maximum():
    design = SequentialDesign()
    assert decide(design, 2, np.array([3.0, -3.0, 1.0])).tolist() == [EFFICACY, EFFICACY, MAXIMUM]


def test_crossed_z_has_the_sign_of_the_difference():
    rng = np.random.default_rng(5)
    differences = rng.normal(-0.05, 0.3, (4, 300))
    assert crossed_z(differences) < 0


def test_a_design_without_a_seed_variance_is_refused():
    with pytest.raises(ValueError, match="first round needs at least 2 seeds"):
        SequentialDesign((1, 1, 1))
    with pytest.raises(ValueError, match="alpha"):
        SequentialDesign(alpha=1.5)


class _FakePhases:
    """What `SeedRoundPhases` uses of `sweeps.running.tune_phases.TunePhases`: each round's
    points and seeds are recorded and every trial 'finishes'."""

    def __init__(self, spec):
        self.spec, self.parent_run_id, self.rounds, self.tags = spec, "parent", [], {}
        self.client = self

    def set_tag(self, run_id, key, value):
        self.tags[key] = value

    def run_grid(self, phase, points, seeds):
        self.rounds.append((phase, [dict(p) for p in points], list(seeds)))
        return [SimpleNamespace(error=None, metrics={})] * (len(points) * len(seeds))


def test_rounds_stop_decided_configurations_and_keep_the_baseline(monkeypatch):
    import json

    from analysis import sequential
    from sweeps import ear_xnli
    from sweeps.cli import apply_overrides
    from sweeps.running import sequential_seeds
    from sweeps.spec.experiment import experiment_spec
    from sweeps.spec.trial_contract import trial_config

    spec = apply_overrides(experiment_spec(ear_xnli, "smoke", None), {"seeds": "auto"})
    assert spec.seeds == [0, 1, 2, 3, 4] and spec.seed_rounds == (3, 1, 1)
    baseline, strong, null = (trial_config(spec.base, point).config_key() for point in spec.points)
    # Per round, the z of each configuration still open: strong crosses at round 2, null is
    # futile at round 1.
    z_by_round = iter([{strong: (2.0, 3), null: (0.0, 3)}, {strong: (3.5, 4)}])
    monkeypatch.setattr(
        sequential_seeds,
        "round_statistics",
        lambda client, parent, spec, keys: ("dev/en/accuracy", next(z_by_round)),
    )
    phases = _FakePhases(spec)
    results, failed = sequential_seeds.SeedRoundPhases(phases).run()
    assert [(phase, seeds, len(points)) for phase, points, seeds in phases.rounds] == [
        ("grid-round1", [0, 1, 2], 3),
        ("grid-round2", [3], 2),
    ]
    assert len(results) == 9 + 2 and failed == 0  # of at most 3 configurations x 5 seeds
    record = json.loads(phases.tags[sequential.SEQUENTIAL_TAG])
    assert record["trials"] == 11 and record["max_trials"] == 15
    outcomes = {o["decision"]: o for o in record["configurations"]}
    assert outcomes["futility"]["rounds"] == 1 and outcomes["efficacy"]["rounds"] == 2
    assert outcomes["efficacy"]["p_adjusted"] < 0.05 < outcomes["futility"]["p_adjusted"]


def test_the_report_section_states_the_design_and_the_rounds():
    import json

    from analysis.sequential import SEQUENTIAL_TAG, sequential_section

    assert sequential_section({}) == []
    design = SequentialDesign()
    record = {
        "design": design.describe(),
        "metric": "dev/en/accuracy",
        "trials": 11,
        "max_trials": 15,
        "configurations": [
            {
                "label": "ear a",
                "rounds": 2,
                "seeds": 4,
                "decision": EFFICACY,
                "z": 3.5,
                "p_adjusted": 0.004,
            },
        ],
    }
    lines = sequential_section({SEQUENTIAL_TAG: json.dumps(record)})
    text = "\n".join(lines)
    assert lines[0] == "## Sequential seeds"
    assert "Lan-DeMets O'Brien-Fleming-type alpha spending" in text
    assert "Trials run: 11 of at most 15" in text
    assert "| ear a | 2 | 4 | efficacy | +3.50 | 0.004 |" in text


def test_sequential_seeds_are_refused_for_the_search_strategy():
    from sweeps import ear_xnli
    from sweeps.cli import apply_overrides
    from sweeps.spec.experiment import experiment_spec
    from xlt_core.errors import ConfigError

    spec = dataclasses.replace(experiment_spec(ear_xnli, "smoke", None), strategy="search")
    with pytest.raises(ConfigError, match="seeds='auto': strategy grid"):
        apply_overrides(spec, {"seeds": "auto"})


def test_the_scripted_scores_continue_after_round_one_and_stop_after_round_two():
    """What the sweep test below relies on (tests/scripted_trials.py): the paper's setting
    continues after round 1 and crosses efficacy after round 2; the released one is futile."""
    from scripted_trials import example_scores

    design = SequentialDesign()
    baseline = np.array([example_scores("finetune", 1.0, seed) for seed in range(5)])
    differences = np.array(
        [[example_scores("ear", alpha, seed) for seed in range(5)] for alpha in (1.0, 0.1)]
    )
    differences -= baseline
    assert decide(design, 0, crossed_z(differences[:, :3])).tolist() == [CONTINUE, FUTILITY]
    stopped, decision, _ = run_rounds(design, differences)
    assert list(decision) == [EFFICACY, FUTILITY] and list(stopped) == [1, 0]


@pytest.mark.slow
def test_the_smoke_sweep_with_sequential_seeds_runs_a_second_round_and_spends_fewer_trials(
    tmp_path,
):
    """`python sweeps/ear_xnli.py --preset smoke --set seeds=auto` through the real command,
    Tune, MLflow and report, with the scripted scores of tests/scripted_trials.py in place of
    training (whose decisions move between machines): the released setting is futile after
    round 1, the paper's gets round 2 and is decided there."""
    import json

    from mlflow.tracking import MlflowClient
    from scripted_trials import SEQUENTIAL_TRIAL
    from sweep_helpers import REPO, run_command
    from tracking_stores import tracking_store

    from analysis.collect import find_parent_run
    from analysis.sequential import SEQUENTIAL_TAG
    from sweeps.running.trainable import TRIAL_FUNCTION_ENV
    from xlt_schema import CONFIRM_PHASE, PHASE_TAG

    uri = tracking_store(tmp_path)
    tests = str(REPO / "tests")
    env = {
        TRIAL_FUNCTION_ENV: SEQUENTIAL_TRIAL,  # the Ray workers inherit it
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(REPO), tests, os.environ.get("PYTHONPATH")])
        ),
    }
    script = str(REPO / "sweeps" / "ear_xnli.py")
    argv = [script, "--preset", "smoke", "--set", "seeds=auto", "--set", "log_models=false"]
    completed = run_command(argv, tmp_path, env=env)
    client = MlflowClient(uri)
    parent = find_parent_run(client, "ear_xnli")
    record = json.loads(parent.data.tags[SEQUENTIAL_TAG])
    trials = client.search_runs(
        [parent.info.experiment_id], f"tags.mlflow.parentRunId = '{parent.info.run_id}'"
    )
    # Then the confirmation phase: the selected configuration and the baseline on 5 fresh
    # seeds (as many as the rounds' seeds), apart from the rounds.
    confirming = [run for run in trials if run.data.tags[PHASE_TAG] == CONFIRM_PHASE]
    trials = [run for run in trials if run not in confirming]
    assert sorted({int(run.data.params["seed"]) for run in confirming}) == [5, 6, 7, 8, 9]
    assert len(confirming) == 10
    outcomes = {o["label"].split()[1]: o for o in record["configurations"]}
    assert {k: (o["decision"], o["rounds"], o["seeds"]) for k, o in outcomes.items()} == {
        "alpha=0.1": ("futility", 1, 3),
        "alpha=1": ("efficacy", 2, 4),
    }
    # Round 1: 3 seeds of the 3 configurations; round 2: seed 3 of the paper's setting and
    # of the baseline. 11 of at most 15.
    assert record["trials"] == len(trials) == 11 and record["max_trials"] == 15
    phases = sorted(run.data.tags[PHASE_TAG] for run in trials)
    assert phases == ["grid-round1"] * 9 + ["grid-round2"] * 2
    report = next((tmp_path / "reports" / "ear_xnli").glob("*/report.md")).read_text()
    assert "## Sequential seeds" in report and "Lan-DeMets O'Brien-Fleming" in report
    assert "Trials run: 11 of at most 15" in report
    print(completed.stdout[-3000:])
