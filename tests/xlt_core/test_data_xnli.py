"""The XNLI loaders: real local files, malformed files, language listing, hub mapping."""

from pathlib import Path

import pytest

from xlt_core.data import xnli
from xlt_core.data.examples import PairExample
from xlt_core.data.synthetic import SPLIT_SIZES, SYNTHETIC_LANGUAGES
from xlt_core.data.xnli import XNLI_LANGUAGES, available_xnli_languages, load_xnli
from xlt_core.errors import ConfigError, DataError


@pytest.fixture(autouse=True)
def fresh_cache():
    """Each test sees the files as they are now, not as an earlier test cached them."""
    xnli._XNLI.load_cached.cache_clear()
    yield
    xnli._XNLI.load_cached.cache_clear()


def write_xnli_file(data_dir: Path, name: str, text: str) -> Path:
    path = data_dir / "xnli" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_real_spanish_test_split_has_5010_examples_with_three_labels(shared_data):
    examples = load_xnli("local", "test", "es", str(shared_data))
    assert len(examples) == 5010
    assert {example.label for example in examples} == {0, 1, 2}
    assert examples[0].sentence1 and examples[0].sentence2


def test_real_english_dev_split_has_2490_examples(shared_data):
    examples = load_xnli("local", "dev", "en", str(shared_data))
    assert len(examples) == 2490
    assert {example.label for example in examples} == {0, 1, 2}


def test_real_english_train_skips_the_header(shared_data):
    examples = load_xnli("local", "train", "en", str(shared_data))
    assert len(examples) == 999
    assert examples[0].sentence1.startswith("Conceptually cream skimming")
    assert examples[0].label == 1  # neutral
    assert all(example.sentence1 != "premise" for example in examples)


def test_real_directory_lists_its_languages(shared_data):
    languages = available_xnli_languages("local", "test", str(shared_data))
    assert {"en", "es", "ru", "vi", "hi", "de", "fr"} <= set(languages)
    assert available_xnli_languages("local", "train", str(shared_data)) == ["en"]


def test_same_request_is_read_once_and_callers_get_their_own_list(shared_data):
    first = load_xnli("local", "dev", "de", str(shared_data))
    first.clear()
    second = load_xnli("local", "dev", "de", str(shared_data))
    assert len(second) == 2490
    assert xnli._XNLI.load_cached.cache_info().hits == 1


def test_header_trailing_blank_line_quotes_and_contradictory_are_handled(tmp_path):
    write_xnli_file(
        tmp_path,
        "train-en.tsv",
        'premise\thypo\tlabel\nHe said "yes\tSomeone spoke .\tentailment\n'
        "A\tB\tcontradictory\nC\tD\tneutral\r\n\n",
    )
    assert load_xnli("local", "train", "en", str(tmp_path)) == [
        PairExample('He said "yes', "Someone spoke .", 0),
        PairExample("A", "B", 2),
        PairExample("C", "D", 1),
    ]


def test_missing_file_names_the_path_and_the_layout(tmp_path):
    write_xnli_file(tmp_path, "dev-en.tsv", "a\tb\tneutral\n")
    with pytest.raises(DataError) as error:
        load_xnli("local", "dev", "xx", str(tmp_path))
    message = str(error.value)
    assert str(tmp_path / "xnli" / "dev-xx.tsv") in message
    assert "test-<lang>.tsv" in message


def test_wrong_column_count_names_path_and_line(tmp_path):
    path = write_xnli_file(tmp_path, "dev-es.tsv", "a\tb\tneutral\nonly two\tcolumns\n")
    with pytest.raises(DataError, match="3 tab-separated columns") as error:
        load_xnli("local", "dev", "es", str(tmp_path))
    assert f"{path}:2:" in str(error.value)


def test_unknown_label_names_path_line_and_allowed_labels(tmp_path):
    path = write_xnli_file(tmp_path, "test-es.tsv", "a\tb\tneutral\nc\td\tmaybe\n")
    with pytest.raises(DataError) as error:
        load_xnli("local", "test", "es", str(tmp_path))
    message = str(error.value)
    assert f"{path}:2:" in message
    assert "'maybe'" in message and "entailment, neutral, contradiction" in message


def test_missing_directory_when_listing_languages(tmp_path):
    with pytest.raises(DataError, match="XNLI directory not found"):
        available_xnli_languages("local", "dev", str(tmp_path))


def test_listing_reads_only_file_names(tmp_path):
    write_xnli_file(tmp_path, "dev-es.tsv", "not even a valid row\n")
    write_xnli_file(tmp_path, "dev-de.tsv", "")
    write_xnli_file(tmp_path, "test-ru.tsv", "")
    assert available_xnli_languages("local", "dev", str(tmp_path)) == ["de", "es"]


def test_settings_are_checked_before_any_reading(tmp_path):
    with pytest.raises(ConfigError, match="source"):
        load_xnli("ftp", "dev", "en")
    with pytest.raises(ConfigError, match="split"):
        load_xnli("synthetic", "validation", "en")
    with pytest.raises(ConfigError, match="data_dir"):
        load_xnli("local", "dev", "en")
    with pytest.raises(DataError, match="train-es.tsv"):
        load_xnli("local", "train", "es", str(tmp_path))


def test_synthetic_source_delegates_to_the_generator():
    assert len(load_xnli("synthetic", "dev", "ru")) == SPLIT_SIZES["dev"]
    assert available_xnli_languages("synthetic", "test") == list(SYNTHETIC_LANGUAGES)
    assert available_xnli_languages("synthetic", "train") == list(SYNTHETIC_LANGUAGES)
    assert (
        available_xnli_languages("hub", "dev") == list(XNLI_LANGUAGES) and len(XNLI_LANGUAGES) == 15
    )


def test_hub_source_maps_splits_and_drops_unlabelled_pairs(monkeypatch):
    """The hub cannot be reached here, so a stand-in records what would be requested."""
    datasets = pytest.importorskip("datasets")
    requests = []

    def fake_load_dataset(path, name=None, split=None):
        requests.append((path, name, split))
        return {"premise": ["p1", "p2"], "hypothesis": ["h1", "h2"], "label": [2, -1]}

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    assert load_xnli("hub", "dev", "sw") == [PairExample("p1", "h1", 2)]
    load_xnli("hub", "test", "sw")
    load_xnli("hub", "train", "en")
    assert requests == [
        ("facebook/xnli", "sw", "validation"),
        ("facebook/xnli", "sw", "test"),
        ("nyu-mll/multi_nli", None, "train"),
    ]
    with pytest.raises(DataError, match="no language 'xx'"):
        load_xnli("hub", "dev", "xx")
