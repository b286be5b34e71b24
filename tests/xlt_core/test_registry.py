"""The declarations (xlt_core/registry.py): bad ones refused naming the field, the tables
derived from them, an objective that needs synonyms refusing to train without them, and the
registry's imports (no torch, plugins from XLT_PLUGINS)."""

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import scaled_timeout

from sweeps.planning import cost_model
from sweeps.spec import spaces
from xlt_core import config, registry
from xlt_core.config import TrialConfig
from xlt_core.data.examples import PairExample
from xlt_core.errors import ConfigError
from xlt_core.objective_settings import setting
from xlt_core.objectives import OBJECTIVES, build_objective
from xlt_core.objectives.declarations import Ball, EarSettings, NoiseTarget
from xlt_core.registry import (
    ALL,
    DeclarationError,
    ObjectiveDeclaration,
    TaskData,
    TaskDeclaration,
)
from xlt_core.tasks import TASKS

REPO = Path(__file__).resolve().parents[2]
# The built-in methods declared as drawing synonym copies from a neighbour table.
SYNONYM_METHODS = ("ear", "rs_da", "ear_nt", "ear_srpt")
PLAIN_OBJECTIVE = ObjectiveDeclaration(
    name="plain", implementation="xlt_core.objectives.finetune:FineTune", step_cost=1.0
)
PAIR_TASK = TaskDeclaration(
    name="pairs",
    implementation="xlt_core.tasks.pair_classification_task:PairClassificationTask",
    head="sequence_classification",
    metric="accuracy",
    selection_set="{dev_lang}",
    data=TaskData(10, 10, 10, 5.0),
    labels=("a", "b"),
    loader="xlt_core.data.xnli:load_xnli",
    lister="xlt_core.data.xnli:available_xnli_languages",
)


@dataclasses.dataclass(frozen=True)
class PlainFields:
    gamma: float = 1.0  # not a setting()


@dataclasses.dataclass(frozen=True)
class LateSettings(Ball, NoiseTarget):
    """A late objective's settings: built-in ones (shared) and one of its own."""

    reach: float = setting(0.5, above=0, search=("float", 0.1, 1.0, 0.1))


@pytest.fixture
def scratch_registry(monkeypatch):
    """The registry with its built-in declarations, restored after the test."""
    registry.objective_names()  # the built-ins, loaded
    monkeypatch.setattr(registry, "_objectives", dict(registry._objectives))
    monkeypatch.setattr(registry, "_tasks", dict(registry._tasks))
    monkeypatch.setattr(registry, "_declared_settings", dict(registry._declared_settings))


@pytest.mark.parametrize("missing", ObjectiveDeclaration.REQUIRED)
def test_an_objective_missing_a_required_field_is_refused_naming_it(scratch_registry, missing):
    declaration = dataclasses.replace(PLAIN_OBJECTIVE, **{missing: None})
    with pytest.raises(DeclarationError, match=f"field {missing}: required") as refused:
        registry.register_objective(declaration)
    assert "objective declaration" in str(refused.value)


@pytest.mark.parametrize("missing", TaskDeclaration.REQUIRED)
def test_a_task_missing_a_required_field_is_refused_naming_it(scratch_registry, missing):
    with pytest.raises(DeclarationError, match=f"field {missing}: required"):
        registry.register_task(dataclasses.replace(PAIR_TASK, **{missing: None}))


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"settings": dict}, "settings", "a dataclass of setting"),
        ({"settings": PlainFields}, "settings", "gamma is not declared with setting"),
        ({"implementation": "no_colon"}, "implementation", "'module:attribute'"),
        ({"name": "finetune"}, "name", "already registered"),
        ({"original_kept_when": ("gamma", 1)}, "original_kept_when", "gamma is not"),
    ],
)
def test_a_wrong_objective_declaration_is_refused_naming_the_field(
    scratch_registry, change, field, message
):
    with pytest.raises(DeclarationError, match=f"field {field}: .*{message}"):
        registry.register_objective(dataclasses.replace(PLAIN_OBJECTIVE, **change))


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"head": "regression"}, "head", "one of sequence_classification"),
        ({"objectives": ("finetune", "nope")}, "objectives", "unknown: nope"),
        ({"adaptations": ("none", "retrained")}, "adaptations", "retrained"),
        ({"selection_set": "{lang}"}, "selection_set", "dev_lang"),
        ({"data": {"train": 10}}, "data", "TaskData"),
        ({"loader": "load_xnli"}, "loader", "'module:attribute'"),
    ],
)
def test_a_wrong_task_declaration_is_refused_naming_the_field(
    scratch_registry, change, field, message
):
    with pytest.raises(DeclarationError, match=f"field {field}: .*{message}"):
        registry.register_task(dataclasses.replace(PAIR_TASK, **change))


