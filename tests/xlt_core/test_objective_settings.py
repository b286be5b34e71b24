"""An objective's own settings (xlt_core/objective_settings.py): declared as a dataclass beside
its declaration, they give its hyperparameters and search ranges, `TrialConfig` reads and
checks them, a second declaration that disagrees is refused, and a late one works, while the
built-in objectives' configurations keep the keys they had."""

import dataclasses
import re
import sys

import pytest

from sweeps import ear_xnli
from sweeps.spec.experiment import experiment_spec
from xlt_core import config, registry
from xlt_core.config import TrialConfig
from xlt_core.errors import ConfigError
from xlt_core.objective_settings import NoSettings, setting, settings_of
from xlt_core.objectives.declarations import Copies, EarSettings
from xlt_core.registry import DeclarationError, ObjectiveDeclaration

# `TrialConfig(...).config_key()` before the objectives' settings left TrialConfig's fields.
KEYS_BEFORE = {
    (): "7be66fa36efa",
    (("method", "ear"),): "5dab4e2b602a",
    (("adv_steps", 3), ("epsilon", 0.05), ("method", "adv")): "37444abea0f8",
}
PLAIN = ObjectiveDeclaration(
    name="plain", implementation="xlt_core.objectives.finetune:FineTune", step_cost=1.0
)


@dataclasses.dataclass(frozen=True)
class WidthSettings(Copies):
    """A late objective's: a built-in setting (shared) and one of its own."""

    width: int = setting(4, at_least=1, at_most=16, search=("choice", (2, 4, 8)))
    flavour: str = setting("plain", choices=("plain", "salted"))


@pytest.fixture
def scratch_registry(monkeypatch):
    """The registry with its built-in declarations, restored after the test."""
    registry.objective_names()
    monkeypatch.setattr(registry, "_objectives", dict(registry._objectives))
    monkeypatch.setattr(registry, "_declared_settings", dict(registry._declared_settings))


@pytest.fixture
def widths(scratch_registry):
    """An objective `widths` registered after every import."""
    declaration = dataclasses.replace(PLAIN, name="widths", settings=WidthSettings, searched=True)
    return registry.register_objective(declaration)


def test_an_objectives_hyperparameters_and_search_ranges_come_from_its_settings():
    ear = registry.objective("ear")
    assert ear.settings is EarSettings
    assert ear.hyperparameters == ("alpha", "beta", "layer", "m")  # not dictionary_scale
    assert ear.search_ranges == {
        "alpha": ("float", 0.1, 2.0, 0.1),
        "beta": ("float", 0.05, 1.0, 0.05),
        "layer": ("choice", (3, 6, 9, 12)),
        "m": ("choice", (1,)),
    }
    # The same settings, not searched: no ranges.
    assert registry.objective("ear_srpt").hyperparameters == ear.hyperparameters
    assert registry.objective("ear_srpt").search_ranges == {}
    names = [each.name for each in settings_of(EarSettings)]
    assert names == ["alpha", "beta", "layer", "m", "dictionary_scale"]


def test_a_shared_setting_is_declared_once():
    copies = [
        each
        for name in ("ear", "rs_da", "ear_nt", "ear_srpt", "rs_syntax")
        for each in registry.objective(name).declared_settings
        if each.name == "m"
    ]
    assert len(copies) == 5 and {each.order for each in copies} == {settings_of(Copies)[0].order}
    assert registry.objective_setting("m") == copies[0]


def test_the_built_in_configurations_keep_their_keys_and_dicts():
    for settings, key in KEYS_BEFORE.items():
        assert TrialConfig(**dict(settings)).config_key() == key
    listed = list(TrialConfig().to_dict())
    at = listed.index("synonym_lookup") + 1
    assert listed[at : at + 12] == [
        *("alpha", "beta", "layer", "m", "noise_sigma", "dictionary_scale"),
        *("swap_probability", "epsilon", "perturbation_site", "adv_steps"),
        *("adv_step_scale", "rs_da_variant"),
    ]
    assert listed[at + 12] == "parallel_data"


