"""A small deterministic PAWS-X-like paraphrase set generated in code (the offline default).

PAWS pairs have high word overlap whatever their label: a non-paraphrase is made by
swapping words, so the bag of words does not give the label away. Here, over the
synthetic NLI set's grammar and vocabulary:

- paraphrase (label 1): the same meaning rendered again with synonyms drawn anew;
- not a paraphrase (label 0): the same words with two roles swapped: subject and object
  nouns ("the tall man buys the car" / "the tall car buys the man"), or, when both are
  present, the subject's and the object's adjectives.

Label ids follow PAWS-X (1 = paraphrase). The derived pseudo-languages es, de, ru come
from the synthetic NLI set's lexicons ("de" verb-final), so dev and test are parallel
across languages like the real PAWS-X; train exists only in English.
"""

import random
from dataclasses import replace
from functools import cache

from xlt_core.data.examples import PairExample
from xlt_core.data.synthetic import (  # the grammar and lexicons are shared, not copied
    SPLIT_SIZES,
    SYNTHETIC_LANGUAGES,
    _Meaning,
    _random_meaning,
    _realise,
    _render,
)
from xlt_core.errors import ConfigError, DataError

# Distinct from the NLI set's split seeds, so the two tasks draw different sentences.
_SPLIT_SEEDS = {"train": 4004, "dev": 5005, "test": 6006}


def synthetic_pawsx(split: str, lang: str) -> list[PairExample]:
    """The synthetic paraphrase pairs of one split in one (pseudo-)language; sizes as the
    synthetic NLI set's (SPLIT_SIZES), labels balanced, output deterministic."""
    if split not in SPLIT_SIZES:
        raise ConfigError("split", split, f"one of {', '.join(SPLIT_SIZES)}")
    if lang not in SYNTHETIC_LANGUAGES:
        raise DataError(
            f"synthetic data has no language {lang!r}; available: {', '.join(SYNTHETIC_LANGUAGES)}"
        )
    if split == "train" and lang != "en":
        raise DataError(f"synthetic train data exists only for 'en', not {lang!r}")
    return [
        PairExample(_realise(first, lang), _realise(second, lang), label)
        for first, second, label in _english_split(split)
    ]


@cache
def _english_split(split: str) -> tuple:
    rng = random.Random(_SPLIT_SEEDS[split])
    labels = [index % 2 for index in range(SPLIT_SIZES[split])]
    rng.shuffle(labels)
    return tuple(_english_pair(label, rng) for label in labels)


def _english_pair(label: int, rng: random.Random) -> tuple:
    """Draw meanings until the two renderings differ (a pair is never a verbatim copy)."""
    while True:
        meaning = _random_meaning(rng)
        other = meaning if label == 1 else _swapped(meaning, rng)
        first, second = _render(meaning, rng), _render(other, rng)
        if first != second:
            return first, second, label


def _swapped(meaning: _Meaning, rng: random.Random) -> _Meaning:
    """Swap the subject and object nouns, or the two nouns' adjectives when both exist."""
    both_adjectives = meaning.subject_adjective is not None and meaning.object_adjective is not None
    if both_adjectives and rng.random() < 0.5:
        return replace(
            meaning,
            subject_adjective=meaning.object_adjective,
            object_adjective=meaning.subject_adjective,
        )
    return replace(meaning, subject=meaning.direct_object, direct_object=meaning.subject)
