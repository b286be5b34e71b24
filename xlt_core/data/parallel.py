"""Parallel sentences for the adjustment stage: line-aligned local files, an OPUS-style hub
data set, or the synthetic data's own translations.

`parallel_data` (a trial setting) names the source:

- `synthetic`: English training sentences of the synthetic NLI set with their word-by-word
  translations into the synthetic pseudo-languages (es, de, ru);
- `hub:<dataset id>`: a hub data set with a `translation` column of `{lang: sentence}` dicts
  (the OPUS layout, e.g. `hub:Helsinki-NLP/opus-100`, whose configs are named `en-vi`);
- a local directory holding line-aligned files `<name>.<source_lang>` and `<name>.<target_lang>`
  (one sentence a line, e.g. `opensubtitles-en-vi/en-vi.en` and `en-vi.vi`), searched
  recursively, so `../shared/data/parallel` finds every language pair below it.

`parallel_targets` lists a trial's target languages that have parallel data, without reading
it; `check_parallel` refuses an adaptation with none (the pre-flight check).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from xlt_core.config import TrialConfig
from xlt_core.data.synthetic import SYNTHETIC_LANGUAGES, synthetic_parallel
from xlt_core.errors import ConfigError, DataError

SYNTHETIC = "synthetic"
HUB_PREFIX = "hub:"
# Words and punctuation marks apart, as BERT's pre-tokenizer splits them, so that "mom ."
# and "mom." give the aligner the same word.
_WORD = re.compile(r"\w+|[^\w\s]")


@dataclass(frozen=True)
class ParallelCorpus:
    """Sentence pairs of one language pair, as text; pairs with an empty side are dropped."""

    source_lang: str
    target_lang: str
    source: tuple[str, ...]
    target: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.source)

    def fingerprint(self) -> str:
        digest = hashlib.sha256(f"{self.source_lang}-{self.target_lang}\n".encode())
        for source, target in zip(self.source, self.target):
            digest.update(f"{source}\t{target}\n".encode())
        return digest.hexdigest()[:24]


def is_local_parallel(spec: str | None) -> bool:
    """Whether `spec` names a local directory (rather than the synthetic or a hub source)."""
    return bool(spec) and spec != SYNTHETIC and not spec.startswith(HUB_PREFIX)


def split_words(sentence: str) -> list[str]:
    """Words and punctuation marks of a sentence (the units that get aligned)."""
    return _WORD.findall(sentence)


def load_parallel(
    spec: str, source_lang: str, target_lang: str, max_sentences: int | None = None
) -> ParallelCorpus:
    """The first `max_sentences` usable pairs of `spec` (see the module docstring)."""
    source, target = _load_cached(spec, source_lang, target_lang)
    kept = [(s, t) for s, t in zip(source, target) if split_words(s) and split_words(t)][
        :max_sentences
    ]
    if not kept:
        raise DataError(
            f"parallel data {spec!r} holds no non-empty {source_lang}-{target_lang} sentence pairs"
        )
    return ParallelCorpus(
        source_lang, target_lang, tuple(s for s, _ in kept), tuple(t for _, t in kept)
    )


def parallel_languages(spec: str, source_lang: str) -> list[str]:
    """Target languages `spec` pairs with `source_lang`, cheaply (no file is read); the hub
    cannot be listed offline, so any language is accepted there and checked on loading."""
    if spec == SYNTHETIC:
        return [lang for lang in SYNTHETIC_LANGUAGES if lang != source_lang]
    if spec.startswith(HUB_PREFIX):
        return ["*"]
    return sorted({target for target, _ in _local_pairs(Path(spec), source_lang)})


def parallel_targets(config: TrialConfig) -> list[str]:
    """Target languages of the trial that have parallel data with the source language."""
    available = parallel_languages(config.parallel_data, config.source_lang)
    return [lang for lang in config.target_langs if "*" in available or lang in available]


def check_parallel(config: TrialConfig) -> None:
    """Refuse an adaptation without parallel data for any target language (cheap)."""
    if config.adjusted and not parallel_targets(config):
        raise ConfigError(
            "parallel_data",
            config.parallel_data,
            f"parallel {config.source_lang}-X data for at least one of "
            f"target_langs={','.join(config.target_langs)}",
        )


@cache
def _load_cached(
    spec: str, source_lang: str, target_lang: str
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    if spec == SYNTHETIC:
        pairs = synthetic_parallel(target_lang)
        return tuple(s for s, _ in pairs), tuple(t for _, t in pairs)
    if spec.startswith(HUB_PREFIX):
        return _load_hub(spec[len(HUB_PREFIX) :], source_lang, target_lang)
    return _read_local(Path(spec), source_lang, target_lang)


def _local_pairs(directory: Path, source_lang: str) -> list[tuple[str, Path]]:
    """(target language, source file) for each `<name>.<source_lang>` with a sibling
    `<name>.<lang>`."""
    if not directory.is_dir():
        raise DataError(
            f"parallel data directory not found: {directory}; expected line-aligned files "
            "<name>.<lang> such as en-vi.en and en-vi.vi"
        )
    pairs = []
    for source_file in sorted(directory.rglob(f"*.{source_lang}")):
        for sibling in sorted(source_file.parent.glob(f"{source_file.stem}.*")):
            lang = sibling.suffix[1:]
            if sibling != source_file and lang.isalpha():
                pairs.append((lang, source_file))
    return pairs


def _read_local(
    directory: Path, source_lang: str, target_lang: str
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    matches = [
        source for lang, source in _local_pairs(directory, source_lang) if lang == target_lang
    ]
    if not matches:
        raise DataError(
            f"no line-aligned {source_lang}-{target_lang} files (<name>.{source_lang} beside "
            f"<name>.{target_lang}) under {directory}"
        )
    if len(matches) > 1:
        raise DataError(
            f"several {source_lang}-{target_lang} file pairs under {directory}: "
            f"{', '.join(map(str, matches))}; point parallel_data at one of their directories"
        )
    source_file = matches[0]
    target_file = source_file.with_suffix(f".{target_lang}")
    source, target = _read_lines(source_file), _read_lines(target_file)
    if len(source) != len(target):
        raise DataError(
            f"{source_file} has {len(source)} lines but {target_file} has {len(target)}: "
            "line-aligned files must have as many lines"
        )
    return tuple(source), tuple(target)


def _read_lines(path: Path) -> list[str]:
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise DataError(f"{path}: not UTF-8 text ({error})") from error
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r").strip() for line in lines]


def _load_hub(
    dataset_id: str, source_lang: str, target_lang: str
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """An OPUS-style data set: config `<a>-<b>` (languages sorted), column `translation`."""
    from datasets import load_dataset  # slow to import; only the hub path needs it

    rows = load_dataset(dataset_id, "-".join(sorted((source_lang, target_lang))), split="train")
    if "translation" not in rows.column_names:
        raise DataError(
            f"hub data set {dataset_id} has no 'translation' column (columns: "
            f"{', '.join(rows.column_names)})"
        )
    translations = rows["translation"]
    return tuple(t[source_lang] for t in translations), tuple(t[target_lang] for t in translations)
