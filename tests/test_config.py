"""Bad settings are refused before any work, with the field, the value and what is allowed."""

import pytest

from xlt_core.config import TrialConfig, parse_assignments
from xlt_core.errors import ConfigError
from xlt_core.trial import check_resources


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
        ({"source_lang": "de"}, "source_lang", "only 'en'"),
        ({"method": "ear", "data_source": "hub"}, "synonyms", "neighbour table"),
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
    from transformers import BertConfig

    BertConfig(
        num_hidden_layers=3, hidden_size=16, num_attention_heads=2, intermediate_size=32
    ).save_pretrained(tmp_path)
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
    assert (config.alpha, config.layer, config.target_langs, config.max_train_examples) == (
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
