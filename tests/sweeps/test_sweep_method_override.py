"""`--set method=NAME` on a sweep script (sweeps/planning/method_override.py): the compared
points replaced by NAME's grid from its declaration's search ranges, the baseline kept,
`--set` fixing an axis; refused with a paper preset, on a sweep of adaptations and for an
unknown method. Spec and dry-run level: no Ray, no training."""

import dataclasses

import pytest
import yaml

from sweeps import (
    adjust_xnli,
    ear_dictionary_scale,
    ear_source_language,
    ear_xnli,
    robust_xnli,
)
from sweeps.cli import EXIT_BAD_INPUT, EXIT_DONE, apply_overrides, main
from sweeps.planning.method_override import range_values
from sweeps.spec.experiment import experiment_spec
from sweeps.spec.spaces import BASELINE
from xlt_core.errors import ConfigError

# ear's declared search ranges on the smoke model (6 layers: 9 and 12 left out), as the grid
# takes them: the centre, then one range at a time.
EAR_CENTRE = {"method": "ear", "alpha": 1.0, "beta": 0.5, "layer": 6, "m": 1}
EAR_GRID = [
    EAR_CENTRE,
    {**EAR_CENTRE, "alpha": 0.1},
    {**EAR_CENTRE, "alpha": 2.0},
    {**EAR_CENTRE, "beta": 0.05},
    {**EAR_CENTRE, "beta": 1.0},
    {**EAR_CENTRE, "layer": 3},
]


def _spec(script=ear_xnli, strategy="grid", **settings):
    spec = dataclasses.replace(experiment_spec(script, "smoke", None), strategy=strategy)
    return apply_overrides(spec, {key: str(value) for key, value in settings.items()})


