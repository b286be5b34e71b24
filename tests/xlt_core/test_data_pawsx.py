"""PAWS-X: the synthetic default, local XTREME-layout files, the dev-file split, the hub."""

from collections import Counter

import pytest

from xlt_core.config import TrialConfig
from xlt_core.data import pawsx
from xlt_core.data.examples import NER_LABELS, PairExample
from xlt_core.data.loading import DEV_FILE_PARTS, check_data, load_split
from xlt_core.data.pawsx import available_pawsx_languages, load_pawsx
from xlt_core.data.synthetic import SPLIT_SIZES, SYNTHETIC_LANGUAGES, _lexicon
from xlt_core.data.synthetic_pawsx import synthetic_pawsx
from xlt_core.errors import ConfigError, DataError
from xlt_core.tasks import TASKS


@pytest.fixture(autouse=True)
def fresh_cache():
    pawsx._PAWSX.load_cached.cache_clear()
    yield
    pawsx._PAWSX.load_cached.cache_clear()


def write(data_dir, name, text):
    path = data_dir / "pawsx" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_synthetic_pawsx_is_balanced_parallel_and_deterministic():
    english = synthetic_pawsx("test", "en")
    assert (
        len(english) == SPLIT_SIZES["test"]
        and len(synthetic_pawsx("train", "en")) == SPLIT_SIZES["train"]
    )
    assert Counter(e.label for e in english) == {0: 250, 1: 250}
    assert synthetic_pawsx("test", "en") == english
    for lang in SYNTHETIC_LANGUAGES:
        assert [e.label for e in synthetic_pawsx("dev", lang)] == [
            e.label for e in synthetic_pawsx("dev", "en")
        ]
    # The pseudo-languages reuse the synthetic NLI lexicons word for word.
    spanish = synthetic_pawsx("test", "es")
    lexicon = _lexicon("es")
    assert all(
        sorted(lexicon[w] for w in en.sentence1.split()) == sorted(es.sentence1.split())
        for en, es in zip(english, spanish)
    )
    assert len(synthetic_pawsx("train", "de")) == SPLIT_SIZES["train"]


def test_synthetic_non_paraphrases_keep_the_words_but_swap_roles():
    """Like PAWS, a non-paraphrase is built by swapping words, not by changing them."""
    for example in synthetic_pawsx("dev", "en"):
        assert example.sentence1 != example.sentence2
        if example.label == 0:
            assert len(example.sentence1.split()) == len(example.sentence2.split())


def test_real_pawsx_dev_file(shared_data):
    examples = load_pawsx("local", "dev", "en", str(shared_data))
    assert len(examples) == 2000 and {e.label for e in examples} == {0, 1}
    assert examples[0].sentence1.startswith("From the merger of the Four Rivers Council")
    assert set(available_pawsx_languages("local", "dev", str(shared_data))) >= {
        "de",
        "en",
        "es",
        "fr",
        "ja",
        "ko",
        "zh",
    }
    assert available_pawsx_languages("local", "train", str(shared_data)) == []


def test_real_directory_without_train_file_is_refused_with_the_way_out(shared_data):
    config = TrialConfig.from_dict(
        {
            "task": "pawsx",
            "data_source": "local",
            "data_dir": str(shared_data),
            "target_langs": "de",
        }
    )
    with pytest.raises(ConfigError) as error:
        check_data(config)
    assert (
        error.value.field == "data_dir"
        and "pawsx/train-en.tsv" in str(error.value)
        and "split_dev_files=true" in str(error.value)
    )


def test_dev_file_split_gives_disjoint_parallel_parts(tmp_path):
    rows = "".join(f"s1 {i}\ts2 {i}\t{i % 2}\n" for i in range(10))
    write(tmp_path, "dev-en.tsv", rows)
    write(tmp_path, "dev-de.tsv", rows.replace("s1", "de1").replace("s2", "de2"))
    config = TrialConfig.from_dict(
        {
            "task": "pawsx",
            "data_source": "local",
            "data_dir": str(tmp_path),
            "target_langs": "de",
            "split_dev_files": True,
        }
    )
    check_data(config)
    train, dev = load_split(config, "train", "en"), load_split(config, "dev", "en")
    test_en, test_de = load_split(config, "test", "en"), load_split(config, "test", "de")
    assert [e.sentence1 for e in train] == [f"s1 {i}" for i in range(6)]
    assert [e.sentence1 for e in dev] == ["s1 6", "s1 7"]
    assert [e.sentence1 for e in test_de] == ["de1 8", "de1 9"] and len(test_en) == 2
    assert DEV_FILE_PARTS == {"train": (0.0, 0.6), "dev": (0.6, 0.8), "test": (0.8, 1.0)}
    write(tmp_path, "dev-fr.tsv", rows.split("\n", 1)[1])  # one example short
    pawsx._PAWSX.load_cached.cache_clear()
    with pytest.raises(DataError, match="dev-fr has 9 examples, dev-en has 10"):
        load_split(TrialConfig.from_dict({**config.to_dict(), "target_langs": "fr"}), "test", "fr")


def test_local_files_header_bad_label_and_missing_file(tmp_path):
    write(tmp_path, "train-en.tsv", "sentence1\tsentence2\tlabel\na\tb\t1\nc\td\t0\n")
    assert load_pawsx("local", "train", "en", str(tmp_path)) == [
        PairExample("a", "b", 1),
        PairExample("c", "d", 0),
    ]
    path = write(tmp_path, "test-es.tsv", "a\tb\t1\nc\td\t2\n")
    with pytest.raises(DataError, match="unknown label '2'; allowed: 0, 1") as error:
        load_pawsx("local", "test", "es", str(tmp_path))
    assert f"{path}:2:" in str(error.value)
    with pytest.raises(DataError, match="PAWS-X file not found"):
        load_pawsx("local", "test", "xx", str(tmp_path))
    with pytest.raises(DataError, match="train-es.tsv"):
        load_pawsx("local", "train", "es", str(tmp_path))


def test_hub_source_maps_splits(monkeypatch):
    datasets = pytest.importorskip("datasets")
    requests = []

    def fake_load_dataset(path, name=None, split=None):
        requests.append((path, name, split))
        return {"sentence1": ["a"], "sentence2": ["b"], "label": [1]}

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    assert load_pawsx("hub", "dev", "ja") == [PairExample("a", "b", 1)]
    load_pawsx("hub", "test", "ja")
    load_pawsx("hub", "train", "en")
    assert requests == [
        ("google-research-datasets/paws-x", "ja", "validation"),
        ("google-research-datasets/paws-x", "ja", "test"),
        ("google-research-datasets/paws-x", "en", "train"),
    ]
    with pytest.raises(DataError, match="no language 'ru'"):
        load_pawsx("hub", "dev", "ru")


def test_task_sets_the_number_of_labels():
    # The declaration's labels, the one place a task's labels are read (NER's too).
    for task, count in {"pawsx": 2, "xnli": 3, "ner": len(NER_LABELS)}.items():
        assert TASKS[task].num_labels(TrialConfig.from_dict({"task": task})) == count
