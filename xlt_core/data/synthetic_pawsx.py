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
across languages like the real PAWS-X; train is English or rendered in a pseudo-language
(a translated training set).
"""

import random
from dataclasses import replace
from functools import lru_cache

from xlt_core.data.examples import PairExample
from xlt_core.data.synthetic import (  # the grammar, lexicons and drawing are shared, not copied
    Meaning,
    balanced_split,
    realised_pairs,
)

# Distinct from the NLI set's split seeds, so the two tasks draw different sentences.
_SPLIT_SEEDS = {"train": 4004, "dev": 5005, "test": 6006}


def synthetic_pawsx(split: str, lang: str) -> list[PairExample]:
    """The synthetic paraphrase pairs of one split in one (pseudo-)language; sizes as the
    synthetic NLI set's (SPLIT_SIZES), labels balanced, output deterministic."""
    return realised_pairs(_english_split, split, lang)


@lru_cache(maxsize=32)  # bounded: a Ray worker runs many trials
def _english_split(split: str) -> tuple:
    return balanced_split(_SPLIT_SEEDS[split], split, 2, _counterpart)


def _counterpart(meaning: Meaning, label: int, rng: random.Random) -> Meaning:
    """The meaning itself for a paraphrase (rendered anew, so the wording differs), else a swap."""
    return meaning if label == 1 else _swapped(meaning, rng)


def _swapped(meaning: Meaning, rng: random.Random) -> Meaning:
    """Swap the subject and object nouns, or the two nouns' adjectives when both exist."""
    both_adjectives = meaning.subject_adjective is not None and meaning.object_adjective is not None
    if both_adjectives and rng.random() < 0.5:
        return replace(
            meaning,
            subject_adjective=meaning.object_adjective,
            object_adjective=meaning.subject_adjective,
        )
    return replace(meaning, subject=meaning.direct_object, direct_object=meaning.subject)
