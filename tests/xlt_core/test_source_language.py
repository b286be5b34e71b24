"""Training on a translated training set (ding2022 Table 5): `source_lang` reads the
training split of its language from every source, English dev selects unless
`selection_dev=source`, English is always tested and no language twice, the generalized and
mixed-language sets keep English as their reference, and configurations name their source."""

import pytest
from tiny_trials import TINY_TRIAL

from sweeps import ear_source_language
from sweeps.spec.experiment import experiment_spec
from sweeps.spec.trial_contract import trial_config
from xlt_core.config import TrialConfig
from xlt_core.data import pawsx, xnli
from xlt_core.data.examples import PairExample
from xlt_core.data.loading import check_data, load_synonyms
from xlt_core.data.pawsx import load_pawsx
from xlt_core.data.synthetic import _lexicon, synthetic_synonyms, synthetic_xnli
from xlt_core.data.synthetic_pawsx import synthetic_pawsx
from xlt_core.data.xnli import load_xnli
from xlt_core.errors import ConfigError
from xlt_core.reporting import ListReporter
from xlt_core.tasks import TASKS
from xlt_core.tasks.pair_evaluation_sets import (
    MIXED_LANGUAGE_SEED,
    evaluation_sets,
    mixed_language_pairs,
)
from xlt_core.trial import run_trial

SMALL = {"max_train_examples": 20, "max_eval_examples": 12}


def _config(**settings) -> TrialConfig:
    return TrialConfig.from_dict({"task": "xnli", **SMALL, **settings})


def _words_in(lang: str, english: str) -> list[str]:
    return sorted(_lexicon(lang)[word] for word in english.split())


# Reading the source language's training set.


@pytest.mark.parametrize("generate", [synthetic_xnli, synthetic_pawsx])
@pytest.mark.parametrize("lang", ["de", "ru"])
def test_synthetic_training_set_is_the_english_one_rendered_in_the_source(generate, lang):
    english, translated = generate("train", "en"), generate("train", lang)
    assert [e.label for e in translated] == [e.label for e in english]
    assert all(
        _words_in(lang, en.sentence2) == sorted(tr.sentence2.split())
        for en, tr in zip(english, translated)
    )
    assert translated[0].sentence1 != english[0].sentence1


def _write(directory, name: str, rows: list[tuple[str, str, str]], header: bool = False) -> None:
    lines = (["premise\thypothesis\tlabel"] if header else []) + ["\t".join(r) for r in rows]
    (directory / name).write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def local_xnli(tmp_path):
    """A local XNLI folder with a German training file and en/de/es dev and test files."""
    folder = tmp_path / "xnli"
    folder.mkdir()
    _write(folder, "train-en.tsv", [("an english premise", "a hypothesis", "neutral")], True)
    _write(folder, "train-de.tsv", [("eine Prämisse", "eine Hypothese", "contradiction")], True)
    for lang in ("en", "de", "es"):
        for split in ("dev", "test"):
            _write(folder, f"{split}-{lang}.tsv", [(f"{split} {lang}", "h", "entailment")] * 3)
    return tmp_path


def test_local_training_set_is_read_from_train_of_the_source_language(local_xnli):
    config = _config(
        data_source="local", data_dir=str(local_xnli), source_lang="de", target_langs="es"
    )
    check_data(config)
    assert TASKS["xnli"].load_training(config) == [
        PairExample("eine Prämisse", "eine Hypothese", 2)
    ]


def test_a_missing_training_file_is_refused_naming_it(local_xnli):
    config = _config(
        data_source="local", data_dir=str(local_xnli), source_lang="es", target_langs="de"
    )
    with pytest.raises(ConfigError, match="no xnli/train-es.tsv"):
        check_data(config)


def test_a_source_language_without_data_is_refused_listing_the_available_ones():
    with pytest.raises(ConfigError) as error:
        check_data(_config(source_lang="fr"))
    assert error.value.field == "source_lang" and "de, en, es, ru" in str(error.value)


@pytest.fixture
def hub_requests(monkeypatch):
    """datasets.load_dataset answered by a tiny in-memory data set; returns the requests."""
    datasets = pytest.importorskip("datasets")
    requests = []

    def fake_load_dataset(path, name=None, split=None):
        requests.append((path, name, split))
        columns = ("sentence1", "sentence2") if "paws" in path else ("premise", "hypothesis")
        rows = {columns[0]: [f"{name} a"], columns[1]: [f"{name} b"], "label": [1]}
        return datasets.Dataset.from_dict(rows)

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    for cache in (xnli._XNLI.load_cached, pawsx._PAWSX.load_cached):
        cache.cache_clear()
    yield requests
    for cache in (xnli._XNLI.load_cached, pawsx._PAWSX.load_cached):
        cache.cache_clear()


def test_hub_training_set_is_the_translated_train_split(hub_requests):
    assert load_xnli("hub", "train", "de") == [PairExample("de a", "de b", 1)]
    load_xnli("hub", "train", "en")
    assert load_pawsx("hub", "train", "de") == [PairExample("de a", "de b", 1)]
    assert hub_requests == [
        ("facebook/xnli", "de", "train"),
        ("nyu-mll/multi_nli", None, "train"),  # English stays MultiNLI
        ("google-research-datasets/paws-x", "de", "train"),
    ]


