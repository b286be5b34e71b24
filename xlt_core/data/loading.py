"""One entry point from a trial's settings to its examples, whatever the task and source."""

from __future__ import annotations

from xlt_core import registry
from xlt_core.config import TrialConfig
from xlt_core.data.examples import PairExample
from xlt_core.data.synonyms import load_synonym_table, scaled_table, with_lookup
from xlt_core.data.synthetic import synthetic_synonyms
from xlt_core.errors import ConfigError, DataError

# split_dev_files: the parallel dev files cut by example index into three disjoint parts.
# Train and dev (model selection) are English only; test is every language. Example i is
# the same pair in every language, so no test pair, nor any translation of it, is trained
# or selected on, and the selection set is not the training set.
DEV_FILE_PARTS = {"train": (0.0, 0.6), "dev": (0.6, 0.8), "test": (0.8, 1.0)}


def _loader(config: TrialConfig):
    """The pair task's loader (source, split, lang, data_dir) -> examples, as declared."""
    return registry.resolve(registry.task(config.task), "loader")


def _lister(config: TrialConfig):
    """The pair task's language lister (source, split, data_dir) -> languages, as declared."""
    return registry.resolve(registry.task(config.task), "lister")


def load_split(config: TrialConfig, split: str, lang: str) -> list[PairExample]:
    """The examples of one split and language, cut to the configured maximum."""
    if config.split_dev_files:
        examples = _dev_file_part(config, split, lang)
    else:
        examples = _loader(config)(config.data_source, split, lang, config.data_dir)
    limit = config.max_train_examples if split == "train" else config.max_eval_examples
    return list(examples[:limit]) if limit else list(examples)


def _dev_file_part(config: TrialConfig, split: str, lang: str) -> list[PairExample]:
    load = _loader(config)
    examples = load(config.data_source, "dev", lang, config.data_dir)
    size = len(load(config.data_source, "dev", config.source_lang, config.data_dir))
    if len(examples) != size:
        raise DataError(
            f"split_dev_files needs parallel dev files: {config.task} dev-{lang} has "
            f"{len(examples)} examples, dev-{config.source_lang} has {size}"
        )
    start, end = DEV_FILE_PARTS[split]
    return examples[round(start * size) : round(end * size)]


def load_synonyms(config: TrialConfig) -> dict[str, list[str]] | None:
    """The neighbour table for synonym copies, or None when the method needs none."""
    if not config.uses_synonyms:
        return None
    path = config.synonym_path()
    # The synthetic table in the training language: a translated training set's words.
    table = synthetic_synonyms(config.source_lang) if path is None else load_synonym_table(path)
    # By name: a study setting (config.STUDY_SETTINGS) of every objective that uses synonyms,
    # the whole table (its default) where one declares no fraction.
    scale = config.setting_value("dictionary_scale")
    return with_lookup(scaled_table(table, scale), config.synonym_lookup)


def check_data(config: TrialConfig) -> None:
    """Refuse missing languages or files before any work starts (cheap: no reading)."""
    wanted = {
        "train": [config.source_lang],
        "dev": list(dict.fromkeys(("en", config.dev_lang))),
        "test": list(config.test_langs),
    }
    for split, langs in wanted.items():
        file_split = "dev" if config.split_dev_files else split
        try:
            available = _lister(config)(config.data_source, file_split, config.data_dir)
        except DataError as error:
            raise ConfigError("data_dir", config.data_dir, str(error)) from None
        missing = [lang for lang in langs if lang not in available]
        if split == "train" and missing and config.data_source == "local":
            raise ConfigError(
                "data_dir",
                config.data_dir,
                f"no {config.task}/train-{config.source_lang}.tsv in it; "
                "give a directory with the training file, or set split_dev_files=true to cut "
                "the dev files into disjoint train/dev/test parts",
            )
        if missing:
            field = (
                "target_langs"
                if split == "test" and set(missing) <= set(config.target_langs)
                else "source_lang"
            )
            where = (
                f"data_dir={config.data_dir}"
                if config.data_source == "local"
                else f"data_source={config.data_source}"
            )
            raise ConfigError(
                field,
                ",".join(missing),
                f"languages with {config.task} {file_split} data in {where}: "
                f"{', '.join(sorted(available)) or 'none'}",
            )
