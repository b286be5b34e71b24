"""What a trial is evaluated on: dev, every test language, and optionally the generalized
cross-lingual pairs and the mixed-language set.

Each set is keyed (split, lang) and becomes metrics `<split>/<lang>/accuracy` and the
artifact `predictions/<split>-<lang>.json`:

- `dev/en`, and `dev/<source>` when the source language's dev selects (`selection_dev`);
  English dev is always evaluated, so configurations of different source languages compare
  on one set;
- `test/<lang>` for English, the source and every target language (`config.test_langs`);
- generalized_pairs: `test/<l1>-<l2>` for every ordered pair of different tested
  languages, sentence 1 in l1 and sentence 2 in l2 (Huang et al. 2021's generalized
  setting). The diagonal `test/<l>-<l>` is the ordinary `test/<l>` set, example for
  example, so it is not evaluated twice;
- mixed_language: `mixed/<lang>` for every target language but English, each example with
  one of its sentences (drawn with MIXED_LANGUAGE_SEED, the same for every trial so runs
  pair up) replaced by its English original (the mixed-language XNLI of Efimov et al.
  2023). English is the reference whatever the source language: the test sets are
  translations of the English originals.
"""

from __future__ import annotations

import random
from typing import Sequence

from xlt_core import registry
from xlt_core.config import TrialConfig
from xlt_core.data.examples import PairExample
from xlt_core.data.loading import load_split
from xlt_core.errors import DataError

MIXED_LANGUAGE_SEED = 0
# The language the test sets are translated from: the reference of the mixed-language set
# and of the alignment check.
REFERENCE_LANG = "en"


def pair_language(first: str, second: str) -> str:
    """The `lang` of a generalized pair: the first sentence's language first (`en-es`)."""
    return f"{first}-{second}"


def evaluation_sets(config: TrialConfig) -> dict[tuple[str, str], list[PairExample]]:
    """Every evaluation set of a trial, keyed (split, lang); English dev comes first."""
    dev_langs = dict.fromkeys((REFERENCE_LANG, config.dev_lang))
    sets = {("dev", lang): load_split(config, "dev", lang) for lang in dev_langs}
    test = {lang: load_split(config, "test", lang) for lang in config.test_langs}
    sets.update({("test", lang): examples for lang, examples in test.items()})
    if config.generalized_pairs or config.mixed_language:
        check_aligned(config, test)
    if config.generalized_pairs:
        for first in test:
            for second in test:
                if first != second:
                    sets[("test", pair_language(first, second))] = cross_lingual_pairs(
                        test[first], test[second]
                    )
    if config.mixed_language:
        for lang in config.target_langs:
            if lang != REFERENCE_LANG:
                sets[("mixed", lang)] = mixed_language_pairs(
                    test[REFERENCE_LANG], test[lang], MIXED_LANGUAGE_SEED
                )
    return sets


def check_aligned(config: TrialConfig, test: dict[str, list[PairExample]]) -> None:
    """Refuse test sets that cannot be line-aligned translations of the English ones:
    a different length, or (where the dataset keeps labels) a label that differs."""
    reference = test[REFERENCE_LANG]
    for lang in test:
        if lang == REFERENCE_LANG:
            continue
        if len(test[lang]) != len(reference):
            raise DataError(
                f"{config.task} test-{lang} holds {len(test[lang])} examples and "
                f"test-{REFERENCE_LANG} {len(reference)}: generalized and mixed-language "
                "pairs need line-aligned test files"
            )
        if not registry.task(config.task).translations_keep_labels:
            continue
        for line, (a, b) in enumerate(zip(reference, test[lang]), start=1):
            if a.label != b.label:
                raise DataError(
                    f"{config.task} test-{lang} is not aligned with test-{REFERENCE_LANG}: "
                    f"example {line} is labelled {b.label} in {lang} and {a.label} in "
                    f"{REFERENCE_LANG} ({config.task}'s translations keep every label)"
                )


def cross_lingual_pairs(
    first: Sequence[PairExample], second: Sequence[PairExample]
) -> list[PairExample]:
    """Generalized cross-lingual pairs: sentence 1 from `first`, sentence 2 from `second`.

    The two sets must be parallel (example i is the same pair, translated), as the XNLI
    and PAWS-X dev/test sets are. An example whose label differs between the two sets is
    left out, its pair having no agreed label: the PAWS-X translations relabel about 1% of
    pairs (32 of the 2,000 English/German dev pairs); XNLI's labels agree line by line.
    With `first is second` this is the ordinary evaluation set, example for example.
    """
    _check_parallel(first, second)
    return [
        PairExample(a.sentence1, b.sentence2, a.label)
        for a, b in zip(first, second)
        if a.label == b.label
    ]


def mixed_language_pairs(
    english: Sequence[PairExample], target: Sequence[PairExample], seed: int
) -> list[PairExample]:
    """The mixed-language set: each target example with one of its two sentences replaced
    by its English original. Which one is drawn per example index with `seed`, so the
    draw is the same for every language; examples whose labels disagree are left out."""
    _check_parallel(english, target)
    rng = random.Random(seed)
    mixed = []
    for en, other in zip(english, target):
        english_first = rng.random() < 0.5
        if en.label == other.label:
            mixed.append(
                PairExample(en.sentence1, other.sentence2, en.label)
                if english_first
                else PairExample(other.sentence1, en.sentence2, en.label)
            )
    return mixed


def _check_parallel(first: Sequence[PairExample], second: Sequence[PairExample]) -> None:
    if len(first) != len(second):
        raise DataError(
            "generalized and mixed-language pairs need parallel test sets; "
            f"they hold {len(first)} and {len(second)} examples"
        )
