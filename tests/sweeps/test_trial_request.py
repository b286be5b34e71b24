"""The driver-to-worker contract (sweeps/spec/trial_contract.py) and the sweep's configurations
resolved once (`SweepSpec.trial_config`, `SweepSpec.configs`). No Ray started here."""

import dataclasses

import pytest
from ray.tune.search.variant_generator import generate_variants

from sweeps import ear_xnli
from sweeps.cli import apply_overrides
from sweeps.running.tune_names import tune_trial_dirname, tune_trial_name
from sweeps.spec.experiment import experiment_spec
from sweeps.spec.trial_contract import REQUIRED_KEYS, TRIAL_INDEX, TrialRequest
from xlt_core.config import TrialConfig
from xlt_core.errors import ConfigError, TrainingDiverged
from xlt_schema import DIVERGED_FAILURE

REQUEST = TrialRequest(
    base={"model": "tiny", "epochs": 1.0},
    phase="grid",
    experiment_id="7",
    parent_run_id="parent",
    threads=2,
    log_model=True,
)


def test_a_grid_space_resolves_to_one_request_per_point_and_seed():
    points = [{"method": "finetune"}, {"method": "ear", "alpha": 0.1}]
    space = REQUEST.to_space(points=points, seeds=[0, 1])
    requests = [TrialRequest.from_space(resolved) for _, resolved in generate_variants(space)]
    assert sorted((r.point["method"], r.seed) for r in requests) == [
        ("ear", 0),
        ("ear", 1),
        ("finetune", 0),
        ("finetune", 1),
    ]
    assert {
        (r.phase, r.experiment_id, r.parent_run_id, r.threads, r.log_model) for r in requests
    } == {("grid", "7", "parent", 2, True)}
    assert requests[0].config() == TrialConfig.from_dict(
        {**REQUEST.base, **requests[0].point, "seed": requests[0].seed}
    )


def test_the_run_name_is_the_configuration_and_the_seed():
    request = TrialRequest(**{**REQUEST.__dict__, "point": {"method": "finetune"}, "seed": 3})
    assert request.run_name() == "finetune seed=3"


def _tune_trial(config: dict, **creators):
    from ray.tune.experiment import Trial

    # stub: no registered trainable needed; the tag as Tune's grid search writes it
    return Trial(
        "run_tracked_trial",
        stub=True,
        config=config,
        trial_id="ab12_00000",
        experiment_tag="0_point=method_ear,seed=5",
        **creators,
    )


def test_tune_names_a_trial_as_its_mlflow_run_and_keeps_its_directory_name():
    space = REQUEST.to_space(points=[{"method": "ear", "alpha": 0.1}], seeds=[5])
    ((_, resolved),) = generate_variants(space)
    creators = {"trial_name_creator": tune_trial_name, "trial_dirname_creator": tune_trial_dirname}
    trial = _tune_trial(resolved, **creators)
    assert str(trial) == TrialRequest.from_space(resolved).run_name()
    assert str(trial) == "ear alpha=0.1 beta=0.1 layer=6 m=1 seed=5"
    # Tune's own directory name (a trial's directory is found by its trial id), but its date
    default = _tune_trial(resolved)._generate_dirname()
    assert trial._generate_dirname().rsplit("_", 2)[0] == default.rsplit("_", 2)[0]
    assert "ab12_00000" in trial._generate_dirname()


def test_a_trial_whose_sampled_configuration_is_invalid_keeps_tunes_name():
    space = {**REQUEST.to_space(), "seed": 0, "point": {"method": "ear", "layer": 0}}
    trial = _tune_trial(space, trial_name_creator=tune_trial_name)
    assert str(trial) == "run_tracked_trial_ab12_00000"


def test_a_search_space_leaves_the_point_to_the_searcher():
    space = TrialRequest(**{**REQUEST.__dict__, "seed": 3, "search_seeds": (3, 4)}).to_space()
    assert "point" not in space and space["seed"] == 3 and space["search_seeds"] == [3, 4]
    sampled = {**space, "point": {"method": "ear", "alpha": 1.0}}
    assert TrialRequest.from_space(sampled).seed == 3
    # Tune's Repeater numbers the repeats of a sampled configuration: each takes its seed.
    assert TrialRequest.from_space({**sampled, TRIAL_INDEX: 1}).seed == 4


def test_a_space_without_the_contract_keys_is_refused_naming_them():
    space = REQUEST.to_space(points=[{"method": "finetune"}], seeds=[0])
    damaged = {key: value for key, value in space.items() if key not in ("base", "phase")}
    with pytest.raises(ConfigError, match="missing: base, phase") as error:
        TrialRequest.from_space(damaged)
    assert all(key in str(error.value) for key in REQUIRED_KEYS)


def test_the_spec_validates_each_point_once_and_again_after_a_change(monkeypatch):
    spec = experiment_spec(ear_xnli, "smoke", None)
    built = []
    original = TrialConfig.from_dict.__func__
    monkeypatch.setattr(
        TrialConfig,
        "from_dict",
        classmethod(lambda cls, values: built.append(values) or original(cls, values)),
    )
    configs = spec.configs()
    assert [c.method for c in configs] == [point["method"] for point in spec.points]
    assert spec.configs() == configs and len(built) == len(spec.points)
    spec = apply_overrides(spec, {"epochs": "2"})  # a new spec, validated once in turn
    assert {c.epochs for c in spec.configs()} == {2.0} and len(built) == 2 * len(spec.points)


def test_a_trial_config_takes_the_point_then_extra_values_then_the_seed():
    spec = experiment_spec(ear_xnli, "smoke", None)
    point = next(p for p in spec.points if p["method"] == "ear")
    config = spec.trial_config(point, seed=5, alpha=0.5)
    assert (config.method, config.objective.alpha, config.seed) == ("ear", 0.5, 5)
    assert config.epochs == spec.base["epochs"]


def test_a_bad_point_is_refused_naming_its_setting():
    spec = experiment_spec(ear_xnli, "smoke", None)
    spec = dataclasses.replace(spec, points=[*spec.points, {"method": "ear", "alpha": -1.0}])
    with pytest.raises(ConfigError, match="alpha"):
        spec.configs()


def test_a_diverged_trials_failure_text_starts_as_the_report_reads_it():
    from analysis.sanity import DIVERGED
    from sweeps.spec.trial_contract import failure_text

    assert TrainingDiverged.__name__ == DIVERGED_FAILURE == DIVERGED
    text = failure_text(TrainingDiverged("loss became nan at step 3"))
    assert text == f"{DIVERGED_FAILURE}: loss became nan at step 3"
    assert failure_text(ValueError("bad")) == "ValueError: bad"