# Dev selection and the evaluated languages.


def test_english_dev_selects_by_default_and_each_language_is_tested_once():
    config = _config(source_lang="de", target_langs="es,de,ru")
    assert config.selection_metric() == "dev/en/accuracy"
    sets = evaluation_sets(config)
    assert list(sets) == [
        ("dev", "en"),
        ("test", "en"),
        ("test", "de"),
        ("test", "es"),
        ("test", "ru"),
    ]


def test_the_source_dev_selects_when_asked_and_english_dev_is_still_evaluated():
    config = _config(source_lang="ru", selection_dev="source", target_langs="es")
    assert config.selection_metric() == "dev/ru/accuracy"
    assert [key for key in evaluation_sets(config) if key[0] == "dev"] == [
        ("dev", "en"),
        ("dev", "ru"),
    ]


def test_an_english_source_evaluates_as_before():
    sets = evaluation_sets(_config(target_langs="es,de", selection_dev="source"))
    assert list(sets) == [("dev", "en"), ("test", "en"), ("test", "es"), ("test", "de")]


def test_generalized_and_mixed_sets_keep_english_as_their_reference():
    config = _config(
        source_lang="de", target_langs="es,de", generalized_pairs=True, mixed_language=True
    )
    sets = evaluation_sets(config)
    assert {lang for split, lang in sets if split == "mixed"} == {"es", "de"}
    assert sets[("mixed", "de")] == mixed_language_pairs(
        sets[("test", "en")], sets[("test", "de")], MIXED_LANGUAGE_SEED
    )
    pairs = {lang for split, lang in sets if split == "test" and "-" in lang}
    assert pairs == {"en-de", "de-en", "en-es", "es-en", "de-es", "es-de"}


def test_a_trial_trains_on_the_source_and_logs_both_dev_sets(tmp_path):
    config = _config(
        **TINY_TRIAL,
        source_lang="de",
        selection_dev="source",
        target_langs="es",
        method="ear",
        layer=2,
        max_seq_length=48,
        cache_dir=str(tmp_path),
    )
    result = run_trial(config, ListReporter())
    assert {"dev/en/accuracy", "dev/de/accuracy"} <= set(result.metrics)
    assert {f"test/{lang}/accuracy" for lang in ("en", "de", "es")} <= set(result.metrics)


def test_synthetic_synonyms_are_rendered_in_the_source_language():
    english, german = synthetic_synonyms(), synthetic_synonyms("de")
    lexicon = _lexicon("de")
    assert german[lexicon["car"]] == [lexicon[word] for word in english["car"]]
    assert load_synonyms(_config(method="ear", source_lang="de")) == german


# What is refused, and how configurations are named.


@pytest.mark.parametrize(
    "settings, allowed",
    [
        ({"task": "ner", "source_lang": "de"}, "'en' for task=ner"),
        ({"task": "qa", "source_lang": "de"}, "'en' for task=qa"),
        ({"adaptation": "adjusted", "parallel_data": "synthetic", "source_lang": "de"}, "'en'"),
        ({"selection_dev": "de"}, "one of en, source"),
    ],
)
def test_refused_settings_name_the_field_and_what_is_allowed(settings, allowed):
    with pytest.raises(ConfigError) as error:
        TrialConfig.from_dict(settings)
    assert allowed in str(error.value)
    assert error.value.field in ("source_lang", "selection_dev")


def test_configurations_name_their_source_language_only_where_it_is_not_english():
    ear = {"method": "ear", "alpha": 1.0, "beta": 0.1, "layer": 6}
    assert TrialConfig.from_dict(ear).config_label() == "ear alpha=1 beta=0.1 layer=6 m=1"
    german = TrialConfig.from_dict({**ear, "source_lang": "de"})
    assert german.config_label() == "ear alpha=1 beta=0.1 layer=6 m=1 source_lang=de"
    assert german.hyperparameters()["source_lang"] == "de"
    finetune = TrialConfig.from_dict({"source_lang": "ru", "selection_dev": "source"})
    assert finetune.config_label() == "finetune source_lang=ru selection_dev=source"
    assert "source_lang" not in TrialConfig.from_dict({}).hyperparameter_names()


# The sweep.


def test_the_sweep_trains_ear_on_each_source_beside_english_finetuning():
    spec = experiment_spec(ear_source_language, "smoke", None)
    configs = [trial_config(spec.base, point) for point in spec.points]
    assert [(c.method, c.source_lang) for c in configs] == [
        ("finetune", "en"),
        ("ear", "en"),
        ("ear", "de"),
        ("ear", "ru"),
    ]
    for config in configs:
        check_data(config)
        assert set(config.test_langs) == {"en", "es", "de", "ru"}
        assert config.selection_metric() == "dev/en/accuracy"
    paper = experiment_spec(ear_source_language, "paper", None)
    for point in paper.points:
        config = TrialConfig.from_dict({**paper.base, **point})
        assert config.data_source == "hub"
        assert sorted(config.test_langs) == sorted(xnli.XNLI_LANGUAGES)
