"""A sweep as a file (sweeps/planning/sweep_file.py): `--save-config` then `--config`, and
`--from-run`, plan exactly the sweep they were written from; bad files are refused naming
the file and the key."""

import dataclasses

import pytest
from mlflow import MlflowClient
from tracking_stores import tracking_store

from sweeps import adjust_xnli, ear_xnli
from sweeps.cli import EXIT_BAD_INPUT, EXIT_DONE, apply_overrides, main
from sweeps.planning.sweep_file import load_sweep, sweep_text
from sweeps.spec.experiment import experiment_spec
from xlt_core.errors import ConfigError
from xlt_schema import SWEEP_FILE_ARTIFACT

SETTINGS = ["--set", "alpha=0.5", "--set", "seeds=0,1", "--set", "epochs=0.5"]


def dry_run(capsys, *argv) -> str:
    capsys.readouterr()
    assert main(ear_xnli, [*argv, "--dry-run"]) == EXIT_DONE
    return capsys.readouterr().out


def test_a_saved_sweep_plans_the_same_trials(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(ear_xnli, [*SETTINGS, "--save-config", "sweep.yaml"]) == EXIT_DONE
    assert "--config sweep.yaml" in capsys.readouterr().out
    assert dry_run(capsys, "--config", "sweep.yaml") == dry_run(capsys, *SETTINGS)
    assert "alpha=0.5" in dry_run(capsys, "--config", "sweep.yaml")


def test_an_edited_file_is_the_sweep_that_runs(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    main(ear_xnli, ["--save-config", "sweep.yaml"])
    text = (tmp_path / "sweep.yaml").read_text().replace("seeds:\n- 0\n- 1\n", "seeds:\n- 7\n")
    (tmp_path / "sweep.yaml").write_text(text)
    assert "Seeds (1): 7" in dry_run(capsys, "--config", "sweep.yaml")


def test_the_file_round_trips_every_part_of_the_sweep():
    spec = experiment_spec(ear_xnli, "paper", None)
    spec = dataclasses.replace(spec, seeds=[3, 4], top_k=2, fixed_axes={"beta": 1.0})
    loaded = load_sweep(sweep_text(spec), "f.yaml", ear_xnli)
    for name in ("experiment", "preset", "points", "seeds", "top_k", "fixed_axes", "strategy"):
        assert getattr(loaded, name) == getattr(spec, name), name
    assert loaded.configs() == spec.configs()
    assert loaded.departures() == spec.departures()  # the paper card is rebuilt


def test_from_run_plans_the_sweep_the_parent_recorded(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    uri = tracking_store(tmp_path)
    main(ear_xnli, [*SETTINGS, "--save-config", "sweep.yaml"])
    client = MlflowClient(uri)
    experiment = client.create_experiment("ear_xnli", artifact_location=str(tmp_path / "art"))
    run = client.create_run(experiment)
    client.log_text(run.info.run_id, (tmp_path / "sweep.yaml").read_text(), SWEEP_FILE_ARTIFACT)
    replayed = dry_run(capsys, "--from-run", run.info.run_id, "--tracking-uri", uri)
    assert replayed == dry_run(capsys, *SETTINGS)
    bare = client.create_run(experiment).info.run_id
    assert main(ear_xnli, ["--from-run", bare, "--tracking-uri", uri, "--dry-run"]) == 2
    assert SWEEP_FILE_ARTIFACT in capsys.readouterr().err


@pytest.mark.parametrize(
    "edit, named",
    [
        (lambda text: text.replace("script: ear_xnli", "script: adjust_xnli"), "script"),
        (lambda text: text + "learning_rat: 0.1\n", "learning_rat"),
        (lambda text: text.replace("format: 1", "format: 9"), "format"),
        (lambda text: "[1, 2]", "a mapping"),
        (lambda text: text.replace("seeds:", "sedes:"), "sedes"),
    ],
)
def test_a_bad_file_is_refused_naming_the_file_and_the_key(edit, named):
    text = edit(sweep_text(experiment_spec(ear_xnli, "smoke", None)))
    with pytest.raises(ConfigError) as refused:
        load_sweep(text, "mine.yaml", ear_xnli)
    assert "mine.yaml" in str(refused.value) and named in str(refused.value)


def test_a_file_replaces_the_preset_and_the_data_dir(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    main(ear_xnli, ["--save-config", "sweep.yaml"])
    capsys.readouterr()
    assert main(ear_xnli, ["--config", "sweep.yaml", "--preset", "paper"]) == EXIT_BAD_INPUT
    assert "--preset" in capsys.readouterr().err
    assert main(adjust_xnli, ["--config", "sweep.yaml", "--dry-run"]) == EXIT_BAD_INPUT
    assert "python sweeps/ear_xnli.py" in capsys.readouterr().err


# Issue 41 item 4: each of these files ran (or ended in a traceback) before the file went
# through the rules `--set` applies; (the file's text, the new text, the key named).
BAD_VALUES = {
    "negative top_k": ("top_k: 1\n", "top_k: -5\n", "top_k"),
    "seeds as text": ("seeds:\n- 0\n- 1\n", 'seeds: "12"\n', "seeds"),
    "unknown strategy": ("strategy: grid", "strategy: random", "strategy"),
    "no points": (None, "points: []\n", "points"),
    "nested seeds": ("seeds:\n- 0\n- 1\n", "seeds:\n- [0, 1]\n", "seeds"),
    "nested points": ("- method: finetune\n", "- - method: finetune\n", "points[0]"),
    "nested target languages": ("  - es\n", "  - [es]\n", "base.target_langs"),
    "a point's bad value": ("  alpha: 1.0\n", "  alpha: -1.0\n", "points[1].alpha"),
    "cpus not a number": ("cpus_per_trial: null", "cpus_per_trial: .nan", "cpus_per_trial"),
    "a hyperparameter in base": ("  model: tiny\n", "  model: tiny\n  alpha: 2\n", "base.alpha"),
    "an axis of no point": ("fixed_axes: {}", "fixed_axes: {epsilon: 0.1}", "fixed_axes.epsilon"),
    "rounds beyond the seeds": ("seed_rounds: null", "seed_rounds: [3, 1, 1]", "seed_rounds"),
}


def _bad_file(case: str) -> str:
    old, new, _ = BAD_VALUES[case]
    text = sweep_text(experiment_spec(ear_xnli, "smoke", None))
    if old is None:  # the whole points list
        old = text[text.index("points:") : text.index("seeds:")]
    assert old in text, case
    return text.replace(old, new, 1)


@pytest.mark.parametrize("case", sorted(BAD_VALUES))
def test_a_bad_value_in_a_file_is_refused_naming_the_key(case):
    with pytest.raises(ConfigError) as refused:
        load_sweep(_bad_file(case), "mine.yaml", ear_xnli)
    assert refused.value.field == f"mine.yaml: {BAD_VALUES[case][2]}"


@pytest.mark.parametrize("case", ["negative top_k", "seeds as text", "no points"])
def test_a_bad_file_exits_2_in_one_line(case, tmp_path, capsys):
    (tmp_path / "bad.yaml").write_text(_bad_file(case))
    capsys.readouterr()
    assert main(ear_xnli, ["--config", str(tmp_path / "bad.yaml"), "--dry-run"]) == EXIT_BAD_INPUT
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"error: invalid setting {tmp_path / 'bad.yaml'}: ")
    assert BAD_VALUES[case][2] in captured.err and captured.err.count("\n") == 1


@pytest.mark.parametrize(
    "setting, file_value, text",
    [
        ("top_k", "-5", "-5"),
        ("search_trials", "0", "0"),
        ("log_models", "3", "3"),
        ("cpus_per_trial", "-1", "-1"),
    ],
)
def test_a_file_and_set_refuse_a_value_with_the_same_rule(setting, file_value, text):
    spec = experiment_spec(ear_xnli, "smoke", None)
    with pytest.raises(ConfigError) as by_set:
        apply_overrides(spec, {setting: text})
    line = next(line for line in sweep_text(spec).splitlines() if line.startswith(f"{setting}:"))
    with pytest.raises(ConfigError) as by_file:
        load_sweep(sweep_text(spec).replace(line, f"{setting}: {file_value}"), "f.yaml", ear_xnli)
    assert by_file.value.allowed == by_set.value.allowed
    assert by_file.value.field == f"f.yaml: {by_set.value.field}"


def test_the_values_a_file_writes_are_the_values_it_accepts():
    spec = experiment_spec(ear_xnli, "paper", None)
    spec = apply_overrides(spec, {"seeds": "auto", "top_k": "2", "cpus_per_trial": "1.5"})
    loaded = load_sweep(sweep_text(spec), "f.yaml", ear_xnli)
    assert (loaded.seeds, loaded.seed_rounds) == (spec.seeds, spec.seed_rounds)
    assert (loaded.top_k, loaded.cpus_per_trial) == (2, 1.5)


# Issue 53: files that passed the checks and failed later (or in a traceback): (the file's
# text, the new text, what the one line must hold).
REFUSED_FILES = {
    # item 1: no baseline; it trained, then every report and --resume ended in a traceback
    "no baseline point": (
        "- method: finetune\n",
        "",
        ["points=", "- method: finetune", "the report compares every configuration with"],
    ),
    # item 7: a KeyError traceback
    "an unknown method": (
        "- method: ear\n  alpha: 1.0",
        "- method: nosuch\n  alpha: 1.0",
        ["points[1].method='nosuch'", "one of finetune, ear", "XLT_PLUGINS"],
    ),
    # item 9: read as 1 epoch, while --set epochs=true is refused
    "a boolean epochs": ("  epochs: 3.0\n", "  epochs: true\n", ["base.epochs=True: a number"]),
    # item 9: YAML keeps the last of a repeated key
    "a repeated key": (
        "  epochs: 3.0\n",
        "  epochs: 3.0\n  epochs: 1.0\n",
        [":10: epochs='repeated'", "each key once in a mapping (first on line 9)"],
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED_FILES))
def test_a_file_the_checks_passed_before_is_refused_in_one_line(case, tmp_path, capsys):
    old, new, words = REFUSED_FILES[case]
    text = sweep_text(experiment_spec(ear_xnli, "smoke", None))
    assert old in text, case
    path = tmp_path / "bad.yaml"
    path.write_text(text.replace(old, new, 1))
    capsys.readouterr()
    assert main(ear_xnli, ["--config", str(path), "--dry-run"]) == EXIT_BAD_INPUT
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1, captured.err
    assert captured.err.startswith(f"error: invalid setting {path}"), captured.err
    assert all(word in captured.err for word in words), captured.err


def test_a_boolean_for_a_number_is_refused_as_set_refuses_it():
    spec = experiment_spec(ear_xnli, "smoke", None)
    with pytest.raises(ConfigError) as by_set:
        apply_overrides(spec, {"epochs": "true"})
    text = sweep_text(experiment_spec(ear_xnli, "smoke", None))
    with pytest.raises(ConfigError) as by_file:
        load_sweep(text.replace("  epochs: 3.0\n", "  epochs: true\n"), "f.yaml", ear_xnli)
    assert (by_file.value.field, by_file.value.allowed) == ("f.yaml: base.epochs", "a number")
    assert by_set.value.allowed == "a number"