def test_a_pair_task_without_a_loader_is_refused_when_built(scratch_registry):
    registry.register_task(dataclasses.replace(PAIR_TASK, loader=None))
    with pytest.raises(DeclarationError, match="'pairs', field loader: required by a pair"):
        TASKS["pairs"]


def test_a_registered_task_supports_every_objective_and_is_built_from_its_declaration(
    scratch_registry,
):
    registry.register_objective(PLAIN_OBJECTIVE)
    registry.register_task(PAIR_TASK)
    task = TASKS["pairs"]
    assert task.name == "pairs" and task.head == "sequence_classification"
    assert "plain" in task.objectives and task.adaptations == config.ADAPTATIONS
    assert task.num_labels(TrialConfig(task="pairs")) == 2
    assert task.selection_metric(TrialConfig(selection_dev="source", source_lang="de")) == (
        "dev/de/accuracy"
    )
    assert OBJECTIVES["plain"].__name__ == "FineTune"


def test_the_tables_are_the_declarations():
    names = registry.objective_names()
    assert config.METHODS == names
    assert config.TASKS == registry.task_names() == tuple(cost_model.TASK_DATA)
    assert set(OBJECTIVES) == set(names) and set(TASKS) == set(config.TASKS)
    for name in names:
        declaration = registry.objective(name)
        assert config.METHOD_HYPERPARAMETERS[name] == declaration.hyperparameters
        assert spaces.SEARCH_RANGES.get(name, {}) == dict(declaration.search_ranges)
        assert not hasattr(OBJECTIVES[name], "name")  # the declaration's name is its only one
    for name in config.TASKS:
        assert TASKS[name].name == name
        assert (name in config.TRANSLATED_SOURCE_TASKS) == registry.task(name).translated_training
    # The values the tables held before they were derived.
    assert tuple(n for n in names if registry.objective(n).uses_synonyms) == SYNONYM_METHODS
    assert config.PERTURBING_METHODS == ("adv", "rs_rp")
    assert config.TRANSLATED_SOURCE_TASKS == ("xnli", "pawsx")
    assert set(spaces.SEARCH_RANGES) == {"ear"}
    assert cost_model.EAR_STEP_COST == 1.66 and cost_model.ADV_ASCENT_STEP_COST == 0.52
    assert TASKS["xsr"].objectives == ("finetune",)
    assert TASKS["ner"].objectives == TASKS["qa"].objectives == ("finetune", "adv", "rs_rp")
    assert TASKS["xnli"].objectives == TASKS["pawsx"].objectives == config.METHODS


def test_an_objective_registered_after_the_imports_is_in_every_table(scratch_registry):
    # config and spaces are imported above, before this registration.
    late = dataclasses.replace(
        PLAIN_OBJECTIVE, name="late", settings=LateSettings, searched=True, perturbs=True
    )
    registry.register_objective(late)
    assert TrialConfig.from_dict({"method": "late", "epsilon": 0.05}).hyperparameters() == {
        "method": "late",
        "adaptation": "none",
        "epsilon": 0.05,
        "noise_sigma": 0.01,
        "reach": 0.5,
    }
    assert "late" in config.METHODS and "late" in config.PERTURBING_METHODS
    # In the order the settings were declared (the shared ones where they first were).
    assert config.METHOD_HYPERPARAMETERS["late"] == ("noise_sigma", "epsilon", "reach")
    assert "late" in config.allowed_values()["method"]
    assert "late" in TASKS["xnli"].objectives
    assert spaces.SEARCH_RANGES["late"] == {"reach": ("float", 0.1, 1.0, 0.1)}
    points = spaces.override_axis([{"method": "late"}, {"method": "ear"}], "epsilon", 0.02)
    assert points == [{"method": "late", "epsilon": 0.02}, {"method": "ear"}]


def test_an_unknown_method_is_refused_listing_the_registered_ones():
    with pytest.raises(ConfigError) as refused:
        TrialConfig.from_dict({"method": "late"})
    assert str(refused.value).endswith(f"one of {', '.join(registry.objective_names())}")
    assert "late" not in config.METHODS  # the previous test's registration is undone


def test_the_cost_model_reads_the_declarations():
    def items(method, **settings):
        return cost_model.items_per_example(TrialConfig(method=method, m=3, **settings))

    assert items("finetune") == items("adv") == 1
    assert items("ear") == items("rs_da") == items("rs_syntax") == 3
    assert items("rs_da", rs_da_variant="keep_originals") == 4
    assert cost_model.step_cost(TrialConfig(method="adv", adv_steps=3)) == pytest.approx(2.56)
    assert cost_model.step_cost(TrialConfig(method="ear", adv_steps=3)) == 1.66


