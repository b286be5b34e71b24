"""Synonym tables and RS-DA/EAR random synonym substitution."""

import fnmatch
import json
import random
import tomllib
from collections import Counter
from pathlib import Path

import pytest

from xlt_core.config import TrialConfig
from xlt_core.data.examples import PairExample
from xlt_core.data.loading import load_synonyms
from xlt_core.data.synonyms import (
    COUNTERFITTED_TABLE,
    augment_pair,
    augment_sentence,
    load_synonym_table,
    with_lookup,
)
from xlt_core.data.synthetic import synthetic_synonyms, synthetic_xnli
from xlt_core.errors import DataError

HAND_MADE = {
    "big": ["large", "huge"],
    "dog": ["hound"],
    "the": [],
    "runs": ["sprints", "jogs", "dashes"],
}


@pytest.fixture
def counterfitted() -> Path:
    """The real counter-fitted neighbour file that RS-DA and EAR used, as the package ships it."""
    return COUNTERFITTED_TABLE


def assert_substitutes_only_neighbours(original: str, augmented: str, table) -> None:
    original_words, augmented_words = original.split(" "), augmented.split(" ")
    assert len(augmented_words) == len(original_words)
    for word, new_word in zip(original_words, augmented_words, strict=True):
        neighbours = table.get(word, table.get(word.lower(), []))
        assert new_word == word or new_word in neighbours


def test_hand_made_table_substitutes_only_neighbours_and_keeps_other_words():
    rng = random.Random(0)
    sentence = "the big dog runs to the Big  house"
    for _ in range(50):
        copy = augment_sentence(sentence, HAND_MADE, rng)
        assert_substitutes_only_neighbours(sentence, copy, HAND_MADE)
        words = copy.split(" ")
        assert words[0] == "the" and words[4] == "to" and words[7] == "" and words[8] == "house"


def test_capitalised_word_falls_back_to_its_lower_case_entry_unless_the_lookup_is_exact():
    fallback = with_lookup(HAND_MADE, "lowercase_fallback")
    drawn = {augment_sentence("Big", fallback, random.Random(seed)) for seed in range(60)}
    assert drawn == {"Big", "large", "huge"}
    # the released code's lookup: "Big" is not a key, so it is never replaced
    exact = with_lookup(HAND_MADE, "exact")
    assert {augment_sentence("Big big", exact, random.Random(seed)) for seed in range(60)} == {
        "Big big",
        "Big large",
        "Big huge",
    }


def test_trials_read_the_table_with_their_lookup():
    base = {"method": "rs_da", "data_source": "local", "data_dir": "/nowhere"}
    default = load_synonyms(TrialConfig.from_dict(base))
    assert default.get("Good") == default.get("good") and len(default.get("good")) > 1
    exact = load_synonyms(TrialConfig.from_dict({**base, "synonym_lookup": "exact"}))
    assert exact.get("Good") is None and exact.get("good") == default.get("good")


def test_counterfitted_table_substitutes_only_neighbours(counterfitted):
    table = load_synonym_table(counterfitted)
    rng = random.Random(1)
    sentence = "The film was a good movie and all the people in the house liked it ."
    copies = [augment_sentence(sentence, table, rng) for _ in range(20)]
    for copy in copies:
        assert_substitutes_only_neighbours(sentence, copy, table)
    assert any(copy != sentence for copy in copies)


def test_augment_pair_returns_exactly_m_copies():
    pair = PairExample("the big dog", "runs", 1)
    assert len(augment_pair(pair, HAND_MADE, 7, random.Random(0))) == 7
    assert augment_pair(pair, HAND_MADE, 0, random.Random(0)) == []


def test_seeded_rng_reproduces_the_copies():
    pair = PairExample("the big dog runs", "the dog", 0)
    first = augment_pair(pair, HAND_MADE, 10, random.Random(42))
    second = augment_pair(pair, HAND_MADE, 10, random.Random(42))
    assert first == second
    assert len(set(first)) > 1


def test_draws_are_uniform_over_the_word_and_its_neighbours():
    rng = random.Random(7)
    draws = 4000
    counts = Counter(augment_sentence("runs", HAND_MADE, rng) for _ in range(draws))
    candidates = ["runs", *HAND_MADE["runs"]]
    assert set(counts) == set(candidates)
    expected = draws / len(candidates)
    assert all(0.8 * expected <= counts[candidate] <= 1.2 * expected for candidate in candidates)


