"""Strategy `race`'s settings (`race_alpha`, `race_first_seeds`, `race_test`; issue 52): `--set`
takes them, each reaches the race's design and its dry run, a bad value is refused in one line
naming it, a sweep file saves them (and one saved without them loads with the defaults), and
`--resume` with another `race_alpha` is refused as a mismatch."""

import dataclasses

import pytest
from test_resume_mismatch import _spec as built_spec

from analysis.seed_race import DEFAULT_ALPHA, DEFAULT_ROUND_SEEDS, PAIRED, POOLED, RaceDesign
from sweeps import ear_xnli
from sweeps.cli import EXIT_BAD_INPUT, EXIT_DONE, apply_overrides, main
from sweeps.planning.sweep_file import load_sweep, sweep_text
from sweeps.records import tracking
from sweeps.running import runner
from sweeps.spec.experiment import RACE_TESTS, experiment_spec
from sweeps.strategies import race

RACE = ["--preset", "smoke", "--strategy", "race", "--set", "seeds=0,1,2,3,4"]
SETTINGS = {"race_alpha": "0.1", "race_first_seeds": "3", "race_test": "paired"}


def _spec(settings: dict):
    spec = dataclasses.replace(experiment_spec(ear_xnli, "smoke", None), strategy="race")
    return apply_overrides(spec, {"seeds": "0,1,2,3,4", **settings})


def _dry_run(capsys, *argv) -> str:
    capsys.readouterr()
    assert main(ear_xnli, [*argv, "--dry-run"]) == EXIT_DONE
    return capsys.readouterr().out


def test_the_defaults_are_the_race_before_its_settings():
    design = race.race_design(_spec({}))
    assert design == RaceDesign(candidates=2)  # the module's defaults: 5 seeds, 2 then 1s
    assert (design.round_seeds, design.alpha, design.test) == (
        DEFAULT_ROUND_SEEDS, DEFAULT_ALPHA, POOLED
    )  # fmt: skip
    assert RACE_TESTS == (POOLED, PAIRED)  # the spec's names are the analysis's


def test_each_setting_reaches_the_design_and_the_dry_run(capsys):
    design = race.race_design(_spec(SETTINGS))
    assert (design.alpha, design.round_seeds, design.test) == (0.1, (3, 1, 1), PAIRED)
    argv = [*RACE, *(arg for k, v in SETTINGS.items() for arg in ("--set", f"{k}={v}"))]
    out = _dry_run(capsys, *argv, "--set", "confirm_seeds=0")
    assert "Round 1 (race-round1): 3 configurations (at most) x 3 seeds = 9 trials" in out
    assert "Round 3 (race-round3): 3 configurations (at most) x 1 seed = 3 trials" in out
    assert "Round 4" not in out
    # The worst case is still every configuration x every seed; 11 expected: 2 candidates x
    # 3 seeds, 1 kept for the 4th, the baseline's 4 seeds.
    assert "Trials: 15 at most; the race's own 15 at most (no eliminations), about 11" in out
    assert "one-sided paired seed-blocked t-test at 0.05 (alpha 0.1 split over 2 rounds" in out


def test_race_settings_change_nothing_in_a_grid(capsys):
    argv = ["--preset", "smoke", "--set", "seeds=0,1"]
    changed = [*argv, "--set", "race_alpha=0.2", "--set", "race_test=paired"]
    assert _dry_run(capsys, *changed) == _dry_run(capsys, *argv)


