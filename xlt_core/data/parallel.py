"""Parallel sentences for the adjustment stage: line-aligned local files, a hub data set, or
the synthetic data's own translations.

`parallel_data` (a trial setting) names the source:

- `synthetic`: English training sentences of the synthetic NLI set with their word-by-word
  translations into the synthetic pseudo-languages (es, de, ru);
- `hub:<dataset id>`: a hub data set in one of two layouts: OPUS-style
  configs `<a>-<b>` (languages sorted) with a `translation` column of `{lang: sentence}`
  dicts (e.g. `hub:Helsinki-NLP/opus-100`), or sentence-transformers' mined bitexts, configs
  `en-<lang>` with columns `english` and `non_english` (e.g.
  `hub:sentence-transformers/parallel-sentences-wikimatrix`, WikiMatrix, efimov2023's corpus);
- a local directory holding line-aligned files `<name>.<source_lang>` and `<name>.<target_lang>`
  (one sentence a line, e.g. `opensubtitles-en-vi/en-vi.en` and `en-vi.vi`), searched
  recursively, so `../shared/data/parallel` finds every language pair below it.

The pool and the sample (efimov2023 L125: "For each run we sample 30K sentences from a set of
250K parallel (WikiMatrix) sentences word-aligned with fast_align"): `load_parallel` reads
the pool, the first `parallel_pool_sentences` usable pairs of the corpus in its order; the pool is
word-aligned as a whole (`data/word_alignment.py`), and `sample_indices` draws the trial's
`parallel_max_sentences` pairs from it with the trial's seed, a new sample per seed.

Words (`split_words`, the units eflomal aligns) are cut as mBERT's own pre-tokenizer cuts
text (`tokenizers`' BertNormalizer + BertPreTokenizer, as in bert-base-multilingual-cased's
tokenizer.json): at whitespace, with every punctuation mark (Unicode P*, and ASCII symbols)
a word of its own; combining marks (M*) stay with their letters, so Devanagari, Arabic or
Thai words stay whole; CJK ideographs are one word each. A run of a script written without
spaces that is not CJK ideographs (Thai, Japanese kana) stays one word between spaces and
punctuation, as mBERT sees it; segmenting Thai into words would need a dictionary segmenter,
and none of efimov2023's languages (es, ru, vi, hi) needs one. `WORD_SPLITTING` versions
this rule in the alignment caches' keys.

`parallel_targets` lists a trial's target languages that have parallel data, without reading
it; `check_parallel` refuses an adaptation with none (the pre-flight check).
"""

from __future__ import annotations

import hashlib
import itertools
import random
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tokenizers.normalizers import BertNormalizer
from tokenizers.pre_tokenizers import BertPreTokenizer

from xlt_core.config import TrialConfig
from xlt_core.data.synthetic import SYNTHETIC_LANGUAGES, synthetic_parallel
from xlt_core.errors import ConfigError, DataError

SYNTHETIC = "synthetic"
HUB_PREFIX = "hub:"
# The word-splitting rule (module docstring); a new rule needs a new version, so that no
# alignment cached under the old one is reused.
WORD_SPLITTING = "bert-pretokenizer-1"
# mBERT (cased)'s normaliser: control characters removed, spaces around CJK ideographs, no
# lower-casing or accent stripping; then its pre-tokenizer (whitespace and punctuation).
_NORMALIZER = BertNormalizer(
    clean_text=True, handle_chinese_chars=True, strip_accents=False, lowercase=False
)
_PRE_TOKENIZER = BertPreTokenizer()
# The hub ids read in sentence-transformers' layout (config `en-<lang>`, columns `english`
# and `non_english`); any other id is read in the OPUS layout.
SENTENCE_TRANSFORMERS = "sentence-transformers/parallel-sentences-"


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

    def select(self, indices: list[int]) -> "ParallelCorpus":
        return ParallelCorpus(
            self.source_lang,
            self.target_lang,
            tuple(self.source[i] for i in indices),
            tuple(self.target[i] for i in indices),
        )


def is_local_parallel(spec: str | None) -> bool:
    """Whether `spec` names a local directory (rather than the synthetic or a hub source)."""
    return bool(spec) and spec != SYNTHETIC and not spec.startswith(HUB_PREFIX)


