"""`search_seeds`: phase 1 of strategy search ranks each sampled configuration on its mean over
several seeds with Tune's Repeater (no Ray started here)."""

import dataclasses
from types import SimpleNamespace

import pandas as pd
import pytest

from sweeps import ear_xnli
from sweeps.cli import apply_overrides
from sweeps.running import runner, search
from sweeps.running.search_phases import SearchPhases
from sweeps.running.tune_phases import TunePhases
from sweeps.spec.experiment import experiment_spec
from sweeps.spec.trial_contract import TRIAL_COMPLETE, TRIAL_INDEX, TrialRequest
from xlt_core.errors import ConfigError
from xlt_schema import RAY_NAME_TAG


def _search_spec(**settings) -> object:
    spec = dataclasses.replace(experiment_spec(ear_xnli, "smoke", None), strategy="search")
    return apply_overrides(spec, {name: str(value) for name, value in settings.items()})


def test_phase_one_repeats_each_sampled_configuration_over_the_seeds(tmp_path):
    options = runner.SweepOptions(
        tracking_uri=f"sqlite:///{tmp_path}/mlflow.db", storage_path=str(tmp_path)
    )
    spec = _search_spec(search_seeds=2, search_trials=3)
    tags = {RAY_NAME_TAG: "sweep"}
    phases = TunePhases(spec, options, None, "1", "parent", tags, {"cpu": 1}, None)
    internal = SearchPhases(phases).search_tuner()._local_tuner
    config = internal._tune_config
    assert type(config.search_alg).__name__ == "Repeater" and config.search_alg.repeat == 2
    assert config.scheduler is None  # Ray: no early-stopping scheduler with Repeater
    assert config.num_samples == 6
    space = internal._param_space
    assert space["search_seeds"] == [0, 1] and space["seed"] == 0 and "point" not in space


def _space(point: dict, **request) -> dict:
    """One trial's space as Tune hands it over."""
    settings = {"base": {}, "phase": "search", "experiment_id": "1", "parent_run_id": "p"}
    return TrialRequest(**settings, threads=1, point=point, **request).to_space()


def test_a_repeated_trial_takes_the_seed_of_its_repeat():
    space = _space({"method": "finetune"}, seed=7, search_seeds=(3, 4))
    assert TrialRequest.from_space({**space, TRIAL_INDEX: 1}).seed == 4
    assert TrialRequest.from_space(_space({"method": "finetune"}, seed=7)).seed == 7


def _result(point: dict, dev: float):
    return SimpleNamespace(
        error=None,
        metrics={search.METRIC: dev, TRIAL_COMPLETE: True},
        metrics_dataframe=pd.DataFrame({search.METRIC: [dev - 0.1, dev]}),
        config=_space(point, seed=0),
    )


def test_phase_one_ranks_on_the_mean_over_seeds_not_the_luckiest_seed():
    steady, lucky = {"method": "ear", "alpha": 1.0}, {"method": "ear", "alpha": 0.1}
    results = [
        _result(steady, 0.80),
        _result(steady, 0.80),
        _result(lucky, 0.85),
        _result(lucky, 0.70),
    ]
    assert search.top_configurations(results, 1) == [steady]
    assert search.top_configurations(results, 2) == [steady, lucky]


def test_more_search_seeds_than_seeds_are_refused():
    spec = _search_spec(search_seeds=3)  # smoke has 2 seeds
    with pytest.raises(ConfigError, match="search_seeds=3: at most the sweep's 2 seeds"):
        runner.check_sweep(spec)


def test_the_dry_run_says_asha_stops_trials_only_without_repeats():
    from sweeps.planning.plan import format_plan

    assert "ASHA stops some early" in format_plan(_search_spec(), None)
    repeated = format_plan(_search_spec(search_seeds=2), None)
    assert "ASHA stops some early" not in repeated and "no ASHA" in repeated
