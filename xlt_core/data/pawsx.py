"""PAWS-X from one of three sources: the synthetic set, a local XTREME download, or the hub.

Zero-shot protocol: the model trains on English only (PAWS-X's English train split); dev
and test exist per language and are parallel across languages (example i is the same
pair, human-translated). Labels: 1 = paraphrase, 0 = not.
"""

from functools import cache
from pathlib import Path

from xlt_core.data.examples import PAWSX_LABELS, PairExample
from xlt_core.data.synthetic import SYNTHETIC_LANGUAGES
from xlt_core.data.synthetic_pawsx import synthetic_pawsx
from xlt_core.data.tsv import local_languages, read_pair_tsv
from xlt_core.errors import ConfigError, DataError, require_one_of

PAWSX_LANGUAGES = ("de", "en", "es", "fr", "ja", "ko", "zh")
PAWSX_SOURCES = ("synthetic", "local", "hub")
PAWSX_SPLITS = ("train", "dev", "test")
HUB_ID = "google-research-datasets/paws-x"

_LABEL_IDS = {str(label_id): label_id for label_id in range(len(PAWSX_LABELS))}
_HUB_SPLITS = {"train": "train", "dev": "validation", "test": "test"}
LOCAL_LAYOUT = (
    "<data_dir>/pawsx/train-en.tsv, <data_dir>/pawsx/dev-<lang>.tsv and <data_dir>/pawsx/test-<lang>.tsv, "
    "each row sentence1<TAB>sentence2<TAB>label with label 0 or 1 (an optional header line)"
)


def load_pawsx(
    source: str, split: str, lang: str, data_dir: str | None = None
) -> list[PairExample]:
    """The PAWS-X examples of one split in one language, read once per process."""
    require_one_of("source", source, PAWSX_SOURCES)
    require_one_of("split", split, PAWSX_SPLITS)
    if split == "train" and lang != "en":
        raise DataError(f"zero-shot PAWS-X trains on English only, not {lang!r}")
    if source == "local" and data_dir is None:
        raise ConfigError("data_dir", None, "a directory is required for source 'local'")
    resolved_dir = str(Path(data_dir).resolve()) if source == "local" else None
    return list(_load_cached(source, split, lang, resolved_dir))


def available_pawsx_languages(source: str, split: str, data_dir: str | None = None) -> list[str]:
    """The languages that a split has in a source, cheaply (local: a directory listing only)."""
    require_one_of("source", source, PAWSX_SOURCES)
    require_one_of("split", split, PAWSX_SPLITS)
    if source == "local":
        if data_dir is None:
            raise ConfigError("data_dir", None, "a directory is required for source 'local'")
        languages = local_languages(Path(data_dir) / "pawsx", split, "PAWS-X", LOCAL_LAYOUT)
    elif source == "hub":
        languages = list(PAWSX_LANGUAGES)
    else:
        languages = list(SYNTHETIC_LANGUAGES)
    return [lang for lang in languages if split != "train" or lang == "en"]


@cache
def _load_cached(
    source: str, split: str, lang: str, data_dir: str | None
) -> tuple[PairExample, ...]:
    if source == "synthetic":
        return tuple(synthetic_pawsx(split, lang))
    if source == "local":
        path = Path(data_dir) / "pawsx" / f"{split}-{lang}.tsv"
        return tuple(
            read_pair_tsv(path, _LABEL_IDS, "sentence1, sentence2, label", "PAWS-X", LOCAL_LAYOUT)
        )
    return tuple(_load_hub(split, lang))


def _load_hub(split: str, lang: str) -> list[PairExample]:
    if lang not in PAWSX_LANGUAGES:
        raise DataError(
            f"{HUB_ID} has no language {lang!r}; available: {', '.join(PAWSX_LANGUAGES)}"
        )
    from datasets import load_dataset  # slow to import; only the hub path needs it

    rows = load_dataset(HUB_ID, lang, split=_HUB_SPLITS[split])
    return [
        PairExample(first, second, int(label))
        for first, second, label in zip(
            rows["sentence1"], rows["sentence2"], rows["label"], strict=True
        )
    ]
