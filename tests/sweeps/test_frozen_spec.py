"""A `SweepSpec` is frozen: `--set`, a sweep file, `--set method=NAME` and `--set seeds=auto`
each make a new spec and leave the one they started from as it was; its configurations are
validated once per spec."""

import copy
import dataclasses

import pytest

import sweeps.spec.experiment
from sweeps import ear_xnli
from sweeps.cli import apply_overrides, resolve_paths
from sweeps.planning.sweep_file import load_sweep, sweep_text
from sweeps.spec.experiment import experiment_spec


def _smoke():
    return experiment_spec(ear_xnli, "smoke", None)


@pytest.mark.parametrize(
    ("name", "value"),
    [("strategy", "search"), ("base", {}), ("points", []), ("seeds", [7]), ("top_k", 3)],
)
def test_a_spec_refuses_attribute_assignment(name, value):
    spec = _smoke()
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(spec, name, value)


@pytest.mark.parametrize(
    "settings",
    [
        {"epochs": "0.5", "beta": "0.1"},  # a trial setting and a hyperparameter axis
        {"top_k": "2", "seeds": "3,4", "log_models": "true"},  # sweep settings
        {"method": "adv", "epsilon": "0.01"},  # another objective in the compared ones' place
        {"seeds": "auto"},  # sequential seeds
    ],
)
def test_set_makes_a_new_spec_and_leaves_its_start_unchanged(settings):
    spec = _smoke()
    before = copy.deepcopy(spec)
    changed = apply_overrides(spec, settings)
    assert changed is not spec and changed != spec
    assert spec == before and spec.method_line == before.method_line


def test_resolved_paths_are_a_new_spec():
    spec = _smoke()
    before = copy.deepcopy(spec)
    assert "cache_dir" in resolve_paths(spec).base
    assert spec == before and "cache_dir" not in spec.base


def test_a_sweep_file_makes_a_new_spec_and_leaves_the_preset_unchanged(monkeypatch):
    preset = _smoke()
    before = copy.deepcopy(preset)
    # load_sweep rebuilds the preset's spec: hand it this one to see that it stays as it was.
    monkeypatch.setattr(
        sweeps.planning.sweep_file, "experiment_spec", lambda script, name, data: preset
    )
    edited = apply_overrides(_smoke(), {"epochs": "0.5", "alpha": "0.5", "seeds": "3,4"})
    loaded = load_sweep(sweep_text(edited), "f.yaml", ear_xnli)
    assert loaded == edited and loaded is not preset
    assert preset == before


def test_a_spec_never_shares_a_scripts_grids():
    spec = apply_overrides(_smoke(), {"beta": "0.3", "epochs": "1"})
    assert ear_xnli.POINTS["smoke"] == _smoke().points != spec.points
    assert all(point is not grid for point in spec.points for grid in ear_xnli.POINTS["smoke"])


def test_configs_are_validated_once_per_spec(monkeypatch):
    spec = _smoke()
    calls = []
    original = sweeps.spec.experiment.trial_config
    monkeypatch.setattr(
        sweeps.spec.experiment,
        "trial_config",
        lambda *args, **kwargs: calls.append(args) or original(*args, **kwargs),
    )
    first = spec.configs()
    assert len(calls) == len(spec.points)
    assert spec.configs() == first and spec.baseline_points()
    assert len(calls) == len(spec.points)  # the second call and its readers build none
    spec.configs().clear()  # a caller's list is its own
    assert spec.configs() == first
    changed = apply_overrides(spec, {"epochs": "2"})
    assert {config.epochs for config in changed.configs()} == {2.0}
    assert len(calls) == 2 * len(spec.points)  # the new spec validated once in turn
