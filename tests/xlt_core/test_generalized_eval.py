"""Generalized cross-lingual pairs and the mixed-language set."""

import pytest
import torch

from xlt_core.config import TrialConfig
from xlt_core.data.examples import PairExample
from xlt_core.data.loading import load_split
from xlt_core.errors import DataError
from xlt_core.models import load_model
from xlt_core.tasks.pair_encoding_and_scoring import encode_pairs, predict, score_predictions
from xlt_core.tasks.pair_evaluation_sets import (
    MIXED_LANGUAGE_SEED,
    cross_lingual_pairs,
    evaluation_sets,
    mixed_language_pairs,
)

CONFIG = {
    "target_langs": "es,de,ru",
    "max_eval_examples": 120,
    "tiny_layers": 1,
    "tiny_vocab_size": 300,
    "generalized_pairs": True,
    "mixed_language": True,
}


@pytest.fixture(scope="module")
def sets(tmp_path_factory):
    config = TrialConfig.from_dict({**CONFIG, "cache_dir": str(tmp_path_factory.mktemp("cache"))})
    return config, evaluation_sets(config)


def test_keys_cover_every_ordered_pair_of_different_languages(sets):
    config, evaluation = sets
    languages = ["en", "es", "de", "ru"]
    pairs = {lang for split, lang in evaluation if split == "test" and "-" in lang}
    assert pairs == {f"{a}-{b}" for a in languages for b in languages if a != b}
    assert {lang for split, lang in evaluation if split == "mixed"} == {"es", "de", "ru"}
    assert list(evaluation)[0] == ("dev", "en")


def test_a_pair_takes_sentence1_from_the_first_language_and_sentence2_from_the_second(sets):
    config, evaluation = sets
    english, spanish = evaluation[("test", "en")], evaluation[("test", "es")]
    for index, example in enumerate(evaluation[("test", "en-es")]):
        assert example == PairExample(
            english[index].sentence1, spanish[index].sentence2, english[index].label
        )


def test_diagonal_equals_the_per_language_evaluation(sets, tmp_path):
    """test/es-es built as a generalized pair is test/es example for example, and a
    (randomly initialised) model scores the same on both, prediction for prediction."""
    config, evaluation = sets
    train = load_split(config, "train", "en")[:200]
    model, tokenizer = load_model(config, 3, [t for e in train for t in (e.sentence1, e.sentence2)])
    for lang in ("en", "es", "ru"):
        ordinary = evaluation[("test", lang)]
        diagonal = cross_lingual_pairs(ordinary, ordinary)
        assert diagonal == ordinary
        scored = [
            score_predictions(
                predict(
                    model,
                    encode_pairs(tokenizer, examples, 64),
                    32,
                    tokenizer.pad_token_id,
                    torch.device("cpu"),
                ),
                [e.label for e in examples],
            )
            for examples in (ordinary, diagonal)
        ]
        assert scored[0] == scored[1]
        assert 0.0 < scored[0]["value"] < 1.0


def test_mixed_set_replaces_one_sentence_by_english_with_a_fixed_draw(sets):
    config, evaluation = sets
    english = evaluation[("test", "en")]
    sides = {}
    for lang in ("es", "de", "ru"):
        target, mixed = evaluation[("test", lang)], evaluation[("mixed", lang)]
        assert mixed == mixed_language_pairs(english, target, MIXED_LANGUAGE_SEED)
        side = []
        for index, example in enumerate(mixed):
            first_english = example == PairExample(
                english[index].sentence1, target[index].sentence2, target[index].label
            )
            second_english = example == PairExample(
                target[index].sentence1, english[index].sentence2, target[index].label
            )
            assert first_english != second_english
            side.append(first_english)
        sides[lang] = side
    assert sides["es"] == sides["de"] == sides["ru"]  # the same draw for every language
    assert 0.3 < sum(sides["es"]) / len(sides["es"]) < 0.7  # both sentences get replaced


def test_pairs_refuse_sets_of_different_sizes_and_drop_examples_whose_labels_disagree():
    one = [PairExample("a", "b", 0), PairExample("c", "d", 1), PairExample("e", "f", 1)]
    other = [PairExample("A", "B", 0), PairExample("C", "D", 0), PairExample("E", "F", 1)]
    with pytest.raises(DataError, match="3 and 1 examples"):
        cross_lingual_pairs(one, other[:1])
    assert cross_lingual_pairs(one, other) == [PairExample("a", "B", 0), PairExample("e", "F", 1)]
    assert len(mixed_language_pairs(one, other, seed=0)) == 2


def test_without_the_settings_only_the_ordinary_sets_are_built(tmp_path):
    config = TrialConfig.from_dict(
        {"target_langs": "es", "max_eval_examples": 10, "cache_dir": str(tmp_path)}
    )
    assert list(evaluation_sets(config)) == [("dev", "en"), ("test", "en"), ("test", "es")]


def _xnli_copy_with_lines_deleted(shared, target, first, count):
    data = target / "data"
    (data / "xnli").mkdir(parents=True)
    for name in ("train-en.tsv", "dev-en.tsv", "test-en.tsv", "test-es.tsv"):
        lines = (shared / "xnli" / name).read_text().splitlines(keepends=True)
        if name == "test-es.tsv":
            del lines[first : first + count]
        (data / "xnli" / name).write_text("".join(lines))
    return data


def test_misaligned_xnli_test_files_are_refused_before_any_work(shared_data, tmp_path):
    """10 lines deleted in the middle of test-es.tsv: the lengths differ, so the sweep's
    pre-flight read (`read_data`) refuses it, naming both files."""
    from xlt_core.preflight import read_data

    data = _xnli_copy_with_lines_deleted(shared_data, tmp_path, 2000, 10)
    config = TrialConfig.from_dict(
        {
            "data_source": "local",
            "data_dir": str(data),
            "target_langs": "es",
            "generalized_pairs": True,
        }
    )
    with pytest.raises(DataError, match="test-es holds 5000 examples and test-en 5010"):
        read_data(config)


def test_xnli_labels_that_differ_at_a_line_mean_misalignment(shared_data, tmp_path):
    """Cut to the same length (max_eval_examples), the shifted file's labels disagree with
    English at the first deleted line: XNLI keeps every label, so that is misalignment."""
    data = _xnli_copy_with_lines_deleted(shared_data, tmp_path, 100, 10)
    config = TrialConfig.from_dict(
        {
            "data_source": "local",
            "data_dir": str(data),
            "target_langs": "es",
            "mixed_language": True,
            "max_eval_examples": 1000,
        }
    )
    with pytest.raises(
        DataError, match="test-es is not aligned with test-en: example 101 is labelled"
    ):
        evaluation_sets(config)
