"""The new settings refuse bad values; the sweeps' spaces reach every paper point."""

import pytest

from sweeps import ear_pawsx, ear_xnli, robust_pawsx, robust_xnli
from sweeps.cli import apply_overrides
from sweeps.running.trainable import flat_params
from sweeps.spec import spaces
from sweeps.spec.experiment import experiment_spec
from xlt_core.config import METHOD_HYPERPARAMETERS, TrialConfig
from xlt_core.errors import ConfigError


@pytest.mark.parametrize(
    "settings, field, allowed",
    [
        ({"method": "adv", "epsilon": 0}, "epsilon", "> 0"),
        ({"method": "rs_rp", "epsilon": "-0.1"}, "epsilon", "> 0"),
        ({"method": "rs_rp", "epsilon": "inf"}, "epsilon", "finite"),
        ({"method": "adv", "adv_steps": 0}, "adv_steps", ">= 1"),
        ({"method": "adv", "adv_steps": 1.5}, "adv_steps", "an integer"),
        ({"method": "adv", "adv_step_scale": 0}, "adv_step_scale", "> 0"),
        ({"method": "rs_da", "m": 0}, "m", ">= 1"),
        (
            {"method": "rs_da", "rs_da_variant": "both"},
            "rs_da_variant",
            "one of released, keep_originals",
        ),
        ({"method": "boosting"}, "method", "one of finetune, ear, adv, rs_rp, rs_da"),
        ({"task": "mnli"}, "task", "one of xnli, pawsx"),
        ({"generalized_pairs": "maybe"}, "generalized_pairs", "true or false"),
        ({"mixed_language": 2}, "mixed_language", "true or false"),
        ({"split_dev_files": "yes"}, "split_dev_files", "data_source='local'"),
    ],
)
def test_new_settings_refuse_bad_values(settings, field, allowed):
    with pytest.raises(ConfigError) as error:
        TrialConfig.from_dict(settings)
    assert error.value.field == field
    assert field in str(error.value) and allowed in str(error.value)


def test_command_line_strings_are_typed():
    config = TrialConfig.from_dict(
        {
            "method": "adv",
            "epsilon": "0.1",
            "adv_steps": "3",
            "generalized_pairs": "true",
            "mixed_language": "False",
        }
    )
    adv = config.objective
    assert (adv.epsilon, adv.adv_steps, config.generalized_pairs, config.mixed_language) == (
        0.1,
        3,
        True,
        False,
    )


def test_layer_is_checked_against_the_tiny_model_only_for_ear():
    assert TrialConfig.from_dict({"method": "adv", "tiny_layers": 2}).tiny_layers == 2
    with pytest.raises(ConfigError, match="between 1 and 2"):
        TrialConfig.from_dict({"method": "ear", "tiny_layers": 2})


def test_labels_and_params_name_each_methods_own_hyperparameters():
    adv = TrialConfig.from_dict({"method": "adv", "epsilon": 0.1})
    assert adv.config_label() == "adv epsilon=0.1 adv_steps=1 adv_step_scale=1"
    assert (
        TrialConfig.from_dict({"method": "rs_rp", "epsilon": 1.0}).config_label()
        == "rs_rp epsilon=1"
    )
    assert (
        TrialConfig.from_dict({"method": "rs_da", "m": 3}).config_label()
        == "rs_da m=3 rs_da_variant=released"
    )
    assert (
        adv.config_key() != TrialConfig.from_dict({"method": "adv", "epsilon": 0.01}).config_key()
    )
    params = flat_params(adv)
    assert params["epsilon"] == 0.1 and params["adv_steps"] == 1
    assert not {"alpha", "m", "rs_da_variant"} & set(params)  # other methods': not logged
    rs_da = flat_params(TrialConfig.from_dict({"method": "rs_da", "m": 3}))
    assert rs_da["m"] == 3 and not {"epsilon", "layer"} & set(rs_da)


def test_robust_paper_grid_and_smoke_points():
    points = experiment_spec(robust_xnli, "paper", None).points
    assert points[0] == spaces.BASELINE
    for method in ("adv", "rs_rp"):
        assert sorted(p["epsilon"] for p in points if p["method"] == method) == [
            0.001,
            0.01,
            0.1,
            1.0,
        ]
    assert [p["m"] for p in points if p["method"] == "rs_da"] == [3]
    assert [
        p["m"]
        for p in experiment_spec(robust_pawsx, "paper", None).points
        if p["method"] == "rs_da"
    ] == [10]
    smoke = experiment_spec(robust_xnli, "smoke", None)
    assert [p["method"] for p in smoke.points] == ["finetune", "adv", "rs_rp", "rs_da"]
    assert smoke.significance_test == "bootstrap" and smoke.seeds == [0, 1]
    assert smoke.base["generalized_pairs"] and smoke.base["mixed_language"]


def test_set_overrides_reach_the_points_whose_method_has_the_setting():
    spec = apply_overrides(
        experiment_spec(robust_xnli, "smoke", None),
        {"epsilon": "0.1", "rs_da_variant": "keep_originals", "m": "3"},
    )
    by_method = {p["method"]: p for p in spec.points}
    assert by_method["adv"]["epsilon"] == by_method["rs_rp"]["epsilon"] == 0.1
    assert by_method["rs_da"] == {"method": "rs_da", "m": 3, "rs_da_variant": "keep_originals"}
    assert by_method["finetune"] == {"method": "finetune"}
    # m is EAR's too: EAR points that did not list it now carry it.
    ear = apply_overrides(experiment_spec(ear_xnli, "smoke", None), {"m": "3"})
    assert all(p.get("m") == 3 for p in ear.points if p["method"] == "ear")
    with pytest.raises(ConfigError, match="belongs to adv, rs_rp"):
        apply_overrides(experiment_spec(ear_xnli, "smoke", None), {"epsilon": "0.1"})


EAR_GRID = (
    [(1.0, 1.0, layer) for layer in (3, 6, 9, 12)]
    + [(1.0, beta, 6) for beta in (0.1, 0.2, 0.3, 0.5, 0.7, 0.9)]
    + [(alpha, 0.1, 6) for alpha in (0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8)]
    + [(0.1, 1.0, 6)]
)


@pytest.mark.parametrize("script", [ear_xnli, ear_pawsx], ids=["ear_xnli", "ear_pawsx"])
def test_paper_presets_hold_the_whole_ear_grid(script):
    points = experiment_spec(script, "paper", None).points
    ear = {(p["alpha"], p["beta"], p["layer"]) for p in points if p["method"] == "ear"}
    assert ear == set(EAR_GRID) and len(ear) == 17
    if script is ear_pawsx:
        assert {p["m"] for p in points if p["method"] == "ear"} == {10}


@pytest.mark.parametrize("alpha, beta, layer", EAR_GRID)
def test_every_ear_grid_point_is_reachable_from_the_smoke_preset_with_set(alpha, beta, layer):
    spec = apply_overrides(
        experiment_spec(ear_xnli, "smoke", None),
        {"alpha": str(alpha), "beta": str(beta), "layer": str(layer)},
    )
    assert [p for p in spec.points if p["method"] == "ear"] == [
        {"method": "ear", "alpha": alpha, "beta": beta, "layer": layer}
    ]


def test_every_method_has_its_hyperparameters_as_fields():
    fields = set(TrialConfig().to_dict())
    assert all(set(names) <= fields for names in METHOD_HYPERPARAMETERS.values())