@pytest.mark.parametrize("method", SYNONYM_METHODS)
@pytest.mark.parametrize("table", [None, {}])
def test_an_objective_that_needs_synonyms_refuses_to_train_without(method, table):
    with pytest.raises(ConfigError, match=f"synonyms=None.*method={method} trains on synonym"):
        build_objective(TrialConfig(method=method, layer=2, tiny_layers=2), 0, table)


def test_an_objective_class_with_a_table_must_be_declared_as_using_synonyms(scratch_registry):
    # The case: EAR's class (and settings) under a declaration that leaves
    # uses_synonyms off would train on copies equal to their originals (no table is loaded).
    registry.register_objective(
        dataclasses.replace(
            PLAIN_OBJECTIVE,
            name="ear_undeclared",
            implementation="xlt_core.objectives.ear:EAR",
            settings=EarSettings,
        )
    )
    objective = build_objective(TrialConfig(method="ear_undeclared"), 0, {"dog": ["hound"]})
    with pytest.raises(DeclarationError, match="'ear_undeclared', field uses_synonyms: True"):
        objective.training_set([PairExample("the dog", "a dog", 0)], lambda pairs: pairs, 0)


def test_the_declaration_alone_says_whether_an_objective_needs_a_table(scratch_registry):
    # Fine-tuning's class reads no table; declared with uses_synonyms, it still needs one.
    registry.register_objective(dataclasses.replace(PLAIN_OBJECTIVE, uses_synonyms=True))
    with pytest.raises(ConfigError, match="method=plain trains on synonym copies"):
        build_objective(TrialConfig(method="plain"), 0, None)
    assert build_objective(TrialConfig(method="plain"), 0, {"dog": ["hound"]})


def _python(code: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), **env},
        capture_output=True,
        text=True,
        timeout=scaled_timeout(120),
    )


def test_the_declarations_and_objectives_import_no_torch():
    code = (
        "import sys; from xlt_core import config, objectives, registry; "
        "import sweeps.planning.cost_model; "
        "from xlt_core.tasks import TASKS; TASKS['xnli']; objectives.OBJECTIVES.keys(); "
        "assert not [m for m in sys.modules if m.split('.')[0] in ('torch', 'transformers')]"
    )
    completed = _python(code, XLT_PLUGINS="")
    assert completed.returncode == 0, completed.stderr


def test_a_plugin_module_that_cannot_be_imported_is_named():
    completed = _python("import xlt_core.config", XLT_PLUGINS="xlt_core.registry, no_such_plugin")
    assert completed.returncode != 0
    assert "invalid setting XLT_PLUGINS='xlt_core.registry, no_such_plugin'" in completed.stderr
    assert "No module named 'no_such_plugin'" in completed.stderr


def test_all_means_every_objective():
    assert registry.supported_objectives(dataclasses.replace(PAIR_TASK, objectives=ALL)) == (
        registry.objective_names()
    )


# Issue 53, item 8: plugin modules whose import went wrong in ways the registry did not name.
BAD_PLUGINS = {
    # a setting named like a trial setting: an uncaught DeclarationError, as config.py bound
    # the trial settings after the plugin had registered
    "core_name": (
        "from dataclasses import dataclass\n"
        "from xlt_core.objective_settings import setting\n"
        "from xlt_core.registry import ObjectiveDeclaration, register_objective\n"
        "@dataclass(frozen=True)\n"
        "class Clash:\n"
        "    epochs: float = setting(1.0, at_least=0.0)\n"
        "register_objective(ObjectiveDeclaration(name='clash', implementation='m:C', "
        "step_cost=1.0, settings=Clash))\n",
        "importing core_name raised DeclarationError: objective declaration 'clash', field "
        "settings: epochs is a TrialConfig setting: an objective's needs a name of its own",
    ),
    # SystemExit(0) at import: the sweep exited 0 with nothing run
    "exits": ("raise SystemExit(0)\n", "importing exits raised SystemExit: 0"),
}


@pytest.mark.parametrize("plugin", sorted(BAD_PLUGINS))
def test_a_plugin_that_fails_its_import_ends_the_sweep_in_one_line_naming_it(plugin, tmp_path):
    source, named = BAD_PLUGINS[plugin]
    (tmp_path / f"{plugin}.py").write_text(source)
    completed = subprocess.run(
        [sys.executable, str(REPO / "sweeps" / "ear_xnli.py"), "--preset", "smoke", "--dry-run"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO}", "XLT_PLUGINS": plugin},
        capture_output=True,
        text=True,
        timeout=scaled_timeout(120),
    )
    assert completed.returncode == 2 and completed.stdout == "", completed.stderr
    assert completed.stderr.startswith(f"error: invalid setting XLT_PLUGINS='{plugin}'")
    assert named in completed.stderr and completed.stderr.count("\n") == 1, completed.stderr
