"""The synthetic multilingual NLI set: determinism, sizes, balance, parallelism, distance."""

import hashlib
import os
import subprocess
import sys
from collections import Counter

import pytest

from xlt_core.data.synthetic import (
    DEV_SIZE,
    SPLIT_SIZES,
    SYNTHETIC_LANGUAGES,
    TEST_SIZE,
    TRAIN_SIZE,
    _lexicon,
    synthetic_synonyms,
    synthetic_xnli,
)
from xlt_core.errors import DataError

DERIVED_LANGUAGES = [lang for lang in SYNTHETIC_LANGUAGES if lang != "en"]

# Printed by a fresh interpreter with another hash seed, to prove nothing depends on hash().
FINGERPRINT_SCRIPT = """
import hashlib
from xlt_core.data.synthetic import SYNTHETIC_LANGUAGES, synthetic_xnli
parts = [repr(synthetic_xnli("train", "en"))]
parts += [
    repr(synthetic_xnli(split, lang)) for split in ("dev", "test") for lang in SYNTHETIC_LANGUAGES
]
print(hashlib.sha256("".join(parts).encode()).hexdigest())
"""


def fingerprint_here() -> str:
    parts = [repr(synthetic_xnli("train", "en"))]
    parts += [
        repr(synthetic_xnli(split, lang))
        for split in ("dev", "test")
        for lang in SYNTHETIC_LANGUAGES
    ]
    return hashlib.sha256("".join(parts).encode()).hexdigest()


def test_two_calls_return_equal_examples():
    assert synthetic_xnli("test", "de") == synthetic_xnli("test", "de")


def test_output_is_identical_in_a_fresh_process():
    environment = dict(os.environ, PYTHONHASHSEED="12345")
    result = subprocess.run(
        [sys.executable, "-c", FINGERPRINT_SCRIPT],
        capture_output=True,
        text=True,
        env=environment,
        check=True,
    )
    assert result.stdout.strip() == fingerprint_here()


def test_sizes_match_the_declared_constants():
    assert SPLIT_SIZES == {"train": TRAIN_SIZE, "dev": DEV_SIZE, "test": TEST_SIZE}
    assert (TRAIN_SIZE, DEV_SIZE, TEST_SIZE) == (2000, 300, 500)
    assert len(synthetic_xnli("train", "en")) == TRAIN_SIZE
    for lang in SYNTHETIC_LANGUAGES:
        assert len(synthetic_xnli("dev", lang)) == DEV_SIZE
        assert len(synthetic_xnli("test", lang)) == TEST_SIZE


@pytest.mark.parametrize("split", ["train", "dev", "test"])
def test_labels_are_balanced(split):
    examples = synthetic_xnli(split, "en")
    counts = Counter(example.label for example in examples)
    assert set(counts) == {0, 1, 2}
    assert all(count >= 0.25 * len(examples) for count in counts.values())


def test_hypothesis_always_differs_from_premise():
    assert all(example.sentence1 != example.sentence2 for example in synthetic_xnli("train", "en"))


def test_train_exists_in_every_language_and_unknown_languages_are_refused():
    assert len(synthetic_xnli("train", "es")) == len(synthetic_xnli("train", "en"))
    with pytest.raises(DataError, match="no language 'fr'"):
        synthetic_xnli("dev", "fr")


@pytest.mark.parametrize("lang", DERIVED_LANGUAGES)
def test_derived_languages_are_parallel_to_english(lang):
    for split in ("dev", "test"):
        english, derived = synthetic_xnli(split, "en"), synthetic_xnli(split, lang)
        assert [example.label for example in derived] == [example.label for example in english]
        # Word-by-word translation keeps the number of words of every sentence.
        assert [len(example.sentence1.split()) for example in derived] == [
            len(example.sentence1.split()) for example in english
        ]
        # Cognates can leave a short es sentence unchanged, but not many.
        assert sum(
            d.sentence1 != e.sentence1 for d, e in zip(derived, english, strict=True)
        ) >= 0.9 * len(english)


def shared_token_fraction(lang: str) -> float:
    english_tokens = {
        word for example in synthetic_xnli("test", "en") for word in example.sentence1.split()
    }
    tokens = [
        word for example in synthetic_xnli("test", lang) for word in example.sentence1.split()
    ]
    return sum(token in english_tokens for token in tokens) / len(tokens)


def test_overlap_with_english_shrinks_with_distance():
    assert shared_token_fraction("es") > shared_token_fraction("de") > shared_token_fraction("ru")
    assert shared_token_fraction("ru") == 0


def test_german_stand_in_puts_the_verb_last():
    german_words = _lexicon("de")
    for english, german in zip(
        synthetic_xnli("dev", "en"), synthetic_xnli("dev", "de"), strict=True
    ):
        words = english.sentence1.split()
        verb = words[
            words.index("the", 1) - 1
        ]  # English order: the [adjective] subject verb the ...
        assert german.sentence1.split()[-1] == german_words[verb]


def test_synonym_table_has_the_counterfitted_format():
    table = synthetic_synonyms()
    assert 60 <= len(table) <= 150
    assert all(
        word == word.lower() and isinstance(neighbours, list) for word, neighbours in table.items()
    )
    assert any(neighbours == [] for neighbours in table.values())
    # Neighbourhood is symmetric and never lists the word itself.
    for word, neighbours in table.items():
        assert word not in neighbours
        assert all(word in table[neighbour] for neighbour in neighbours)


def test_every_english_word_is_in_the_table_and_entailments_use_synonyms():
    table = synthetic_synonyms()
    examples = synthetic_xnli("train", "en")
    assert all(
        word in table
        for example in examples
        for word in f"{example.sentence1} {example.sentence2}".split()
    )
    restated = [
        example
        for example in examples
        if example.label == 0
        and any(
            neighbour in example.sentence1.split()
            for word in example.sentence2.split()
            if word not in example.sentence1.split()
            for neighbour in table[word]
        )
    ]
    assert len(restated) >= 0.3 * sum(example.label == 0 for example in examples)
