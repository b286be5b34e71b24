"""The objectives and tasks, each declared once: the one place their names are typed.

Every table that lists objectives or tasks (`config.METHODS`, `config.TASKS`, the cost
model's step costs and data sizes, `spaces.SEARCH_RANGES`, the data loaders, the test lists)
is derived from these declarations, read from them at each use (`DerivedNames`,
`DerivedTable`): a declaration registered after those modules' import is in them. The
built-in ones are `xlt_core/objectives/declarations.py` and
`xlt_core/tasks/declarations.py`; a plugin package adds its own in modules named in the
environment variable XLT_PLUGINS (comma-separated module names), imported on the registry's
first use, so that the driver, `--dry-run` and Ray workers (which inherit the environment)
all see them. docs/extending.md has the steps.

This module is torch-free and imports no project module but `errors` and
`objective_settings` (and `config.py` when it loads the plugins, so that their declarations
are checked against the trial settings as they register): `config.py`, `sweeps/` and
`--dry-run` read it. Implementations are named by "module:attribute" strings and imported
only when a trial needs them (`resolve`).

An objective declares its own settings (`settings`: a dataclass of
`objective_settings.setting` fields), its hyperparameters and search ranges among them; the
registry keeps every declared setting by name (`objective_settings`), refusing a second
declaration of a name that disagrees with the first.

A declaration is checked when it is registered: a missing required field, a head, an
objective, a setting or a search range it cannot have. Names of trial settings and
adaptations are checked once `config.py` has told the registry its settings
(`bind_settings`, at the end of its import); a declaration registered before that is
checked then.
"""

from __future__ import annotations

import importlib
import os
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable, ClassVar, Iterable, Iterator

from xlt_core.errors import ConfigError
from xlt_core.objective_settings import Setting, declaration_problem, settings_of

PLUGINS_VARIABLE = "XLT_PLUGINS"
BUILT_IN_MODULES = ("xlt_core.objectives.declarations", "xlt_core.tasks.declarations")
# A task that supports every registered objective (or adaptation), plugins' included.
ALL = "all"
# The model heads a task can name, each with the names of its (tiny model class, hub auto
# class) in `transformers`: names, looked up when `models.load_model` builds a model, since
# importing a model class loads transformers' modelling stack (~2 s), which the sweep
# driver's checks and `import xlt_core.trial` skip.
HEADS = {
    "sequence_classification": (
        "BertForSequenceClassification",
        "AutoModelForSequenceClassification",
    ),
    "token_classification": ("BertForTokenClassification", "AutoModelForTokenClassification"),
    "question_answering": ("BertForQuestionAnswering", "AutoModelForQuestionAnswering"),
    # No head: tasks that read the encoder itself (sentence retrieval).
    "encoder": ("BertModel", "AutoModel"),
}
# What a task's selection set may name, e.g. "{dev_lang}".
SELECTION_FIELDS = ("dev_lang", "source_lang")


class DeclarationError(ValueError):
    """A declaration that cannot be registered; the message names it and the field."""

    def __init__(self, kind: str, name: Any, field_name: str, problem: str):
        super().__init__(f"{kind} declaration {name!r}, field {field_name}: {problem}")


@dataclass(frozen=True)
class ObjectiveDeclaration:
    """A training objective: what `config.method` names."""

    name: str | None = None
    # "module:Class": a class with `from_config(config, pad_id, synonyms)`,
    # `training_set(examples, encode, seed)` and `loss(model, batch)` (objectives/base.py).
    implementation: str | None = None
    # A training step's cost relative to a fine-tuning step on the same batch (cost model).
    step_cost: float | None = None
    # Its settings: a frozen dataclass of `objective_settings.setting` fields (None: none).
    # Its hyperparameters, what its sweeps vary besides the seed, are those among them.
    settings: type | None = None
    # Strategy `search` may sample it, over its hyperparameters' `search` ranges (a shared
    # setting's range is there for every objective that declares it, searched or not).
    searched: bool = False
    # It draws synonym copies from a neighbour table (and refuses to train without one).
    uses_synonyms: bool = False
    # It trains on m copies of every example; plus the original where the setting
    # `original_kept_when` = (setting, value) holds.
    copies: bool = False
    original_kept_when: tuple[str, Any] | None = None
    # Its batch holds two rows per item (the original above its copy): memory.
    paired_rows: bool = False
    # The added step cost of each of `adv_steps` ascent steps (0: it makes none).
    ascent_step_cost: float = 0.0
    # It perturbs vectors in an L-inf ball at `perturbation_site`.
    perturbs: bool = False

    KIND: ClassVar[str] = "objective"
    REQUIRED: ClassVar[tuple[str, ...]] = ("name", "implementation", "step_cost")

    @cached_property
    def declared_settings(self) -> tuple[Setting, ...]:
        """Its settings, in declaration order (TypeError: `settings` is not a settings class)."""
        return settings_of(self.settings) if self.settings is not None else ()

    @property
    def hyperparameters(self) -> tuple[str, ...]:
        return tuple(each.name for each in self.declared_settings if each.hyperparameter)

    @property
    def search_ranges(self) -> dict[str, tuple]:
        """Strategy `search`'s range of each hyperparameter that has one, where `searched`."""
        if not self.searched:
            return {}
        return {
            each.name: each.search
            for each in self.declared_settings
            if each.hyperparameter and each.search is not None
        }


