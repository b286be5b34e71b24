"""A trial run logs as params only the settings that apply to it
(`sweeps.running.trainable.flat_params`): its own method's and adaptation's hyperparameters,
not another's, and no unset setting."""

import pytest

from sweeps.running.trainable import flat_params
from xlt_core import registry
from xlt_core.config import (
    ADAPTATION_HYPERPARAMETERS,
    HYPERPARAMETER_NAMES,
    METHOD_HYPERPARAMETERS,
    METHODS,
    PERTURBING_METHODS,
    TrialConfig,
)
from xlt_schema import NO_ADAPTATION

ROBUST_METHODS = ("adv", "rs_rp", "rs_da")
EAR_ONLY = set(METHOD_HYPERPARAMETERS["ear"]) - {"m"}  # alpha, beta, layer (rs_da has m too)


def _params(**settings) -> dict:
    adjusted = settings.get("adaptation", "none") != "none"
    return flat_params(
        TrialConfig.from_dict({**settings, **({"parallel_data": "synthetic"} if adjusted else {})})
    )


@pytest.mark.parametrize("method", ROBUST_METHODS)
def test_a_robust_trial_logs_no_ear_setting_and_an_ear_trial_no_robust_one(method):
    robust, ear = _params(method=method), _params(method="ear")
    assert not EAR_ONLY & set(robust)
    assert set(METHOD_HYPERPARAMETERS[method]) <= set(robust)
    assert not (set(METHOD_HYPERPARAMETERS[method]) - {"m"}) & set(ear)
    assert "perturbation_site" not in ear and "epsilon" not in ear


@pytest.mark.parametrize("adaptation", sorted(ADAPTATION_HYPERPARAMETERS))
@pytest.mark.parametrize("method", METHODS)
def test_each_trial_logs_its_own_hyperparameters_and_nothing_unset(method, adaptation):
    params = _params(method=method, adaptation=adaptation)
    own = set(METHOD_HYPERPARAMETERS[method]) | set(ADAPTATION_HYPERPARAMETERS[adaptation])
    assert own <= set(params)
    assert not (set(HYPERPARAMETER_NAMES) - own) & set(params)
    # None only where it is the setting's value: adaptation `none` (NO_ADAPTATION)
    unset = {name for name, value in params.items() if str(value).lower() in ("none", "")}
    assert unset <= ({"adaptation"} if adaptation == NO_ADAPTATION else set())
    # the identity and the seed always; settings of other configurations never
    assert {"method", "adaptation", "seed", "task", "model", "target_langs"} <= set(params)
    assert ("synonyms" not in params) and (
        ("synonym_lookup" in params) == registry.objective(method).uses_synonyms
    )
    assert ("perturbation_site" in params) == (method in PERTURBING_METHODS)
    assert ("adjust_batch_size" in params) == (adaptation != "none")
    assert ("parallel_max_sentences" in params) == (adaptation != "none")  # with parallel_data
    assert ("continual_pairs" in params) == (adaptation == "adjusted_continual")


def test_settings_of_the_tiny_model_only_with_the_tiny_model(tmp_path):
    assert "tiny_layers" in _params(method="finetune")
    (tmp_path / "config.json").write_text("{}")
    assert "tiny_layers" not in _params(method="finetune", model=str(tmp_path))


def test_the_parallel_pool_settings_wherever_parallel_data_is_read():
    # XSR with the tiny model reads parallel text (its tokenizer) without an adaptation
    xsr = _params(task="xsr", method="finetune", parallel_data="synthetic")
    assert {"parallel_data", "parallel_max_sentences"} <= set(xsr)
    assert "adjust_batch_size" not in xsr
