"""Bad settings are refused before any work, with the field, the value and what is allowed;
every sweep script's experiment builds valid trials."""

import importlib
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import scaled_timeout

import sweeps
from sweeps.cli import SETTABLE, apply_overrides, build_parser
from sweeps.spec.experiment import experiment_spec
from sweeps.spec.spaces import hyperparameter_names
from sweeps.spec.trial_contract import trial_config
from xlt_core.config import HYPERPARAMETER_NAMES, STUDY_SETTINGS, TrialConfig, parse_assignments
from xlt_core.errors import ConfigError
from xlt_core.preflight import check_resources


@pytest.mark.parametrize(
    "settings, field, allowed",
    [
        ({"method": "ear", "beta": -1}, "beta", ">= 0"),
        ({"method": "ear", "alpha": "-0.5"}, "alpha", ">= 0"),
        ({"method": "ear", "layer": 13, "tiny_layers": 12}, "layer", "between 1 and 12"),
        ({"method": "ear", "layer": 0}, "layer", ">= 1"),
        ({"method": "ear", "m": 0}, "m", ">= 1"),
        ({"method": "ear", "layer": "six"}, "layer", "an integer"),
        ({"method": "ear", "layer": 2.5}, "layer", "an integer"),
        ({"method": "dropout"}, "method", "one of finetune, ear"),
        ({"task": "squad"}, "task", "one of xnli"),
        ({"data_source": "ftp"}, "data_source", "one of synthetic, local, hub"),
        ({"data_source": "local"}, "data_dir", "required"),
        ({"learning_rate": 0}, "learning_rate", "> 0"),
        ({"learning_rate": "nan"}, "learning_rate", "finite"),
        ({"batch_size": 0}, "batch_size", ">= 1"),
        ({"warmup_ratio": 1.5}, "warmup_ratio", "[0, 1)"),
        ({"tiny_hidden_size": 64, "tiny_heads": 5}, "tiny_heads", "divisor"),
        ({"target_langs": ""}, "target_langs", "at least one"),
        ({"task": "ner", "source_lang": "de"}, "source_lang", "'en' for task=ner"),
        ({"bogus": 1}, "bogus", "unknown setting"),
    ],
)
def test_bad_values_are_refused_with_field_value_and_allowed(settings, field, allowed):
    with pytest.raises(ConfigError) as error:
        TrialConfig.from_dict(settings)
    message = str(error.value)
    assert error.value.field == field
    assert field in message and allowed in message
    assert repr(error.value.value) in message or str(error.value.value) in message


def test_unknown_language_is_refused_naming_the_available_ones():
    config = TrialConfig.from_dict({"target_langs": "es,xx"})
    with pytest.raises(ConfigError) as error:
        check_resources(config)
    assert error.value.field == "target_langs"
    assert "xx" in str(error.value) and "es" in error.value.allowed


def test_layer_deeper_than_a_local_model_is_refused(tmp_path):
    from tiny_models import tiny_bert_config

    tiny_bert_config(50, hidden_size=16, layers=3).save_pretrained(tmp_path)
    config = TrialConfig.from_dict({"method": "ear", "model": str(tmp_path), "layer": 4})
    with pytest.raises(ConfigError, match="between 1 and 3"):
        check_resources(config)


def test_missing_local_data_is_refused(tmp_path):
    config = TrialConfig.from_dict({"data_source": "local", "data_dir": str(tmp_path)})
    with pytest.raises(ConfigError) as error:
        check_resources(config)
    assert str(tmp_path) in str(error.value)


def test_strings_from_the_command_line_are_typed():
    config = TrialConfig.from_dict(
        {
            "method": "ear",
            "alpha": "0.1",
            "layer": "6",
            "target_langs": "es,de",
            "max_train_examples": "none",
        }
    )
    ear = config.objective
    assert (ear.alpha, ear.layer, config.target_langs, config.max_train_examples) == (
        0.1,
        6,
        ("es", "de"),
        None,
    )