@dataclass(frozen=True)
class TaskData:
    """A task's hub data sizes and its examples' typical length (the cost model's input)."""

    train: int  # English training examples
    dev: int  # English dev examples (evaluated during training and at the end)
    test: int  # test examples per evaluated language
    words: float  # mean whitespace words per example (the text one encoder row holds)
    source_tested: bool = True  # False: only the target languages have test sets
    # Mean words of a training and dev example where they differ from the test's (XSR
    # fine-tunes and selects on SQuAD, then retrieves short sentences); None: `words`.
    train_words: float | None = None


@dataclass(frozen=True)
class TaskDeclaration:
    """A task: what `config.task` names."""

    name: str | None = None
    # "module:attr": a callable that takes this declaration and returns the task
    # (the protocol of tasks/base.py), usually a class deriving from `tasks.base.DeclaredTask`.
    implementation: str | None = None
    head: str | None = None  # one of HEADS
    metric: str | None = None  # the metric every evaluation set reports
    # The dev set on whose `metric` model and configuration selection rank: its language, a
    # template over SELECTION_FIELDS ("{dev_lang}"), or a fixed name ("pooled").
    selection_set: str | None = None
    data: TaskData | None = None  # the cost model's data sizes
    objectives: tuple[str, ...] | str = ALL  # the objectives it supports, or ALL
    adaptations: tuple[str, ...] | str = ALL  # the adaptations it supports, or ALL
    # Pair tasks: the label names, and "module:function" of the loader
    # (source, split, lang, data_dir) -> examples and of the language lister
    # (source, split, data_dir) -> languages (xlt_core/data/xnli.py has both).
    labels: tuple[str, ...] | None = None
    loader: str | None = None
    lister: str | None = None
    # Its training set exists in other languages than English (machine-translated).
    translated_training: bool = False
    # Pair tasks: its translated test sets keep every label, so a label that differs between
    # two languages' files at the same line means the files are misaligned (checked for
    # generalized and mixed-language pairs); False leaves relabelled pairs out instead.
    translations_keep_labels: bool = False
    # The evaluation sets (a metric key's split: "test", "xquad") whose languages hold
    # translations of one item set, example i the same item in every language (XNLI, PAWS-X,
    # XQuAD): a method's effect on an item repeats in each translation, so the report tests the
    # mean over the languages on items (docs/statistics.md#parallel-test-sets). Sets left out
    # are independent per language (WikiANN, Tatoeba, TyDiQA) or not aligned by position.
    parallel_sets: tuple[str, ...] = ()
    # The same for the synthetic stand-in data (xlt_core/data/synthetic*.py), whose
    # pseudo-languages are word-by-word translations; None: as `parallel_sets`.
    synthetic_parallel_sets: tuple[str, ...] | None = None

    KIND: ClassVar[str] = "task"
    REQUIRED: ClassVar[tuple[str, ...]] = (
        "name",
        "implementation",
        "head",
        "metric",
        "selection_set",
        "data",
    )

    def selection_metric_for(self, config) -> str:
        """The selection metric of a trial (its dev language, its source language), e.g.
        "dev/es/accuracy"."""
        dev_set = self.selection_set.format(
            **{name: getattr(config, name) for name in SELECTION_FIELDS}
        )
        return f"dev/{dev_set}/{self.metric}"

    def parallel_sets_for(self, data_source: str) -> tuple[str, ...]:
        """The evaluation sets whose languages are translations of one item set, aligned by
        position, when the trial reads `data_source` (config.DATA_SOURCES)."""
        if data_source == "synthetic" and self.synthetic_parallel_sets is not None:
            return self.synthetic_parallel_sets
        return self.parallel_sets