def test_augment_pair_augments_both_sentences_and_keeps_the_label():
    example = PairExample("the big dog", "the dog runs", 2)
    pairs = augment_pair(example, HAND_MADE, 5, random.Random(3))
    assert len(pairs) == 5
    for pair in pairs:
        assert pair.label == 2
        assert_substitutes_only_neighbours(example.sentence1, pair.sentence1, HAND_MADE)
        assert_substitutes_only_neighbours(example.sentence2, pair.sentence2, HAND_MADE)
    assert {pair.sentence2 for pair in pairs} != {example.sentence2}


def test_synthetic_table_makes_augmentation_change_synthetic_sentences():
    table = synthetic_synonyms()
    rng = random.Random(0)
    sentences = [example.sentence1 for example in synthetic_xnli("dev", "en")]
    augmented = [augment_sentence(sentence, table, rng) for sentence in sentences]
    assert sum(new != old for new, old in zip(augmented, sentences, strict=True)) >= 0.5 * len(
        sentences
    )


def test_loads_the_real_table_once_per_path(counterfitted):
    table = load_synonym_table(counterfitted)
    assert len(table) == 49975
    assert "film" in table["movie"] and table["br"] == []
    assert load_synonym_table(str(counterfitted)) is table


def test_shipped_table_is_the_shared_copy_with_its_mit_licence(shared_data: Path):
    shared = shared_data / "synonyms" / "counterfitted_neighbors.json"
    if not shared.is_file():
        pytest.skip(f"shared copy not found at {shared}")
    assert COUNTERFITTED_TABLE.read_bytes() == shared.read_bytes()
    licence = COUNTERFITTED_TABLE.with_name("LICENSE.robinjia-certified-word-sub.txt")
    assert licence.read_text().startswith("MIT License")


def test_shipped_table_and_licence_are_package_data():
    root = Path(__file__).resolve().parents[2]
    pyproject = tomllib.loads((root / "pyproject.toml").read_text())
    patterns = pyproject["tool"]["setuptools"]["package-data"]["xlt_core"]
    package = root / "xlt_core"
    for shipped in (
        COUNTERFITTED_TABLE,
        COUNTERFITTED_TABLE.with_name("LICENSE.robinjia-certified-word-sub.txt"),
    ):
        relative = shipped.relative_to(package).as_posix()
        assert any(fnmatch.fnmatch(relative, pattern) for pattern in patterns), relative


@pytest.mark.parametrize("source", ["hub", "local"])
@pytest.mark.parametrize("method", ["ear", "rs_da"])
def test_real_data_defaults_to_the_shipped_table_without_any_setting(tmp_path, source, method):
    settings = {"method": method, "data_source": source}
    if source == "local":
        settings["data_dir"] = str(tmp_path)  # holds no synonyms file
    config = TrialConfig.from_dict(settings)
    assert config.synonym_path() == COUNTERFITTED_TABLE
    assert load_synonyms(config).table is load_synonym_table(COUNTERFITTED_TABLE)  # shared


def test_given_table_wins_and_synthetic_data_keeps_its_own(tmp_path):
    given = tmp_path / "mine.json"
    given.write_text('{"dog": ["hound"]}', encoding="utf-8")
    config = TrialConfig.from_dict({"method": "ear", "data_source": "hub", "synonyms": str(given)})
    assert load_synonyms(config) == {"dog": ["hound"]}
    assert load_synonyms(TrialConfig.from_dict({"method": "ear"})) == synthetic_synonyms()
    assert load_synonyms(TrialConfig.from_dict({"method": "adv", "data_source": "hub"})) is None


def test_missing_file_names_the_path(tmp_path):
    path = tmp_path / "absent.json"
    with pytest.raises(DataError, match="cannot read") as error:
        load_synonym_table(path)
    assert str(path) in str(error.value)


def test_invalid_json_names_the_path(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"good": ["fine"', encoding="utf-8")
    with pytest.raises(DataError, match="not valid JSON") as error:
        load_synonym_table(path)
    assert str(path) in str(error.value)


@pytest.mark.parametrize(
    ("content", "named"),
    [
        (["good", "fine"], "found a list"),
        ({"good": ["fine"], "bad": "worse", "ugly": 3}, "key 'bad'"),
        ({"good": ["fine"], "bad": ["worse", 3]}, "key 'bad'"),
    ],
)
def test_wrong_shape_names_the_path_and_first_bad_key(tmp_path, content, named):
    path = tmp_path / "shape.json"
    path.write_text(json.dumps(content), encoding="utf-8")
    with pytest.raises(DataError, match=named) as error:
        load_synonym_table(path)
    assert str(path) in str(error.value)