@pytest.mark.parametrize(
    "setting, allowed",
    [
        ("race_alpha=1", "a number between 0 and 1, both excluded"),
        ("race_alpha=0", "a number between 0 and 1, both excluded"),
        ("race_alpha=nan", "a number between 0 and 1, both excluded"),
        ("race_first_seeds=1", "an integer >= 2"),
        ("race_first_seeds=2.5", "an integer >= 2"),
        ("race_first_seeds=6", "an integer >= 2, at most the sweep's 5 seeds"),
        ("race_test=welch", "pooled or paired"),
    ],
)
def test_a_bad_race_setting_is_refused_naming_it(capsys, setting, allowed):
    capsys.readouterr()
    assert main(ear_xnli, [*RACE, "--set", setting, "--dry-run"]) == EXIT_BAD_INPUT
    error = capsys.readouterr().err.strip()
    name, value = setting.split("=")
    assert len(error.splitlines()) == 1, error
    assert f"invalid setting {name}=" in error and value in error and allowed in error, error


def test_a_script_value_breaking_the_rules_is_refused_by_the_race_check():
    spec = dataclasses.replace(_spec({}), race_test="welch")
    with pytest.raises(ValueError, match="race_test='welch': pooled or paired"):
        race.STRATEGY.check(spec, None)


def test_a_sweep_file_keeps_the_race_settings_and_an_older_one_loads():
    spec = _spec(SETTINGS)
    loaded = load_sweep(sweep_text(spec), "f.yaml", ear_xnli)
    assert (loaded.race_alpha, loaded.race_first_seeds, loaded.race_test) == (0.1, 3, "paired")
    older = "".join(
        line for line in sweep_text(_spec({})).splitlines(True) if not line.startswith("race_")
    )
    assert "race_" not in older
    assert load_sweep(older, "f.yaml", ear_xnli) == load_sweep(sweep_text(_spec({})), "", ear_xnli)
    bad = sweep_text(spec).replace("race_alpha: 0.1", "race_alpha: 2")
    with pytest.raises(ValueError, match="f.yaml: race_alpha=2: a number between 0 and 1"):
        load_sweep(bad, "f.yaml", ear_xnli)


def test_the_sweep_key_keeps_the_defaults_and_tells_other_settings_apart():
    default = runner.sweep_key(_spec({}))
    assert runner.sweep_key(_spec({"race_alpha": "0.05", "race_test": "pooled"})) == default
    keys = {runner.sweep_key(_spec({name: value})) for name, value in SETTINGS.items()}
    assert len(keys | {default}) == 4


def test_a_resume_with_another_race_alpha_is_refused_naming_it(tmp_path, monkeypatch, capsys):
    from tracking_stores import tracking_store

    monkeypatch.chdir(tmp_path)
    uri = tracking_store(tmp_path)
    started = [*RACE, "--tracking-uri", uri]
    spec = built_spec(started)  # as `main` builds it before Ray starts
    client, experiment_id = tracking.open_experiment(uri, "ear_xnli")
    options = runner.SweepOptions(tracking_uri=uri)
    parent, _ = runner._start_parent(client, experiment_id, spec, options, runner.sweep_key(spec))
    capsys.readouterr()
    assert main(ear_xnli, [*started, "--set", "race_alpha=0.1", "--resume"]) == EXIT_BAD_INPUT
    error = capsys.readouterr().err
    assert len(error.strip().splitlines()) == 1, error
    assert f"parent run {parent} (started " in error
    assert "has other settings: race_alpha=0.05 there, 0.1 here." in error, error


def test_an_older_sweep_file_differs_only_in_what_it_changed_not_in_settings_it_lacks():
    from sweeps.records.resume_mismatch import setting_differences

    here = sweep_text(_spec({}))
    older = "".join(line for line in here.splitlines(True) if not line.startswith("race_"))
    older = older.replace("- 4\n", "- 5\n")  # the older sweep's last seed
    fields = ("seeds", *SETTINGS)
    assert (
        setting_differences(older, here, fields)
        == "seeds=[0, 1, 2, 3, 5] there, [0, 1, 2, 3, 4] here"
    )
    assert setting_differences(older, sweep_text(_spec({"race_test": "paired"})), fields) == (
        "seeds=[0, 1, 2, 3, 5] there, [0, 1, 2, 3, 4] here; race_test=pooled there, paired here"
    )