def test_a_setting_is_read_on_the_objectives_settings_and_carried_by_replace():
    ear = TrialConfig(method="ear", alpha=0.5)
    assert ear.objective == EarSettings(alpha=0.5)
    assert (ear.objective.alpha, ear.objective.beta) == (0.5, 0.1)
    moved = dataclasses.replace(ear, save_model_dir="out", layer=2)
    assert (moved.objective.alpha, moved.objective.layer, moved.save_model_dir) == (0.5, 2, "out")
    assert TrialConfig(alpha=1.0) == TrialConfig()  # a default given is no change
    assert TrialConfig.from_dict(ear.to_dict()) == ear
    with pytest.raises(TypeError, match="no setting 'gamma'"):
        TrialConfig(gamma=1.0)
    # No objective's setting is an attribute of the config, and fine-tuning has none.
    for name in ("alpha", "gamma"):
        with pytest.raises(AttributeError):
            getattr(ear, name)
    assert TrialConfig().objective == NoSettings()
    with pytest.raises(AttributeError):
        TrialConfig().objective.alpha
    # By name (as `to_dict` and a sweep's points name it): any declared setting.
    assert (ear.setting_value("alpha"), TrialConfig().setting_value("epsilon")) == (0.5, 0.01)
    with pytest.raises(AttributeError, match="no setting 'gamma'"):
        ear.setting_value("gamma")


def _declare_a_built_in_setting(monkeypatch, default: float) -> None:
    """As if EAR's declaration (xlt_core/objectives/declarations.py) declared one more
    setting, gamma: the built-in declarations imported afresh, with a settings class that
    adds it to EAR's; the registry as it was after the test."""
    registry.objective_names()
    for name, empty in [("_objectives", {}), ("_declared_settings", {}), ("_loaded", False)]:
        monkeypatch.setattr(registry, name, empty)
    monkeypatch.delitem(sys.modules, "xlt_core.objectives.declarations")
    register = registry.register_objective

    def with_gamma(declaration):
        if declaration.name == "ear":
            gamma = ("gamma", float, setting(default, at_least=0.0))
            settings = dataclasses.make_dataclass(
                "EarGammaSettings", [gamma], bases=(declaration.settings,), frozen=True
            )
            declaration = dataclasses.replace(declaration, settings=settings)
        return register(declaration)

    monkeypatch.setattr(registry, "register_objective", with_gamma)
    registry.objective_names()


def _ear_smoke_key() -> str:
    spec = experiment_spec(ear_xnli, "smoke", None)
    return next(each for each in spec.configs() if each.method == "ear").config_key()


def test_declaring_a_built_in_setting_leaves_every_key_as_it_was(monkeypatch):
    ear_smoke = _ear_smoke_key()
    _declare_a_built_in_setting(monkeypatch, default=0.5)
    assert "gamma" in registry.objective("ear").hyperparameters  # a built-in's setting now
    assert TrialConfig(method="ear").objective.gamma == 0.5
    assert TrialConfig().config_key() == KEYS_BEFORE[()]
    assert TrialConfig(method="ear").config_key() == KEYS_BEFORE[(("method", "ear"),)]
    assert _ear_smoke_key() == ear_smoke
    # Listed by EAR's trials only; set away from its default, it is another configuration.
    assert "gamma" not in TrialConfig().to_dict()
    assert TrialConfig(method="ear").to_dict()["gamma"] == 0.5
    assert TrialConfig(method="ear", gamma=0.7).config_key() != KEYS_BEFORE[(("method", "ear"),)]


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("alpha", "-1", "invalid setting alpha=-1.0: a value >= 0.0"),
        ("m", "0", "invalid setting m=0: a value >= 1"),
        ("m", "1.5", "invalid setting m='1.5': an integer"),
        ("epsilon", "nan", "invalid setting epsilon='nan': a finite number"),
        ("swap_probability", "1.5", "invalid setting swap_probability=1.5: a number in (0, 1]"),
        ("rs_da_variant", "all", "one of released, keep_originals"),
    ],
)
def test_a_bad_value_is_refused_naming_the_setting_and_its_bounds(name, value, message):
    with pytest.raises(ConfigError) as refused:
        TrialConfig.from_dict({name: value})
    assert message in str(refused.value)