_objectives: dict[str, ObjectiveDeclaration] = {}
_tasks: dict[str, TaskDeclaration] = {}
_loaded = False
# What config.py tells the registry (`bind_settings`): trial settings and adaptations.
_settings: frozenset[str] | None = None
_adaptations: tuple[str, ...] | None = None
# Every objective's setting by name, with the objective that first declared it.
_declared_settings: dict[str, tuple[Setting, str]] = {}
# The settings every trial lists (`objective_settings`), whatever its objective: the built-in
# objectives' at 0.5.0, which had been TrialConfig fields, so every stored configuration's
# dict and key holds them. Frozen: a setting declared since, built-in or a plugin's, is its
# own objective's trials' only, so declaring one leaves the others' dicts and keys as they were.
SETTINGS_AT_0_5_0 = (
    *("alpha", "beta", "layer", "m", "noise_sigma", "dictionary_scale", "swap_probability"),
    *("epsilon", "perturbation_site", "adv_steps", "adv_step_scale", "rs_da_variant"),
)


def plugin_modules() -> list[str]:
    """The module names XLT_PLUGINS lists."""
    return [
        name.strip() for name in os.environ.get(PLUGINS_VARIABLE, "").split(",") if name.strip()
    ]


def _load() -> None:
    """Import the built-in declarations, then the plugins' (once per process)."""
    global _loaded
    if _loaded:
        return
    _loaded = True  # before the imports: their registrations call back here
    try:
        for module in BUILT_IN_MODULES:
            importlib.import_module(module)
        # config.py binds the trial settings first (`bind_settings`): a plugin's setting named
        # like one (`epochs`) is then refused as the plugin registers it, naming the plugin,
        # not later by config.py's import, in a traceback.
        importlib.import_module("xlt_core.config")
        for module in plugin_modules():
            _import_plugin(module)
    except Exception:
        _loaded = False  # every later use raises too, rather than see part of the list
        raise


def _import_plugin(module: str) -> None:
    """Import one plugin module; ConfigError naming it when it is missing or raises."""
    try:
        importlib.import_module(module)
    # A plugin's bug is a bad setting of XLT_PLUGINS, named here; its SystemExit too, which
    # ended the sweep with its status (0) and nothing run.
    except (Exception, SystemExit) as error:
        if isinstance(error, ModuleNotFoundError):
            reason = f"{error}; is its folder on PYTHONPATH?"
        else:
            reason = f"importing {module} raised {type(error).__name__}: {error}"
        raise ConfigError(
            PLUGINS_VARIABLE,
            os.environ[PLUGINS_VARIABLE],
            f"comma-separated importable module names ({reason})",
        ) from None


def check_plugins() -> None:
    """Import the declarations and the plugins now: ConfigError naming a plugin module that
    is missing or raises (`sweeps/__init__.py` turns it into one line and exit 2)."""
    _load()


def register_objective(declaration: ObjectiveDeclaration) -> ObjectiveDeclaration:
    """Add an objective; raises DeclarationError naming the field that is wrong."""
    _load()
    _register(declaration, ObjectiveDeclaration, _objectives, _check_objective)
    for declared in declaration.declared_settings:
        _declared_settings.setdefault(declared.name, (declared, declaration.name))
    return declaration


def register_task(declaration: TaskDeclaration) -> TaskDeclaration:
    """Add a task; raises DeclarationError naming the field that is wrong."""
    _load()
    _register(declaration, TaskDeclaration, _tasks, _check_task)
    return declaration


def _register(declaration, kind: type, table: dict, check: Callable) -> None:
    if not isinstance(declaration, kind):
        raise TypeError(f"register a {kind.__name__}, not {type(declaration).__name__}")
    _check_required(declaration)
    if declaration.name in table:
        raise DeclarationError(kind.KIND, declaration.name, "name", "already registered")
    check(declaration)
    table[declaration.name] = declaration


