"""XNLI from one of three sources: the synthetic set, a local XTREME download, or the hub.

Only English has training data (MultiNLI, as in XNLI's zero-shot setting); dev and test
exist per language.
"""

from functools import cache
from pathlib import Path

from xlt_core.data.examples import XNLI_LABELS, PairExample
from xlt_core.data.synthetic import SYNTHETIC_LANGUAGES, synthetic_xnli
from xlt_core.data.tsv import local_languages, read_pair_tsv
from xlt_core.errors import ConfigError, DataError, require_one_of

XNLI_LANGUAGES = (
    "ar",
    "bg",
    "de",
    "el",
    "en",
    "es",
    "fr",
    "hi",
    "ru",
    "sw",
    "th",
    "tr",
    "ur",
    "vi",
    "zh",
)
XNLI_SOURCES = ("synthetic", "local", "hub")
XNLI_SPLITS = ("train", "dev", "test")

# MultiNLI's own files spell the third label "contradictory" (XTREME renames it); accept both.
_LABEL_IDS = {name: label_id for label_id, name in enumerate(XNLI_LABELS)} | {"contradictory": 2}
_HUB_SPLITS = {"dev": "validation", "test": "test"}
_LOCAL_LAYOUT = (
    "<data_dir>/xnli/train-en.tsv (a header line, then rows), <data_dir>/xnli/dev-<lang>.tsv "
    "and <data_dir>/xnli/test-<lang>.tsv (no header), each row premise<TAB>hypothesis<TAB>label "
    "with label one of entailment, neutral, contradiction"
)


def load_xnli(source: str, split: str, lang: str, data_dir: str | None = None) -> list[PairExample]:
    """The XNLI examples of one split in one language; labels are ids into XNLI_LABELS.

    source "local" reads the XTREME layout under data_dir; each (source, split, lang,
    data_dir) is read once per process and the result copied to the caller.
    """
    require_one_of("source", source, XNLI_SOURCES)
    require_one_of("split", split, XNLI_SPLITS)
    if split == "train" and lang != "en":
        raise DataError(f"XNLI has training data only in English (MultiNLI), not {lang!r}")
    # Resolving lets equivalent spellings of one directory share a cache entry.
    resolved_dir = str(_require_data_dir(data_dir).resolve()) if source == "local" else None
    return list(_load_cached(source, split, lang, resolved_dir))


def available_xnli_languages(source: str, split: str, data_dir: str | None = None) -> list[str]:
    """The languages that a split has in a source, cheaply (local: a directory listing only).

    Meant to validate requested languages before any training starts.
    """
    require_one_of("source", source, XNLI_SOURCES)
    require_one_of("split", split, XNLI_SPLITS)
    if source == "local":
        languages = local_languages(
            _require_data_dir(data_dir) / "xnli", split, "XNLI", _LOCAL_LAYOUT
        )
    elif source == "hub":
        languages = list(XNLI_LANGUAGES)
    else:
        languages = list(SYNTHETIC_LANGUAGES)
    # Matches load_xnli, which refuses non-English training data whatever a directory holds.
    return [lang for lang in languages if split != "train" or lang == "en"]


def _require_data_dir(data_dir: str | None) -> Path:
    if data_dir is None:
        raise ConfigError("data_dir", None, "a directory is required for source 'local'")
    return Path(data_dir)


@cache
def _load_cached(
    source: str, split: str, lang: str, data_dir: str | None
) -> tuple[PairExample, ...]:
    if source == "synthetic":
        return tuple(synthetic_xnli(split, lang))
    if source == "local":
        path = Path(data_dir) / "xnli" / f"{split}-{lang}.tsv"
        return tuple(
            read_pair_tsv(path, _LABEL_IDS, "premise, hypothesis, label", "XNLI", _LOCAL_LAYOUT)
        )
    return tuple(_load_hub(split, lang))


def _load_hub(split: str, lang: str) -> list[PairExample]:
    """facebook/xnli for dev/test, nyu-mll/multi_nli for English train (parquet, no scripts)."""
    if lang not in XNLI_LANGUAGES:
        raise DataError(
            f"facebook/xnli has no language {lang!r}; available: {', '.join(XNLI_LANGUAGES)}"
        )
    from datasets import load_dataset  # slow to import; only the hub path needs it

    if split == "train":
        rows = load_dataset("nyu-mll/multi_nli", split="train")
    else:
        rows = load_dataset("facebook/xnli", lang, split=_HUB_SPLITS[split])
    # MultiNLI marks pairs without a gold label with -1.
    return [
        PairExample(premise, hypothesis, int(label))
        for premise, hypothesis, label in zip(
            rows["premise"], rows["hypothesis"], rows["label"], strict=True
        )
        if label >= 0
    ]