def test_a_late_objective_and_its_settings_work(widths):
    trial = TrialConfig.from_dict({"method": "widths", "width": "8", "m": "2"})
    assert trial.objective == WidthSettings(m=2, width=8)
    assert trial.hyperparameters() == {
        "method": "widths",
        "adaptation": "none",
        "m": 2,
        "width": 8,
        "flavour": "plain",
    }
    # m's range comes with the shared setting (EAR's: one copy keeps a smoke search cheap).
    assert registry.objective("widths").search_ranges == {
        "m": ("choice", (1,)),
        "width": ("choice", (2, 4, 8)),
    }
    assert "width" in config.setting_names() and "width" in config.HYPERPARAMETER_NAMES
    assert config.allowed_values()["width"] == "a number in [1, 16]"
    # Its own settings are in its trials' dicts only: the others' keys stay as they were.
    assert trial.to_dict()["width"] == 8 and "width" in trial.applicable_settings()
    assert "width" not in TrialConfig().to_dict()
    assert TrialConfig().config_key() == KEYS_BEFORE[()]
    for settings, message in [
        ({"width": "17"}, "invalid setting width=17: a number in [1, 16]"),
        ({"width": "wide"}, "invalid setting width='wide': an integer"),
        ({"flavour": "sweet"}, "invalid setting flavour='sweet': one of plain, salted"),
    ]:
        with pytest.raises(ConfigError, match=message.replace("[", r"\[")):
            TrialConfig.from_dict({"method": "widths", **settings})


def test_a_second_declaration_that_disagrees_is_refused(scratch_registry):
    @dataclasses.dataclass(frozen=True)
    class MoreCopies:
        m: int = setting(3, at_least=1)

    with pytest.raises(DeclarationError) as refused:
        registry.register_objective(dataclasses.replace(PLAIN, settings=MoreCopies))
    assert str(refused.value) == (
        "objective declaration 'plain', field settings: m is declared by objective ear as "
        "int, default 1, a value >= 1; here as int, default 3, a value >= 1"
    )


@pytest.mark.parametrize(
    ("field", "message"),
    [
        ("seed: int = setting(1)", "seed is a TrialConfig setting"),
        ("width: int = setting(0, at_least=1)", "width: its default 0 is not a value >= 1"),
        ("width: list = setting(None)", "width: a type of int, float, str, bool, got list"),
        ("width: int = setting(1, search=('grid', 1))", "width: search ('float', low"),
        # Issue 53, item 8: accepted before; the step 0 made `--set method=` divide by zero.
        ("width: float = setting(float('nan'))", "width: its default nan is not a finite number"),
        (
            "width: float = setting(1.0, search=('float', 0.1, 2.0, 0.0))",
            "width: search ('float', low, high, step) with low <= high and step > 0",
        ),
        ("width: int = setting(1, search=('choice', ()))", "width: search ('float', low"),
    ],
)
def test_a_wrong_setting_declaration_is_refused_naming_it(scratch_registry, field, message):
    namespace = {"setting": setting}
    exec(f"class Wrong:\n    {field}", namespace)
    wrong = dataclasses.dataclass(frozen=True)(namespace["Wrong"])
    with pytest.raises(DeclarationError, match="field settings: " + re.escape(message)):
        registry.register_objective(dataclasses.replace(PLAIN, settings=wrong))