def objective(name: str) -> ObjectiveDeclaration:
    """The declaration of objective `name` (ConfigError naming `method` if unknown)."""
    _load()
    if name not in _objectives:
        raise ConfigError("method", name, f"one of {', '.join(_objectives)}")
    return _objectives[name]


def task(name: str) -> TaskDeclaration:
    """The declaration of task `name` (ConfigError naming `task` if unknown)."""
    _load()
    if name not in _tasks:
        raise ConfigError("task", name, f"one of {', '.join(_tasks)}")
    return _tasks[name]


def objective_names() -> tuple[str, ...]:
    """Every objective, in registration order (built-ins first)."""
    _load()
    return tuple(_objectives)


def task_names() -> tuple[str, ...]:
    """Every task, in registration order (built-ins first)."""
    _load()
    return tuple(_tasks)


def objective_settings(method: str | None = None) -> tuple[Setting, ...]:
    """The objectives' settings, in declaration order: every one; with `method`, those a
    trial of it lists (`TrialConfig.to_dict`): its own and `SETTINGS_AT_0_5_0` (which every
    trial lists, as when they were TrialConfig fields, so its config key stays the same
    whichever settings are declared since)."""
    _load()
    declaration = _objectives.get(method)
    own = {declared.name for declared in declaration.declared_settings} if declaration else set()
    found = [
        declared
        for declared, _ in _declared_settings.values()
        if method is None or declared.name in SETTINGS_AT_0_5_0 or declared.name in own
    ]
    return tuple(sorted(found, key=lambda declared: declared.order))


def objective_setting(name: str) -> Setting | None:
    """The declaration of objective setting `name` (its first), or None."""
    _load()
    return _declared_settings[name][0] if name in _declared_settings else None


def supported_objectives(declaration: TaskDeclaration) -> tuple[str, ...]:
    """The objectives a task supports (every registered one for ALL)."""
    return objective_names() if declaration.objectives == ALL else declaration.objectives


def supported_adaptations(declaration: TaskDeclaration) -> tuple[str, ...]:
    """The adaptations a task supports (every one config.py knows for ALL)."""
    if declaration.adaptations != ALL:
        return declaration.adaptations
    if _adaptations is None:
        raise RuntimeError("xlt_core.config is not imported: the adaptations are unknown")
    return _adaptations


def resolve(declaration, field_name: str) -> Any:
    """Import what a "module:attribute" field names."""
    reference = getattr(declaration, field_name)
    module, _, attribute = reference.partition(":")
    try:
        return getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError) as error:
        raise DeclarationError(
            declaration.KIND, declaration.name, field_name, f"cannot import {reference}: {error}"
        ) from None


def bind_settings(settings: Iterable[str], adaptations: tuple[str, ...]) -> None:
    """config.py's trial settings and adaptations: check every declaration's names against
    them now, and every later one at registration."""
    global _settings, _adaptations
    _settings, _adaptations = frozenset(settings), tuple(adaptations)
    for declaration in _objectives.values():
        _check_objective(declaration)
    for declaration in _tasks.values():
        _check_task(declaration)


class DerivedNames(Sequence):
    """A tuple of names derived from the declarations (`derive()`), computed at each use:
    a module-level table that sees a declaration registered after the module's import."""

    def __init__(self, derive: Callable[[], tuple[str, ...]]):
        self._derive = derive

    def __getitem__(self, index):
        return self._derive()[index]

    def __len__(self) -> int:
        return len(self._derive())

    def __iter__(self) -> Iterator[str]:
        return iter(self._derive())

    def __contains__(self, name: object) -> bool:
        return name in self._derive()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (tuple, DerivedNames)):
            return self._derive() == tuple(other)
        return NotImplemented

    __hash__ = None  # its value changes with the registry

    def __repr__(self) -> str:
        return repr(self._derive())


class DerivedTable(Mapping):
    """name -> `lookup(name)` over `names()`, both read at each use: a module-level table
    derived from the declarations that sees one registered after the module's import."""

    def __init__(self, names: Callable[[], tuple[str, ...]], lookup: Callable[[str], Any]):
        self._names, self._lookup = names, lookup

    def __getitem__(self, name: str) -> Any:
        if name not in self._names():
            raise KeyError(name)
        return self._lookup(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())