def split_words(sentence: str) -> list[str]:
    """Words and punctuation marks of a sentence (the units that get aligned), as mBERT's
    pre-tokenizer cuts them (see the module docstring)."""
    return [
        word for word, _ in _PRE_TOKENIZER.pre_tokenize_str(_NORMALIZER.normalize_str(sentence))
    ]


def load_parallel(
    spec: str, source_lang: str, target_lang: str, max_sentences: int | None = None
) -> ParallelCorpus:
    """The first `max_sentences` usable pairs of `spec` (see the module docstring)."""
    source, target = _load_cached(spec, source_lang, target_lang, max_sentences)
    # Cut as the pairs are read: splitting every pair of a large corpus took most of an
    # adjusted trial's set-up when it needs a few hundred.
    usable = ((s, t) for s, t in zip(source, target) if split_words(s) and split_words(t))
    kept = list(itertools.islice(usable, max_sentences))
    if not kept:
        raise DataError(
            f"parallel data {spec!r} holds no non-empty {source_lang}-{target_lang} sentence pairs"
        )
    return ParallelCorpus(
        source_lang, target_lang, tuple(s for s, _ in kept), tuple(t for _, t in kept)
    )


def sample_indices(pool_size: int, sample_size: int, seed: int) -> list[int]:
    """The trial's sample of a pool: `sample_size` distinct pair indices drawn with `seed`,
    in pool order; the whole pool when it holds no more than that."""
    if pool_size <= sample_size:
        return list(range(pool_size))
    return sorted(random.Random(seed).sample(range(pool_size), sample_size))


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


def stage_targets(config: TrialConfig) -> dict[str, tuple[str, ...]]:
    """An adjusted trial's language stages (`xlt_core/language_stages.py`): per target
    language with parallel data, the targets its stage evaluates: itself, then the targets
    without parallel data (no encoder is adjusted for them)."""
    paired = parallel_targets(config)
    unpaired = tuple(lang for lang in config.target_langs if lang not in paired)
    return {lang: (lang, *unpaired) for lang in paired}


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
    spec: str, source_lang: str, target_lang: str, rows: int | None
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    if spec == SYNTHETIC:
        pairs = synthetic_parallel(target_lang)
        return tuple(s for s, _ in pairs), tuple(t for _, t in pairs)
    if spec.startswith(HUB_PREFIX):
        return _load_hub(spec[len(HUB_PREFIX) :], source_lang, target_lang, rows)
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
    dataset_id: str, source_lang: str, target_lang: str, rows: int | None
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The train split's first 2 x `rows` rows (all when None), in the data set's layout."""
    from datasets import load_dataset  # slow to import; only the hub path needs it

    if dataset_id.startswith(SENTENCE_TRANSFORMERS):
        return _load_english_columns(dataset_id, source_lang, target_lang, rows)
    table = load_dataset(dataset_id, "-".join(sorted((source_lang, target_lang))), split="train")
    _require_columns(dataset_id, table, ("translation",))
    translations = _first_rows(table, rows)["translation"]
    return tuple(t[source_lang] for t in translations), tuple(t[target_lang] for t in translations)


def _load_english_columns(
    dataset_id: str, source_lang: str, target_lang: str, rows: int | None
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """sentence-transformers' bitexts: config `en-<lang>`, columns `english`, `non_english`."""
    from datasets import load_dataset

    if source_lang != "en":
        raise DataError(
            f"hub data set {dataset_id} pairs English with other languages; "
            f"it has no {source_lang}-{target_lang} pairs"
        )
    table = load_dataset(dataset_id, f"en-{target_lang}", split="train")
    _require_columns(dataset_id, table, ("english", "non_english"))
    table = _first_rows(table, rows)
    return tuple(table["english"]), tuple(table["non_english"])


def _first_rows(table, rows: int | None):
    # Twice the pool's rows, of which the pairs with an empty side are dropped after.
    return table if rows is None else table.select(range(min(len(table), 2 * rows)))


def _require_columns(dataset_id: str, table, columns: tuple[str, ...]) -> None:
    missing = [name for name in columns if name not in table.column_names]
    if missing:
        raise DataError(
            f"hub data set {dataset_id} has no {', '.join(map(repr, missing))} column "
            f"(columns: {', '.join(table.column_names)})"
        )
