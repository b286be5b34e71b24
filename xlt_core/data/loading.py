"""One entry point from a trial's settings to its examples, whatever the task and source."""

from __future__ import annotations

from xlt_core.config import TrialConfig
from xlt_core.data.examples import XNLI_LABELS, PairExample
from xlt_core.data.synonyms import load_synonym_table
from xlt_core.data.synthetic import synthetic_synonyms
from xlt_core.data.xnli import available_xnli_languages, load_xnli
from xlt_core.errors import ConfigError, DataError


def num_labels(config: TrialConfig) -> int:
    return len(XNLI_LABELS)


def load_split(config: TrialConfig, split: str, lang: str) -> list[PairExample]:
    """The examples of one split and language, cut to the configured maximum."""
    examples = load_xnli(config.data_source, split, lang, config.data_dir)
    limit = config.max_train_examples if split == "train" else config.max_eval_examples
    return list(examples[:limit]) if limit else list(examples)


def load_synonyms(config: TrialConfig) -> dict[str, list[str]] | None:
    """The neighbour table for synonym copies, or None when the method needs none."""
    if not config.uses_synonyms:
        return None
    path = config.synonym_path()
    return synthetic_synonyms() if path is None else load_synonym_table(path)


def check_data(config: TrialConfig) -> None:
    """Refuse missing languages or files before any work starts (cheap: no reading)."""
    wanted = {"train": [config.source_lang], "dev": [config.source_lang], "test": [config.source_lang, *config.target_langs]}
    for split, langs in wanted.items():
        try:
            available = available_xnli_languages(config.data_source, split, config.data_dir)
        except DataError as error:
            raise ConfigError("data_dir", config.data_dir, str(error)) from None
        missing = [lang for lang in langs if lang not in available]
        if missing:
            field = "source_lang" if split != "test" or config.source_lang in missing else "target_langs"
            where = f"data_dir={config.data_dir}" if config.data_source == "local" else f"data_source={config.data_source}"
            raise ConfigError(field, ",".join(missing), f"languages with {config.task} {split} data in {where}: {', '.join(sorted(available)) or 'none'}")
    path = config.synonym_path() if config.uses_synonyms else None
    if path is not None and not path.is_file():
        raise ConfigError("synonyms", str(path), "a JSON neighbour table {word: [neighbours]} that exists (e.g. counterfitted_neighbors.json)")