def _refusal(capsys, argv, script=ear_xnli) -> str:
    assert main(script, [*argv, "--dry-run"]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert err.startswith("error: invalid setting ") and err.count("\n") == 1
    return err


def test_a_float_range_gives_its_low_middle_and_high_on_its_step():
    assert range_values(("float", 0.1, 2.0, 0.1)) == (0.1, 1.0, 2.0)
    assert range_values(("float", 0.05, 1.0, 0.05)) == (0.05, 0.5, 1.0)
    assert range_values(("float", 1e-5, 3e-5, 1e-5)) == (1e-5, 2e-5, 3e-5)
    assert range_values(("choice", (3, 6, 9, 12))) == (3, 6, 9, 12)


def test_the_compared_points_become_the_methods_grid_and_the_baseline_stays():
    spec = _spec(method="ear")
    assert spec.points == [BASELINE, *EAR_GRID]
    assert "alpha 0.1, 2.0; beta 0.05, 1.0; layer 3" in spec.method_line


def test_a_method_without_search_ranges_runs_its_defaults_and_no_old_hyperparameter():
    spec = _spec(robust_xnli, method="ear_nt")
    # robust_xnli's rs_da point had m=2 and rs_da_variant: neither reaches ear_nt.
    assert spec.points == [BASELINE, {"method": "ear_nt"}]
    assert spec.configs()[1].config_label() == "ear_nt beta=0.1 layer=6 m=1 noise_sigma=0.01"


def test_set_fixes_an_axis_of_the_new_method_in_any_order():
    first = _spec(method="ear", beta="0.2", tiny_layers="2", layer="2")
    later = _spec(layer="2", tiny_layers="2", beta="0.2", method="ear")
    assert first.points == later.points
    assert first.fixed_axes == {"beta": 0.2, "layer": 2}
    assert {(p.get("beta"), p.get("layer")) for p in first.points[1:]} == {(0.2, 2)}
    assert [p["alpha"] for p in first.points[1:]] == [1.0, 0.1, 2.0]


def test_a_hyperparameter_the_new_method_lacks_is_refused(capsys):
    err = _refusal(capsys, ["--set", "method=ear_nt", "--set", "alpha=1"])
    assert "alpha=1.0: a hyperparameter of method ear_nt (beta, layer, m, noise_sigma)" in err


def test_a_range_no_trial_takes_is_refused_naming_the_setting(capsys):
    err = _refusal(capsys, ["--set", "method=ear", "--set", "tiny_layers=2"])
    assert "layer='3,6,9,12': a search range of ear" in err and "--set layer=VALUE" in err


def test_the_design_of_the_points_stays_where_it_applies():
    spec = _spec(ear_source_language, method="adv")
    assert [point.get("source_lang") for point in spec.points] == [None, "en", "de", "ru"]
    assert {point["method"] for point in spec.points[1:]} == {"adv"}
    # dictionary_scale scales a synonym table: ear_nt keeps it, adv has none.
    assert _spec(ear_dictionary_scale, method="adv").points == [BASELINE, {"method": "adv"}]
    kept = _spec(ear_dictionary_scale, method="ear_nt").points
    assert [point.get("dictionary_scale") for point in kept] == [None, 1.0, 0.5]


def test_strategy_search_starts_at_the_centre_and_searches_the_ranges(capsys):
    assert _spec(strategy="search", method="ear").points == [BASELINE, EAR_CENTRE]
    assert main(ear_xnli, ["--strategy", "search", "--set", "method=ear", "--dry-run"]) == 0
    assert "(ear: alpha 0.1..2.0 step 0.1, beta 0.05..1.0 step 0.05" in capsys.readouterr().out
    err = _refusal(capsys, ["--strategy", "search", "--set", "method=ear_nt"])
    assert "a method with search ranges" in err and "ear_nt has none" in err


def test_the_dry_run_and_the_sweep_file_show_the_replaced_points(capsys, tmp_path):
    argv = ["--set", "method=ear_nt", "--set", "noise_sigma=0.05"]
    assert main(ear_xnli, [*argv, "--dry-run"]) == EXIT_DONE
    out = capsys.readouterr().out
    assert "Configurations x seeds: 2 configurations x 2 seeds = 4 trials" in out
    assert "Method: ear_nt in place of ear (--set method=ear_nt), the baseline kept" in out
    assert "ear_nt beta=0.1 layer=6 m=1 noise_sigma=0.05" in out
    path = tmp_path / "sweep.yaml"
    assert main(ear_xnli, [*argv, "--save-config", str(path)]) == EXIT_DONE
    document = yaml.safe_load(path.read_text())
    assert document["points"] == [BASELINE, {"method": "ear_nt", "noise_sigma": 0.05}]
    assert document["fixed_axes"] == {"noise_sigma": 0.05}
    capsys.readouterr()
    assert main(ear_xnli, ["--config", str(path), "--dry-run"]) == EXIT_DONE
    assert "ear_nt beta=0.1 layer=6 m=1 noise_sigma=0.05" in capsys.readouterr().out


@pytest.mark.parametrize("preset", ["paper", "paper-xlmr"])
def test_a_paper_preset_is_refused_naming_it(capsys, preset):
    err = _refusal(capsys, ["--preset", preset, "--set", "method=ear_nt"])
    assert f"method='ear_nt': not with preset {preset}: a paper preset runs its card's" in err


@pytest.mark.parametrize("method", ["nope", "finetune"])
def test_an_unknown_method_or_the_baseline_is_refused_naming_the_known(capsys, method):
    err = _refusal(capsys, ["--set", f"method={method}"])
    assert f"method='{method}': an objective to compare with the baseline (finetune): " in err
    assert "one of ear, adv, rs_rp, rs_da, ear_nt, ear_srpt, rs_syntax" in err


def test_a_sweep_of_adaptations_and_set_adaptation_are_refused(capsys):
    err = _refusal(capsys, ["--set", "method=ear"], adjust_xnli)
    assert "adjust_xnli compares adaptations (adjusted, adjusted_continual)" in err
    baseline_only = dataclasses.replace(_spec(), points=[BASELINE])  # as an edited file may
    with pytest.raises(ConfigError, match="ear_xnli compares nothing with finetune"):
        apply_overrides(baseline_only, {"method": "ear"})
    err = _refusal(capsys, ["--set", "adaptation=adjusted"])
    assert "fixed by the sweep script" in err and "--set method=NAME replaces" in err


def test_a_fixed_axis_of_the_old_method_is_refused_not_kept():
    spec = _spec(alpha="0.5")  # a sweep file's fixed_axes, as --config reads them
    with pytest.raises(ConfigError, match="alpha=0.5: a hyperparameter of method ear_nt"):
        apply_overrides(spec, {"method": "ear_nt"})
