"""The validated configuration of one trial.

Ray hands a trial a plain dict; `TrialConfig.from_dict` turns it into a frozen, checked
object, refusing every bad value with a message that names the field, the value and what
is allowed. `check_resources` then checks what needs the file system (data files,
languages, the model's depth) — still before any training starts.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from xlt_core import registry
from xlt_core.data.synonyms import COUNTERFITTED_TABLE, SYNONYM_LOOKUPS
from xlt_core.errors import ConfigError, require_one_of
from xlt_core.objective_settings import NoSettings, settings_of
from xlt_schema import SELECTION_ON_TEST

# The tasks and objectives are declared once each (xlt_core/registry.py); the tables below
# that name them are derived from the declarations when read (registry.DerivedNames and
# DerivedTable), so that one registered after this import is in them.
TASKS = registry.DerivedNames(registry.task_names)
DATA_SOURCES = ("synthetic", "local", "hub")
TINY_MODEL = "tiny"
# The tiny model's position embeddings, as BERT's: the longest max_seq_length it takes.
TINY_MAX_POSITIONS = 512
# Seeds reach numpy, whose seeds are 32-bit unsigned integers.
MAX_SEED = 2**32 - 1
# Bounds far above any study's (the papers train 2 to 5 epochs in batches of 32), below what
# breaks the arithmetic: 1e308 epochs overflowed the dry run's evaluation count and failed
# every trial; a batch of 1e30 items starts a sweep that cannot run (issue 53).
MAX_EPOCHS = 1000
MAX_BATCH_SIZE = 2**16
# The longest file name and path Linux takes (NAME_MAX, PATH_MAX): a longer `model` is no
# local directory (its lookup raised OSError "File name too long"), nor a hub id.
MAX_PATH_PART, MAX_PATH = 255, 4096
PRECISIONS = ("bf16", "fp32")

# `method` names the training objective; the hyperparameters each objective has (what its
# sweeps vary besides the seed), from its declaration (xlt_core/objectives/declarations.py).
METHOD_HYPERPARAMETERS = registry.DerivedTable(
    registry.objective_names, lambda name: registry.objective(name).hyperparameters
)
METHODS = registry.DerivedNames(registry.objective_names)
# `adaptation` says what happens to the encoder: nothing, the cross-lingual adjustment stage
# before training (Eq. 1), or adjustment and continual alignment during training (Eq. 2).
_ADJUSTMENT = ("adjust_epochs", "adjust_learning_rate", "adjust_reg_weight")
ADAPTATION_HYPERPARAMETERS = {
    "none": (),
    "adjusted": _ADJUSTMENT,
    "adjusted_continual": (*_ADJUSTMENT, "continual_alpha", "continual_reg_weight"),
}
ADAPTATIONS = tuple(ADAPTATION_HYPERPARAMETERS)


def _hyperparameter_names() -> tuple[str, ...]:
    tables = (*METHOD_HYPERPARAMETERS.values(), *ADAPTATION_HYPERPARAMETERS.values())
    return tuple(sorted({name for names in tables for name in names}))


# Every setting that is some method's or adaptation's hyperparameter.
HYPERPARAMETER_NAMES = registry.DerivedNames(_hyperparameter_names)
# The methods that perturb vectors in an L-inf ball (at `perturbation_site`).
PERTURBING_METHODS = registry.DerivedNames(
    lambda: tuple(name for name in METHODS if registry.objective(name).perturbs)
)

# Settings that describe the model's training, not the method: seeds of the same
# configuration share everything but `seed`.
NON_HYPERPARAMETERS = ("seed",)
# The objectives' settings are listed (`--help`, `to_dict`) after this field, where they
# stood when they were TrialConfig's own fields: the listings and config keys stay as they were.
_OBJECTIVE_SETTINGS_AFTER = "synonym_lookup"
# Settings a study varies between configurations besides their hyperparameters, each with
# the configurations it applies to: a configuration names one only where it applies and
# differs from the default, so every other sweep's configurations read as before.
STUDY_SETTINGS = {
    "dictionary_scale": lambda config: config.uses_synonyms,  # ding2022 Table 6
    "source_lang": lambda config: True,  # ding2022 Table 5
    "selection_dev": lambda config: True,
    # Where ADV and RS-RP perturb (huang2021's Enc(x), or the word embeddings).
    "perturbation_site": lambda config: config.method in PERTURBING_METHODS,
}
# The settings beside the hyperparameters that apply to some configurations only, each with
# the configurations it applies to; a trial run logs a setting as a param only where it applies
# (`TrialConfig.applicable_settings`).
_PARALLEL_SETTINGS = ("parallel_max_sentences", "parallel_pool_sentences")
_TINY_SETTINGS = ("tiny_hidden_size", "tiny_layers", "tiny_heads", "tiny_vocab_size")
SETTING_APPLIES = {
    **STUDY_SETTINGS,
    "synonyms": lambda config: config.uses_synonyms,
    "synonym_lookup": lambda config: config.uses_synonyms,
    # the pool of parallel data, wherever some is read (adjustment, XSR's tiny tokenizer)
    **dict.fromkeys(_PARALLEL_SETTINGS, lambda config: config.parallel_data is not None),
    "adjust_batch_size": lambda config: config.adjusted,
    "continual_pairs": lambda config: config.adaptation == "adjusted_continual",
    **dict.fromkeys(_TINY_SETTINGS, lambda config: config.model == TINY_MODEL),
}
# The tasks whose training set exists in other languages than English (XNLI's and PAWS-X's
# machine-translated training sets); the others train on English only.
TRANSLATED_SOURCE_TASKS = registry.DerivedNames(
    lambda: tuple(name for name in TASKS if registry.task(name).translated_training)
)
# Which dev set selects: English dev (XNLI's protocol, the same set whatever the source
# language, so configurations compare), or the source language's own dev; or "test", the
# released EAR scripts' rule (KB-Ding/EAR@b508ce7 run/train.py:186-224): the checkpoint with
# the best accuracy pooled over the test sets. It leaks test: sweeps take it only with
# `--preset released` (sweeps/planning/sweep_checks.py), and reports claim nothing from it.
SELECTION_DEVS = ("en", "source", SELECTION_ON_TEST)
# The MLQA split the QA task evaluates: dev (about 500 questions per language) or test (about
# 5K, the split XTREME and efimov2023 report).
MLQA_SPLITS = ("dev", "test")


class ConfigurationViews:
    """What is derived from a trial's settings (`TrialConfig`'s fields and its objective's
    settings): its objective's settings, its hyperparameters, the settings it logs, its key and
    label, its languages."""

    @property
    def objective(self) -> Any:
        """This trial's objective's settings: an instance of its declaration's settings class
        (`config.objective.alpha` for EAR; fine-tuning's, `NoSettings`, has none)."""
        settings = registry.objective(self.method).settings or NoSettings
        values = {each.name: self.setting_value(each.name) for each in settings_of(settings)}
        return settings(**values)

    def hyperparameter_names(self) -> tuple[str, ...]:
        """This trial's hyperparameters: its method's, then its adaptation's, then the study
        settings it changes (`STUDY_SETTINGS`)."""
        studied = tuple(
            name
            for name, applies in STUDY_SETTINGS.items()
            if applies(self) and self.setting_value(name) != setting_default(name)
        )
        return (
            registry.objective(self.method).hyperparameters
            + ADAPTATION_HYPERPARAMETERS[self.adaptation]
            + studied
        )

    def applicable_settings(self) -> dict[str, Any]:
        """The settings that apply to this trial, as `to_dict` gives them: neither another
        method's or adaptation's hyperparameters, nor a setting `SETTING_APPLIES` says does not
        apply here, nor one left unset (None)."""
        own = set(self.hyperparameter_names())
        return {
            name: value
            for name, value in self.to_dict().items()
            if value is not None
            and (name not in HYPERPARAMETER_NAMES or name in own)
            and SETTING_APPLIES.get(name, lambda config: True)(self)
        }

    def hyperparameters(self) -> dict[str, Any]:
        """Method, adaptation and their hyperparameters (what a sweep varies besides the seed)."""
        values = {name: self.setting_value(name) for name in self.hyperparameter_names()}
        return {"method": self.method, "adaptation": self.adaptation, **values}

    def selection_metric(self) -> str:
        """The final metric that model and configuration selection rank by (the task's
        metric on the dev set of `dev_lang`: the zero-shot protocol never selects on test)."""
        return registry.task(self.task).selection_metric_for(self)

    def config_key(self) -> str:
        """A hash of every setting except the seed: runs that differ only by seed share it.
        An objective's setting declared after 0.5.0 (not in registry.SETTINGS_AT_0_5_0) counts
        only where set away from its default: a new setting's default runs the trial as
        before, so every configuration keeps the key it had (docs/extending.md)."""
        values = {
            name: value
            for name, value in self.to_dict().items()
            if name not in NON_HYPERPARAMETERS
            and (
                name in registry.SETTINGS_AT_0_5_0
                or registry.objective_setting(name) is None
                or value != setting_default(name)
            )
        }
        return hashlib.sha256(json.dumps(values, sort_keys=True).encode()).hexdigest()[:12]

    def config_label(self) -> str:
        """A short readable name for reports: `ear alpha=1 beta=0.1 layer=6 m=1`, or with an
        adaptation `finetune adjusted adjust_epochs=1 adjust_learning_rate=5e-05 ...`."""
        params = self.hyperparameters()
        words = [params.pop("method")]
        if params["adaptation"] != "none":
            words.append(params["adaptation"])
        params.pop("adaptation")
        return " ".join(words + [f"{k}={_short(v)}" for k, v in params.items()])

    def eval_token_budget(self) -> int:
        """Padded tokens per evaluation batch (`eval_tokens_per_batch` or its default)."""
        return self.eval_tokens_per_batch or 2 * self.batch_size * self.max_seq_length

    @property
    def adjusted(self) -> bool:
        """The encoder goes through the adjustment stage before training."""
        return self.adaptation != "none"

    @property
    def test_langs(self) -> tuple[str, ...]:
        """What a sentence-pair trial tests: English (always), the source language and the
        targets, each once."""
        return tuple(dict.fromkeys(("en", self.source_lang, *self.target_langs)))

    @property
    def dev_lang(self) -> str:
        """The language of the dev set that selects (`selection_dev`; English dev under
        selection on test, which still scores it each evaluation)."""
        return self.source_lang if self.selection_dev == "source" else "en"

    @property
    def uses_synonyms(self) -> bool:
        return registry.objective(self.method).uses_synonyms

    def synonym_path(self) -> Path | None:
        """The neighbour table to use, or None for the synthetic data's built-in table."""
        if self.synonyms:
            return Path(self.synonyms)
        if self.data_source == "synthetic":
            return None
        return COUNTERFITTED_TABLE


@dataclass(frozen=True, init=False)
class TrialConfig(ConfigurationViews):
    """Everything one trial (train + evaluate) needs. Defaults are the offline smoke values.
    An objective's settings are declared with it (xlt_core/objective_settings.py) and read
    through `objective`, its settings class's instance (`config.objective.alpha`)."""

    task: str = "xnli"
    method: str = "finetune"  # the training objective (METHOD_HYPERPARAMETERS)
    adaptation: str = "none"  # what happens to the encoder (ADAPTATION_HYPERPARAMETERS)
    # "tiny" builds a small BERT and trains a WordPiece tokenizer on the training text;
    # anything else is a hub id or a local directory for `from_pretrained`.
    model: str = TINY_MODEL
    data_source: str = "synthetic"
    data_dir: str | None = None
    # The training language; English is always tested beside the target languages.
    source_lang: str = "en"
    selection_dev: str = "en"  # SELECTION_DEVS; the dev set is dev/<dev_lang>
    target_langs: tuple[str, ...] = ("es", "de", "ru")
    # Neighbour table (JSON word -> [neighbours]) for synonym copies; None means the
    # synthetic data's own table, or the counter-fitted table shipped with the package.
    synonyms: str | None = None
    # How a word is looked up in it (data/synonyms.py): "lowercase_fallback" (as written,
    # then lower-cased) or "exact" (as written only, as the released RS-DA and EAR code).
    synonym_lookup: str = "lowercase_fallback"

    # Cross-lingual adjustment (Efimov et al. 2023, after Cao et al. 2020): parallel data
    # ("synthetic", a directory of line-aligned <name>.<lang> files, or "hub:<OPUS-style id>"),
    # Eq. 1's optimisation (Cao et al.'s released settings) and regulariser weight, and
    # Eq. 2's continual weights (alpha 0.01 as in the paper) with pairs per task step.
    parallel_data: str | None = None
    # The sentence pairs each trial adjusts on, drawn with its seed from the pool: the first
    # parallel_pool_sentences usable pairs of the corpus, word-aligned as a whole (efimov2023
    # L125: 30K sampled per run from 250K). None: the pool is the first
    # parallel_max_sentences pairs, the same for every seed.
    parallel_max_sentences: int = 20000
    parallel_pool_sentences: int | None = None
    adjust_epochs: float = 1.0
    adjust_learning_rate: float = 5e-5
    adjust_batch_size: int = 8
    adjust_reg_weight: float = 1.0
    continual_alpha: float = 0.01
    continual_reg_weight: float = 0.01
    continual_pairs: int = 16

    seed: int = 0
    learning_rate: float = 2e-5
    batch_size: int = 32
    epochs: float = 2.0
    max_seq_length: int = 128
    warmup_ratio: float = 0.1
    weight_decay: float = 0.0
    max_grad_norm: float = 1.0
    # Training and pair-classification evaluation run under bf16 autocast on CUDA ("bf16",
    # fp32 weights and optimizer states), or in plain fp32 ("fp32", the papers' V100 runs);
    # autocast is never on on CPU.
    precision: str = "bf16"
    evals_per_epoch: int = 1
    max_train_examples: int | None = None
    max_eval_examples: int | None = None
    # Training batches of items of similar length (`train.epoch_batches`), for every task and
    # objective: random XNLI batches compute 1.75 padded tokens per real token (mBERT's
    # vocabulary), grouped ones 1.03. false: the former random batches.
    group_by_length: bool = True
    # Evaluation batches hold as many length-sorted rows as fit this many padded tokens
    # (rows x longest row). None: 2 x batch_size x max_seq_length, the most the former
    # 2 x batch_size rows per batch could hold, so evaluation needs no more memory than
    # before on any model and batches of short rows hold more rows (`eval_token_budget`).
    eval_tokens_per_batch: int | None = None

    # Evaluation beyond one language per example: every (first-sentence language,
    # second-sentence language) pair of the test sets, keyed test/<l1>-<l2>/accuracy, and
    # the mixed-language set (one sentence of each example in English), keyed mixed/<lang>/...
    generalized_pairs: bool = False
    mixed_language: bool = False
    # For a local directory with dev files only (the shared PAWS-X sample): cut the parallel
    # dev files by example index into disjoint train / dev / test parts (see data/loading.py).
    split_dev_files: bool = False
    mlqa_split: str = "dev"  # MLQA_SPLITS (data/squad.py)

    # Only for model == "tiny".
    tiny_hidden_size: int = 64
    tiny_layers: int = 6
    tiny_heads: int = 4
    tiny_vocab_size: int = 2000

    cache_dir: str = ".cache/xlt"
    save_model_dir: str | None = None
    # Where probing histograms go (`probing.py`); None: no probing.
    probing_dir: str | None = None

    # The objectives' settings this trial sets away from their defaults, as sorted
    # (name, value) pairs: carried by `dataclasses.replace`, compared and hashed with the rest.
    objective_settings: tuple[tuple[str, Any], ...] = ()

    def __init__(self, **values: Any):
        """The fields by name (their defaults where not given); any other name is a setting
        an objective declares (TypeError for one none declares)."""
        settings = dict(values.pop("objective_settings", ()))
        for field in dataclasses.fields(self):
            if field.name != "objective_settings":
                object.__setattr__(self, field.name, values.pop(field.name, field.default))
        for name, value in values.items():
            if registry.objective_setting(name) is None:
                raise TypeError(f"TrialConfig has no setting {name!r}")
            settings[name] = value
        changed = {k: v for k, v in settings.items() if v != registry.objective_setting(k).default}
        object.__setattr__(self, "objective_settings", tuple(sorted(changed.items())))

    def setting_value(self, name: str) -> Any:
        """A setting's value by the name `to_dict`, `--set` and a sweep's points use: a field,
        or any objective's declared setting as set here or its default (AttributeError for
        no setting). Code that reads its own objective's settings uses `objective`."""
        if name in _FIELD_DEFAULTS and name != "objective_settings":
            return getattr(self, name)
        declared = registry.objective_setting(name)
        if declared is None:
            raise AttributeError(f"TrialConfig has no setting {name!r}")
        return dict(self.objective_settings).get(name, declared.default)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> "TrialConfig":
        """Build and validate a config; unknown keys and bad values raise ConfigError."""
        known = setting_names()
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise ConfigError(
                unknown[0],
                values[unknown[0]],
                f"unknown setting; known settings: {', '.join(sorted(known))}",
            )
        coerced = {name: coerce_setting(name, value) for name, value in values.items()}
        config = cls(**coerced)
        config.validate()
        return config

    def to_dict(self) -> dict[str, Any]:
        """Every setting by name (an objective's where `setting_names(method)` lists it)."""
        values = {name: self.setting_value(name) for name in setting_names(self.method)}
        values["target_langs"] = list(self.target_langs)
        return values

    def validate(self) -> None:
        """Check every value on its own and against the settings it depends on (no file
        system access): the checks of `_CHECKS`, in order; the first failure raises."""
        for check in _CHECKS:
            check(self)


_FIELD_DEFAULTS = {f.name: f.default for f in dataclasses.fields(TrialConfig)}
# Declarations name settings and adaptations: the registry checks them against these.
registry.bind_settings(_FIELD_DEFAULTS, ADAPTATIONS)
# The declarations and XLT_PLUGINS' modules, imported now: a plugin that is missing or wrong
# stops this import, naming it, rather than the first trial.
registry.check_plugins()
_FIELD_TYPES = {f.name: str(f.type) for f in dataclasses.fields(TrialConfig)}
_TRUE, _FALSE = ("true", "1", "yes"), ("false", "0", "no")
# The numeric types, each with what its value must be (as a text that is not one is refused).
_NUMBER_TYPES = {"int": "an integer", "int | None": "an integer", "float": "a number"}


def setting_names(method: str | None = None) -> tuple[str, ...]:
    """Every trial setting, as `--help` and `to_dict` list them: TrialConfig's fields, with the
    objectives' settings after `_OBJECTIVE_SETTINGS_AFTER` (every declared one; with `method`,
    those its trials list: `registry.objective_settings`). Read at each use."""
    own = [name for name in _FIELD_DEFAULTS if name != "objective_settings"]
    at = own.index(_OBJECTIVE_SETTINGS_AFTER) + 1
    declared = [each.name for each in registry.objective_settings(method)]
    return (*own[:at], *declared, *own[at:])


def setting_type(name: str) -> str | None:
    """A setting's type as declared ("float", "int | None", ...); None for no setting."""
    declared = registry.objective_setting(name)
    return declared.type if declared is not None else _FIELD_TYPES.get(name)


def setting_default(name: str) -> Any:
    """A setting's default (its field's, or its objective's declaration's)."""
    declared = registry.objective_setting(name)
    return declared.default if declared is not None else _FIELD_DEFAULTS[name]


def coerce_setting(name: str, value: Any) -> Any:
    """A setting's value in its declared type, from what a command line or MLflow gives
    (strings, lists); raises ConfigError naming the setting when it cannot be converted."""
    if name == "target_langs":
        if isinstance(value, str):
            value = [lang.strip() for lang in value.split(",") if lang.strip()]
        return tuple(value)
    kind = setting_type(name)
    optional = kind is not None and "None" in kind
    if value is None or (optional and isinstance(value, str) and value.lower() == "none"):
        return None
    if isinstance(value, bool) and kind in _NUMBER_TYPES:  # YAML's `epochs: true` is not 1
        raise ConfigError(name, value, _NUMBER_TYPES[kind])
    if kind == "bool":
        text = str(value).lower()
        if isinstance(value, bool) or text in _TRUE + _FALSE:
            return value if isinstance(value, bool) else text in _TRUE
        raise ConfigError(name, value, "true or false")
    if kind in ("int", "int | None"):
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ConfigError(name, value, "an integer") from None
        if not number.is_integer():
            raise ConfigError(name, value, "an integer")
        return int(number)
    if kind == "float":
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ConfigError(name, value, "a number") from None
        if not math.isfinite(number):
            raise ConfigError(name, value, "a finite number")
        return number
    return value


# --- TrialConfig.validate: per-setting rules and cross-setting checks ------------------


@dataclass(frozen=True)
class _Satisfies:
    """One setting checked on its own: ConfigError(setting, value, allowed) unless
    `test(value)`; with `optional`, None passes too."""

    setting: str
    test: Callable[[Any], bool]
    allowed: str
    optional: bool = False

    def __call__(self, config: TrialConfig) -> None:
        value = getattr(config, self.setting)
        if not (self.optional and value is None) and not self.test(value):
            raise ConfigError(self.setting, value, self.allowed)


@dataclass(frozen=True)
class _OneOf:
    """One setting that names one of `choices` (a tuple, or a table derived from the
    declarations, read when checked)."""

    setting: str
    choices: tuple[str, ...] | registry.DerivedNames

    def current(self) -> tuple[str, ...]:
        return tuple(self.choices)

    def __call__(self, config: TrialConfig) -> None:
        require_one_of(self.setting, getattr(config, self.setting), self.current())


def _at_least(setting: str, low: float, optional: bool = False) -> _Satisfies:
    # "not below" rather than ">=": only a value below `low` is refused, as before.
    return _Satisfies(setting, lambda value: not value < low, f"a value >= {low}", optional)


def _positive(setting: str) -> _Satisfies:
    return _Satisfies(setting, lambda value: value > 0, "a value > 0")


def _within(setting: str, low: float, high: float, integer: bool = False) -> _Satisfies:
    # `low` is allowed for an integer (batch_size >= 1), not for a number (epochs > 0).
    if integer:
        return _Satisfies(setting, lambda v: low <= v <= high, f"a value >= {low} and <= {high}")
    return _Satisfies(setting, lambda v: low < v <= high, f"a value > {low} and <= {high}")


def _model_path_fits(model: Any) -> bool:
    if not (isinstance(model, str) and 0 < len(model) <= MAX_PATH):
        return False
    return all(len(part) <= MAX_PATH_PART for part in Path(model).parts)


def _flag(setting: str) -> _Satisfies:
    return _Satisfies(setting, lambda value: isinstance(value, bool), "true or false")


def _objective_settings_allowed(config: TrialConfig) -> None:
    # Every declared one, as every field is checked whatever the method.
    for declared in registry.objective_settings():
        declared.check(config.setting_value(declared.name))


def _local_data_has_a_directory(config: TrialConfig) -> None:
    if config.data_source == "local" and not config.data_dir:
        raise ConfigError(
            "data_dir", config.data_dir, "a directory is required when data_source='local'"
        )


def _target_langs_distinct(config: TrialConfig) -> None:
    if len(set(config.target_langs)) != len(config.target_langs):
        raise ConfigError(
            "target_langs", ",".join(config.target_langs), "distinct languages, e.g. es,de"
        )


def _test_selection_scores_accuracy(config: TrialConfig) -> None:
    # Pooled accuracy is the released rule's score; other metrics do not pool over examples.
    metric = registry.task(config.task).metric
    if config.selection_dev == SELECTION_ON_TEST and metric != "accuracy":
        raise ConfigError(
            "selection_dev",
            config.selection_dev,
            f"en or source for task={config.task} ({metric}): selection on test pools "
            "accuracy over the test sets, as the released EAR scripts do (XNLI, PAWS-X)",
        )


def _source_lang_has_training_data(config: TrialConfig) -> None:
    if config.source_lang == "en":
        return
    if config.task not in TRANSLATED_SOURCE_TASKS:
        raise ConfigError(
            "source_lang",
            config.source_lang,
            f"'en' for task={config.task} (it trains on English only; a translated "
            f"training set exists for {', '.join(TRANSLATED_SOURCE_TASKS)})",
        )
    if config.adjusted:
        raise ConfigError(
            "source_lang",
            config.source_lang,
            f"'en' with adaptation={config.adaptation} (the adjustment aligns English "
            "with the target languages)",
        )


def _split_dev_files_only_local(config: TrialConfig) -> None:
    if config.split_dev_files and config.data_source != "local":
        raise ConfigError(
            "split_dev_files",
            config.split_dev_files,
            "false unless data_source='local' (it cuts a local directory's dev files)",
        )


def _layer_within_the_tiny_model(config: TrialConfig) -> None:
    if (
        config.model == TINY_MODEL
        and "layer" in METHOD_HYPERPARAMETERS[config.method]
        and config.objective.layer > config.tiny_layers
    ):
        raise ConfigError(
            "layer",
            config.objective.layer,
            f"a layer between 1 and {config.tiny_layers} "
            f"(the tiny model has tiny_layers={config.tiny_layers})",
        )


def _parallel_data_where_needed(config: TrialConfig) -> None:
    if config.adjusted and not config.parallel_data:
        raise ConfigError(
            "parallel_data",
            config.parallel_data,
            "'synthetic', a directory of line-aligned files or 'hub:<dataset id>' "
            f"(adaptation={config.adaptation} needs parallel data)",
        )
    if config.task == "xsr" and config.model == TINY_MODEL and not config.parallel_data:
        raise ConfigError(
            "parallel_data",
            config.parallel_data,
            "parallel data for task=xsr with the tiny model "
            "(its tokenizer is trained on the parallel text)",
        )


def _pool_holds_the_sample(config: TrialConfig) -> None:
    pool = config.parallel_pool_sentences
    if pool is not None and pool < config.parallel_max_sentences:
        raise ConfigError(
            "parallel_pool_sentences",
            pool,
            f"None or a value >= parallel_max_sentences={config.parallel_max_sentences} "
            "(the sample is drawn from the pool)",
        )


def _sequence_fits_the_tiny_model(config: TrialConfig) -> None:
    if config.model == TINY_MODEL and config.max_seq_length > TINY_MAX_POSITIONS:
        raise ConfigError(
            "max_seq_length",
            config.max_seq_length,
            f"a value between 8 and {TINY_MAX_POSITIONS} (the tiny model's positions)",
        )


def _eval_budget_holds_a_row(config: TrialConfig) -> None:
    budget = config.eval_tokens_per_batch
    if budget is not None and budget < config.max_seq_length:
        raise ConfigError(
            "eval_tokens_per_batch",
            budget,
            f"None or a value >= max_seq_length={config.max_seq_length} "
            "(a batch must hold one row of the longest length)",
        )


def _heads_divide_the_hidden_size(config: TrialConfig) -> None:
    if config.tiny_hidden_size % config.tiny_heads:
        raise ConfigError(
            "tiny_heads",
            config.tiny_heads,
            f"a divisor of tiny_hidden_size={config.tiny_hidden_size}",
        )


# What `TrialConfig.validate` checks, in order (the first failure is the one reported):
# per-setting rules, and the cross-setting checks above each after the settings it reads.
# The task and method names are the registry's when checked (a late registration included).
_CHECKS = (
    _OneOf("task", TASKS),
    _OneOf("method", METHODS),
    _OneOf("adaptation", ADAPTATIONS),
    _OneOf("data_source", DATA_SOURCES),
    _local_data_has_a_directory,
    _Satisfies(
        "model",
        _model_path_fits,
        f"'{TINY_MODEL}', a hub id or a local directory (each part of its path at most "
        f"{MAX_PATH_PART} characters, the whole at most {MAX_PATH})",
    ),
    _Satisfies("target_langs", bool, "at least one target language"),
    _target_langs_distinct,
    _Satisfies("source_lang", bool, "a language code, e.g. en"),
    _source_lang_has_training_data,
    _OneOf("selection_dev", SELECTION_DEVS),
    _test_selection_scores_accuracy,
    _OneOf("mlqa_split", MLQA_SPLITS),
    _objective_settings_allowed,  # each against its declaration (objective_settings.py)
    _OneOf("synonym_lookup", SYNONYM_LOOKUPS),
    _flag("generalized_pairs"),
    _flag("mixed_language"),
    _flag("split_dev_files"),
    _flag("group_by_length"),
    _split_dev_files_only_local,
    _layer_within_the_tiny_model,
    _parallel_data_where_needed,
    _at_least("parallel_max_sentences", 10),
    _pool_holds_the_sample,
    _within("adjust_epochs", 0, MAX_EPOCHS),
    _positive("adjust_learning_rate"),
    _within("adjust_batch_size", 1, MAX_BATCH_SIZE, integer=True),
    _at_least("adjust_reg_weight", 0.0),
    _at_least("continual_alpha", 0.0),
    _at_least("continual_reg_weight", 0.0),
    _at_least("continual_pairs", 1),
    _Satisfies(
        "seed",
        lambda seed: 0 <= seed <= MAX_SEED,
        f"an integer between 0 and {MAX_SEED} (2**32 - 1)",
    ),
    _positive("learning_rate"),
    _within("batch_size", 1, MAX_BATCH_SIZE, integer=True),
    _within("epochs", 0, MAX_EPOCHS),
    _at_least("max_seq_length", 8),
    _sequence_fits_the_tiny_model,
    _Satisfies("warmup_ratio", lambda ratio: 0.0 <= ratio < 1.0, "a number in [0, 1)"),
    _at_least("weight_decay", 0.0),
    _positive("max_grad_norm"),
    _OneOf("precision", PRECISIONS),
    _at_least("evals_per_epoch", 1),
    _at_least("max_train_examples", 1, optional=True),
    _at_least("max_eval_examples", 1, optional=True),
    _eval_budget_holds_a_row,
    _at_least("tiny_hidden_size", 8),
    _at_least("tiny_layers", 1),
    _at_least("tiny_heads", 1),
    _heads_divide_the_hidden_size,
    _at_least("tiny_vocab_size", 100),
)


def _short(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def parse_assignments(assignments: list[str]) -> dict[str, str]:
    """`["beta=0.1", "layer=6"]` -> {"beta": "0.1", "layer": "6"}; refuses items without `=`."""
    parsed = {}
    for item in assignments:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError("--set", item, "KEY=VALUE, e.g. --set beta=0.1")
        parsed[key.strip()] = value.strip()
    return parsed


def allowed_values() -> dict[str, str]:
    """Per setting, what `validate` allows of it on its own (the per-setting rules of
    `_CHECKS`), in words: what `--help` lists, so the help says what is enforced."""
    allowed = {}
    for check in _CHECKS:
        if check is _objective_settings_allowed:
            allowed.update({each.name: each.allowed() for each in registry.objective_settings()})
        elif isinstance(check, _OneOf):
            allowed[check.setting] = "one of " + ", ".join(check.current())
        elif isinstance(check, _Satisfies):
            allowed[check.setting] = check.allowed
    return allowed