class LazyImplementations(DerivedTable):
    """name -> implementation, built on first lookup (`build(name)`) and kept: a mapping
    that imports only the implementations a process uses."""

    def __init__(self, names: Callable[[], tuple[str, ...]], build: Callable[[str], Any]):
        super().__init__(names, build)
        self._built = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self._built:
            self._built[name] = super().__getitem__(name)
        return self._built[name]


def _check_required(declaration) -> None:
    for name in declaration.REQUIRED:
        if getattr(declaration, name) is None:
            raise DeclarationError(declaration.KIND, declaration.name, name, "required, missing")


def _check_reference(declaration, field_name: str) -> None:
    value = getattr(declaration, field_name)
    module, sep, attribute = value.partition(":") if isinstance(value, str) else ("", "", "")
    if not (module and sep and attribute.isidentifier()):
        raise DeclarationError(
            declaration.KIND, declaration.name, field_name, f"'module:attribute', got {value!r}"
        )


def _check_settings(declaration, field_name: str, names) -> None:
    unknown = [name for name in names if _settings is not None and name not in _settings]
    if unknown:
        raise DeclarationError(
            declaration.KIND,
            declaration.name,
            field_name,
            f"{', '.join(unknown)} is not a TrialConfig setting (xlt_core/config.py)",
        )


def _check_objective(declaration: ObjectiveDeclaration) -> None:
    _check_reference(declaration, "implementation")
    problem = _settings_problem(declaration)
    if problem:
        raise DeclarationError("objective", declaration.name, "settings", problem)
    if declaration.original_kept_when is not None:
        own = {each.name for each in declaration.declared_settings}
        kept = [name for name in declaration.original_kept_when[:1] if name not in own]
        _check_settings(declaration, "original_kept_when", kept)


def _settings_problem(declaration: ObjectiveDeclaration) -> str | None:
    """What is wrong with an objective's settings, or None: a class that is not a dataclass
    of `setting()` fields, a setting's own declaration, a name TrialConfig has, or a name
    another objective declared otherwise (type, default or what it allows)."""
    try:
        declared = declaration.declared_settings
    except TypeError as error:
        return str(error)
    for each in declared:
        problem = declaration_problem(each)
        if problem:
            return problem
        if _settings is not None and each.name in _settings:
            return f"{each.name} is a TrialConfig setting: an objective's needs a name of its own"
        first, owner = _declared_settings.get(each.name, (each, declaration.name))
        if first.rule() != each.rule():
            return (
                f"{each.name} is declared by objective {owner} as {_described(first)}; "
                f"here as {_described(each)}"
            )
    return None


def _described(declared: Setting) -> str:
    return f"{declared.type}, default {declared.default!r}, {declared.allowed()}"


def _check_task(declaration: TaskDeclaration) -> None:
    problem = _task_problem(declaration)
    if problem:
        raise DeclarationError("task", declaration.name, *problem)


def _task_problem(declaration: TaskDeclaration) -> tuple[str, str] | None:
    """(field, what is wrong) of the first wrong field of a task declaration, or None."""
    for name in ("implementation", "loader", "lister"):
        if name == "implementation" or getattr(declaration, name) is not None:
            _check_reference(declaration, name)
    if declaration.head not in HEADS:
        return "head", f"one of {', '.join(HEADS)}, got {declaration.head!r}"
    template_fields = {
        name for _, name, _, _ in string.Formatter().parse(declaration.selection_set)
    }
    if not template_fields <= {None, *SELECTION_FIELDS}:
        return "selection_set", f"a template over {', '.join(SELECTION_FIELDS)}"
    for name in ("parallel_sets", "synthetic_parallel_sets"):
        value = getattr(declaration, name)
        if value is None and name == "synthetic_parallel_sets":
            continue  # as parallel_sets
        if not (isinstance(value, tuple) and all(isinstance(split, str) for split in value)):
            return name, f"a tuple of evaluation set names (splits), got {value!r}"
    if not isinstance(declaration.data, TaskData):
        return "data", f"a registry.TaskData, got {type(declaration.data).__name__}"
    if declaration.objectives != ALL:
        unknown = [name for name in declaration.objectives if name not in _objectives]
        if unknown:
            return "objectives", f"registered objectives or ALL; unknown: {', '.join(unknown)}"
    if declaration.adaptations != ALL and _adaptations is not None:
        unknown = [name for name in declaration.adaptations if name not in _adaptations]
        if unknown:
            return "adaptations", f"one of {', '.join(_adaptations)} or ALL; got {unknown}"
    return None
