"""WikiANN (PAN-X) NER: the hub's `unimelb-nlp/wikiann`, a local XTREME download, or the
synthetic set (`synthetic_ner.py`, the offline default).

Local layout: `<data_dir>/panx/<split>-<lang>.tsv`, one `token<TAB>BIO-tag` a line and a
blank line between sentences. XTREME's local test files carry no labels, so locally the
zero-shot evaluation of a target language reads its dev file (the data README's advice);
on the hub it reads the `test` split. English dev selects the model.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from xlt_core.data.examples import NER_LABELS, TaggedSentence
from xlt_core.data.synthetic_ner import synthetic_ner, synthetic_ner_languages
from xlt_core.errors import DataError

_LABEL_IDS = {name: i for i, name in enumerate(NER_LABELS)}
HUB_ID = "unimelb-nlp/wikiann"
_HUB_SPLITS = {"train": "train", "dev": "validation", "test": "test"}
# Which local file each split reads (test files of the XTREME download have no labels).
_LOCAL_FILES = {"train": "train", "dev": "dev", "test": "dev"}


def load_ner(
    source: str, split: str, lang: str, data_dir: str | None = None
) -> list[TaggedSentence]:
    if source == "synthetic":
        return synthetic_ner(split, lang)
    if source == "local":
        return list(_read_local(Path(data_dir) / "panx" / f"{_LOCAL_FILES[split]}-{lang}.tsv"))
    return list(_load_hub(split, lang))


def available_ner_languages(source: str, split: str, data_dir: str | None) -> list[str] | None:
    """Languages with data for a split: the synthetic set's, or local files (a directory
    listing); None for the hub (not listable offline: checked on loading)."""
    if source == "hub":
        return None
    if source == "synthetic":
        return synthetic_ner_languages(split)
    prefix = f"{_LOCAL_FILES[split]}-"
    return sorted(
        path.stem[len(prefix) :] for path in (Path(data_dir) / "panx").glob(f"{prefix}*.tsv")
    )


@lru_cache(maxsize=32)  # bounded: a Ray worker runs many trials
def _read_local(path: Path) -> tuple[TaggedSentence, ...]:
    if not path.is_file():
        raise DataError(
            f"NER file not found: {path}; the local layout expects "
            "<data_dir>/panx/<split>-<lang>.tsv with token<TAB>BIO-tag lines"
        )
    sentences, words, tags = [], [], []
    for line_number, line in enumerate(path.read_text(encoding="utf-8-sig").split("\n"), start=1):
        line = line.rstrip("\r")
        if not line.strip():
            if words:
                sentences.append(TaggedSentence(tuple(words), tuple(tags)))
                words, tags = [], []
            continue
        token, sep, tag = line.rpartition("\t")
        if not sep or tag not in _LABEL_IDS:
            raise DataError(
                f"{path}:{line_number}: expected token<TAB>tag with tag one of "
                f"{', '.join(NER_LABELS)}, got {line!r}"
            )
        words.append(token)
        tags.append(_LABEL_IDS[tag])
    if words:
        sentences.append(TaggedSentence(tuple(words), tuple(tags)))
    if not sentences:
        raise DataError(f"{path}: no sentences")
    return tuple(sentences)


@lru_cache(maxsize=32)  # bounded: a Ray worker runs many trials
def _load_hub(split: str, lang: str) -> tuple[TaggedSentence, ...]:
    from datasets import load_dataset

    rows = load_dataset(HUB_ID, lang, split=_HUB_SPLITS[split])
    return tuple(
        TaggedSentence(tuple(words), tuple(tags))
        for words, tags in zip(rows["tokens"], rows["ner_tags"], strict=True)
    )
