"""What the XNLI and PAWS-X loaders share: a sentence-pair task read from the synthetic set,
local XTREME-layout files (see tsv.py) or the hub, each split once per process.

Every split may be in any language the source has: besides English, a training set is a
translation of the English one (ding2022 Table 5 trains on German or Russian)."""

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from xlt_core.data.examples import PairExample
from xlt_core.data.synthetic import SYNTHETIC_LANGUAGES
from xlt_core.data.tsv import LocalPairFiles
from xlt_core.errors import ConfigError, DataError, require_one_of

PAIR_SOURCES = ("synthetic", "local", "hub")
PAIR_SPLITS = ("train", "dev", "test")

PairLoader = Callable[[str, str], list[PairExample]]  # (split, lang) -> examples


@dataclass(frozen=True)
class PairTask:
    """One sentence-pair task: train, dev and test per language."""

    synthetic: PairLoader
    local: LocalPairFiles
    hub: PairLoader
    hub_languages: tuple[str, ...]
    # (source, split, lang, resolved data_dir) -> examples, read once per process.
    load_cached: Callable = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        # Bounded: a long-lived Ray worker runs many trials.
        object.__setattr__(self, "load_cached", lru_cache(maxsize=32)(self._load))

    def load(self, source: str, split: str, lang: str, data_dir: str | None) -> list[PairExample]:
        """The examples of one split in one language, copied from the cache."""
        require_one_of("source", source, PAIR_SOURCES)
        require_one_of("split", split, PAIR_SPLITS)
        # Resolving lets equivalent spellings of one directory share a cache entry.
        resolved_dir = str(require_data_dir(data_dir).resolve()) if source == "local" else None
        return list(self.load_cached(source, split, lang, resolved_dir))

    def languages(self, source: str, split: str, data_dir: str | None) -> list[str]:
        """The languages that a split has in a source, cheaply (local: a directory listing only)."""
        require_one_of("source", source, PAIR_SOURCES)
        require_one_of("split", split, PAIR_SPLITS)
        if source == "local":
            return self.local.languages(require_data_dir(data_dir), split)
        if source == "hub":
            return list(self.hub_languages)
        return list(SYNTHETIC_LANGUAGES)

    def _load(
        self, source: str, split: str, lang: str, data_dir: str | None
    ) -> tuple[PairExample, ...]:
        if source == "synthetic":
            return tuple(self.synthetic(split, lang))
        if source == "local":
            return tuple(self.local.read(Path(data_dir), split, lang))
        return tuple(self.hub(split, lang))


def require_data_dir(data_dir: str | None) -> Path:
    if data_dir is None:
        raise ConfigError("data_dir", None, "a directory is required for source 'local'")
    return Path(data_dir)


def require_hub_language(dataset: str, lang: str, languages: tuple[str, ...]) -> None:
    if lang not in languages:
        raise DataError(f"{dataset} has no language {lang!r}; available: {', '.join(languages)}")


def load_hub_pairs(
    dataset: str,
    config: str | None,
    split: str,
    columns: tuple[str, str],
    *,
    drop_unlabelled: bool = False,
) -> list[PairExample]:
    """Rows of a hub data set as examples: the two sentence columns and "label".

    drop_unlabelled skips rows whose label is -1 (the hub's mark for no gold label)."""
    from datasets import load_dataset  # slow to import; only the hub path needs it

    rows = load_dataset(dataset, config, split=split)
    return [
        PairExample(first, second, int(label))
        for first, second, label in zip(
            rows[columns[0]], rows[columns[1]], rows["label"], strict=True
        )
        if not (drop_unlabelled and label < 0)
    ]