def test_config_key_ignores_only_the_seed():
    a = TrialConfig.from_dict({"method": "ear", "seed": 1})
    assert a.config_key() == TrialConfig.from_dict({"method": "ear", "seed": 2}).config_key()
    assert (
        a.config_key()
        != TrialConfig.from_dict({"method": "ear", "seed": 1, "beta": 0.5}).config_key()
    )
    assert a.config_label() == "ear alpha=1 beta=0.1 layer=6 m=1"
    assert TrialConfig().config_label() == "finetune"


def test_parse_assignments():
    assert parse_assignments(["beta=0.1", " layer = 6 "]) == {"beta": "0.1", "layer": "6"}
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        parse_assignments(["beta"])


# Sweep scripts: each `sweeps/<name>.py` is its experiment's data; experiment_spec builds its
# SweepSpec.

SWEEP_SCRIPTS = (
    "ear_xnli",
    "ear_pawsx",
    "robust_xnli",
    "robust_pawsx",
    "adjust_xnli",
    "adjust_ner",
    "adjust_qa",
    "adjust_xsr",
    "ear_source_language",
    "ear_ablation",
    "ear_targets",
    "ear_dictionary_scale",
    "rs_syntax",
    "rs_da_m_curve",
)


def test_the_sweep_scripts_are_the_files_that_run_an_experiment():
    scripts = {
        path.stem
        for path in Path(sweeps.__file__).parent.glob("*.py")
        if 'if __name__ == "__main__":\n    sys.exit(main(sys.modules[__name__]))'
        in path.read_text()
    }
    assert scripts == set(SWEEP_SCRIPTS)


@pytest.mark.parametrize("preset", ["smoke", "paper"])
@pytest.mark.parametrize("with_data_dir", [False, True], ids=["own-data", "data-dir"])
@pytest.mark.parametrize("script", SWEEP_SCRIPTS)
def test_every_sweep_script_builds_valid_trials(script, preset, with_data_dir, tmp_path):
    module = importlib.import_module(f"sweeps.{script}")
    data_dir = str(tmp_path) if with_data_dir else None
    spec = experiment_spec(module, preset, data_dir)
    assert (spec.experiment, spec.preset) == (script, preset)
    assert spec.seeds and len(set(spec.seeds)) == len(spec.seeds)
    assert spec.points[0] == {"method": "finetune"}  # the baseline, first
    assert len({tuple(sorted(p.items())) for p in spec.points}) == len(spec.points)
    for point in spec.points:
        # A point names only its method, its adaptation, their hyperparameters and the
        # settings a study varies (`STUDY_SETTINGS`).
        assert set(point) - {"method", "adaptation", *STUDY_SETTINGS} <= set(
            hyperparameter_names(point)
        )
        for seed in spec.seeds:
            config = trial_config(spec.base, point, seed)
            assert config.task == spec.base["task"]


def test_set_refuses_an_unknown_setting_listing_what_it_accepts():
    from sweeps import ear_xnli

    with pytest.raises(ConfigError) as error:
        apply_overrides(experiment_spec(ear_xnli, "smoke", None), {"foo": "1"})
    message = str(error.value)
    assert "foo" in message and "unknown setting" in message
    accepted = message.split("--set accepts ")[1].split(", ")
    assert set(accepted) == set(SETTABLE)
    assert {"seeds", "cpus_per_trial", "log_models", "search_trials", "top_k"} <= set(accepted)
    assert {"epochs", "beta", "adjust_epochs", "target_langs"} <= set(accepted)
    assert not {"seed", "method", "adaptation"} & set(accepted)


def test_set_help_lists_every_hyperparameter():
    text = " ".join(build_parser("ear_xnli").format_help().split())
    assert ", ".join(HYPERPARAMETER_NAMES) in text


@pytest.mark.parametrize("script", SWEEP_SCRIPTS)
def test_every_sweep_script_runs_from_the_repository_root(script):
    completed = subprocess.run(
        [sys.executable, f"sweeps/{script}.py", "--help"],
        capture_output=True,
        text=True,
        timeout=scaled_timeout(120),
        cwd=Path(__file__).resolve().parents[2],
    )
    assert completed.returncode == 0, completed.stderr
    assert (
        f"python sweeps/{script}.py" in completed.stdout and "--set KEY=VALUE" in completed.stdout
    )
