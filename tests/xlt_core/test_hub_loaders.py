"""Every hub loader, offline, through the `datasets.load_dataset` call it makes in production.

Each hub repository the paper presets read is mirrored here in miniature, as the hub holds
it: parquet files per config and split (`<config>/<split>-00000-of-00001.parquet`, MultiNLI's
`data/...`), a README whose `configs` section declares the configs and splits, and the
features (column names, ClassLabel names and order, nested answers, translation dicts)
embedded in the parquet files as `datasets` writes them. The tests replace only the dataset
id by the mirror's directory: config, split and everything the loader does with the rows are
production's. A loader asking for a config or split the hub does not have fails here as it
would there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import datasets
import pytest
import yaml
from datasets import ClassLabel, Dataset, Features, List, Translation, Value

from xlt_core.config import TrialConfig
from xlt_core.data import ner, parallel, pawsx, squad, tatoeba, xnli
from xlt_core.data.examples import PAWSX_LABELS, XNLI_LABELS, PairExample
from xlt_core.data.loading import load_split
from xlt_core.data.ner import NER_LABELS, load_ner
from xlt_core.data.parallel import load_parallel
from xlt_core.data.pawsx import load_pawsx
from xlt_core.data.squad import load_eval_set, load_training
from xlt_core.data.tatoeba import load_tatoeba
from xlt_core.data.xnli import load_xnli

# The hub's ClassLabel names, in the hub's order (ids are positions).
NLI_CLASSES = ClassLabel(names=["entailment", "neutral", "contradiction"])
PAWSX_CLASSES = ClassLabel(names=["0", "1"])
WIKIANN_CLASSES = ClassLabel(names=["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC"])
SQUAD_ANSWERS = {"text": List(Value("string")), "answer_start": List(Value("int32"))}


@dataclass(frozen=True)
class HubRepo:
    """A hub repository in miniature: per config, its features and rows per split."""

    configs: dict[str, tuple[Features, dict[str, list[dict]]]]
    folders: dict[str, str] = field(default_factory=dict)  # config -> folder, else its name
    default: str | None = None  # the config loaded when none is named

    def write(self, root: Path) -> Path:
        declared = []
        for config, (features, splits) in self.configs.items():
            folder = self.folders.get(config, config)
            files = []
            for split, rows in splits.items():
                path = root / folder / f"{split}-00000-of-00001.parquet"
                path.parent.mkdir(parents=True, exist_ok=True)
                Dataset.from_list(rows, features=features).to_parquet(str(path))
                files.append({"split": split, "path": f"{folder}/{split}-*"})
            entry = {"config_name": config, "data_files": files}
            declared.append(entry | ({"default": True} if config == self.default else {}))
        card = yaml.safe_dump({"configs": declared}, allow_unicode=True, sort_keys=False)
        (root / "README.md").write_text(f"---\n{card}---\n", encoding="utf-8")
        return root


def _nli(premise, hypothesis, label):
    return {"premise": premise, "hypothesis": hypothesis, "label": label}


XNLI_FEATURES = Features(
    {"premise": Value("string"), "hypothesis": Value("string"), "label": NLI_CLASSES}
)
XNLI_ES_TEST = [
    _nli("Un hombre lee un libro en el parque.", "Alguien está leyendo.", "entailment"),
    _nli("Ella viajó a Lima en julio.", "Ella viajó en avión.", "neutral"),
    _nli("La tienda abre a las nueve.", "La tienda nunca abre.", "contradiction"),
]
MULTI_NLI_FEATURES = Features(
    {
        "promptID": Value("int32"),
        "pairID": Value("string"),
        "premise": Value("string"),
        "premise_binary_parse": Value("string"),
        "premise_parse": Value("string"),
        "hypothesis": Value("string"),
        "hypothesis_binary_parse": Value("string"),
        "hypothesis_parse": Value("string"),
        "genre": Value("string"),
        "label": NLI_CLASSES,
    }
)


def _multi_nli(pair_id, premise, hypothesis, label):
    return {
        "promptID": int(pair_id[:-1]),
        "pairID": pair_id,
        "premise": premise,
        "premise_binary_parse": "( ... )",
        "premise_parse": "(ROOT ...)",
        "hypothesis": hypothesis,
        "hypothesis_binary_parse": "( ... )",
        "hypothesis_parse": "(ROOT ...)",
        "genre": "fiction",
        "label": label,
    }


MULTI_NLI_TRAIN = [
    _multi_nli("1n", "The dog slept by the fire.", "An animal was resting.", "entailment"),
    _multi_nli("2e", "The meeting ran late.", "Nobody could agree.", -1),  # no gold label
    _multi_nli("3c", "The road was closed.", "Cars drove down the road.", "contradiction"),
]
PAWSX_FEATURES = Features(
    {
        "id": Value("int32"),
        "sentence1": Value("string"),
        "sentence2": Value("string"),
        "label": PAWSX_CLASSES,
    }
)
PAWSX_DE_TEST = [
    {
        "id": 1,
        "sentence1": "Anna traf Ben in Bonn.",
        "sentence2": "Ben traf Anna in Bonn.",
        "label": "0",
    },
    {
        "id": 2,
        "sentence1": "Er zog 1990 nach Köln.",
        "sentence2": "1990 zog er nach Köln.",
        "label": "1",
    },
]
WIKIANN_FEATURES = Features(
    {
        "tokens": List(Value("string")),
        "ner_tags": List(WIKIANN_CLASSES),
        "langs": List(Value("string")),
        "spans": List(Value("string")),
    }
)
WIKIANN_ES_TEST = [
    {
        "tokens": ["Angela", "Merkel", "visitó", "el", "Museo", "del", "Prado"],
        "ner_tags": ["B-PER", "I-PER", "O", "O", "B-ORG", "I-ORG", "I-ORG"],
        "langs": ["es"] * 7,
        "spans": ["PER: Angela Merkel", "ORG: Museo del Prado"],
    },
    {
        "tokens": ["Madrid"],
        "ner_tags": ["B-LOC"],
        "langs": ["es"],
        "spans": ["LOC: Madrid"],
    },
]
SQUAD_FEATURES = Features(
    {
        "id": Value("string"),
        "title": Value("string"),
        "context": Value("string"),
        "question": Value("string"),
        "answers": SQUAD_ANSWERS,
    }
)
XQUAD_FEATURES = Features(
    {
        "id": Value("string"),
        "context": Value("string"),
        "question": Value("string"),
        "answers": SQUAD_ANSWERS,
    }
)
MLQA_FEATURES = Features(
    {
        "context": Value("string"),
        "question": Value("string"),
        "answers": {"answer_start": List(Value("int32")), "text": List(Value("string"))},
        "id": Value("string"),
    }
)
TATOEBA_FEATURES = Features(
    {
        "source_sentence": Value("string"),
        "target_sentence": Value("string"),
        "source_lang": Value("string"),
        "target_lang": Value("string"),
    }
)


def _qa(id_, context, question, answer, with_title=False):
    row = {
        "id": id_,
        "context": context,
        "question": question,
        "answers": {"text": [answer], "answer_start": [context.index(answer)]},
    }
    return row | ({"title": "Article"} if with_title else {})


SQUAD_TRAIN = [
    _qa("s1", "The Eiffel Tower opened in 1889.", "When did it open?", "1889", with_title=True)
]
SQUAD_VALIDATION = [
    _qa("s2", "Paris is the capital of France.", "What is the capital?", "Paris", with_title=True)
]
XQUAD_ES = [_qa("x1", "El río Amazonas es muy largo.", "¿Qué río es largo?", "El río Amazonas")]
MLQA_ES = [_qa("m1", "Cervantes escribió el Quijote.", "¿Quién lo escribió?", "Cervantes")]
# MLQA's test split, and its cross-lingual configs `mlqa.<context lang>.<question lang>`.
MLQA_ES_TEST = [_qa("t1", "Goya pintó en Madrid.", "¿Dónde pintó Goya?", "Madrid")]
MLQA_CONTEXT_EN_QUESTION_ES = [_qa("t1", "Goya painted in Madrid.", "¿Dónde pintó Goya?", "Madrid")]
MLQA_CONTEXT_ES_QUESTION_EN = [
    _qa("t1", "Goya pintó en Madrid.", "Where did Goya paint?", "Madrid")
]
# TyDiQA-GoldP: every language in one split, each id starting with the language's name.
TYDIQA_GOLDP = [
    _qa("russian-101-0", "Москва — столица России.", "Какая столица России?", "Москва", True),
    _qa("arabic-202-0", "القاهرة عاصمة مصر.", "ما عاصمة مصر؟", "القاهرة", True),
    _qa("russian-303-1", "Волга течёт в Каспий.", "Куда течёт Волга?", "в Каспий", True),
    _qa("english-404-0", "Oslo is in Norway.", "Where is Oslo?", "Norway", True),
]
TATOEBA_SPA = [
    {
        "source_sentence": "Tengo hambre.",
        "target_sentence": "I am hungry.",
        "source_lang": "spa",
        "target_lang": "eng",
    },
    {
        "source_sentence": "¿Dónde está la estación?",
        "target_sentence": "Where is the station?",
        "source_lang": "spa",
        "target_lang": "eng",
    },
]
OPUS_EN_VI = [
    {"translation": {"en": "Good morning.", "vi": "Chào buổi sáng."}},
    {"translation": {"en": "Thank you.", "vi": "Cảm ơn."}},
]
OPUS_DE_EN = [{"translation": {"de": "Danke schön.", "en": "Thank you very much."}}]


def _splits(names, rows):
    return {name: rows for name in names}


HUB = {
    "facebook/xnli": HubRepo(
        {
            lang: (XNLI_FEATURES, _splits(("train", "test", "validation"), XNLI_ES_TEST))
            for lang in ("en", "es", "de")
        }
    ),
    "nyu-mll/multi_nli": HubRepo(
        {
            "default": (
                MULTI_NLI_FEATURES,
                _splits(("train", "validation_matched", "validation_mismatched"), MULTI_NLI_TRAIN),
            )
        },
        folders={"default": "data"},
    ),
    "google-research-datasets/paws-x": HubRepo(
        {
            lang: (PAWSX_FEATURES, _splits(("train", "test", "validation"), PAWSX_DE_TEST))
            for lang in ("en", "de")
        }
    ),
    "unimelb-nlp/wikiann": HubRepo(
        {
            lang: (WIKIANN_FEATURES, _splits(("validation", "test", "train"), WIKIANN_ES_TEST))
            for lang in ("en", "es")
        }
    ),
    "rajpurkar/squad": HubRepo(
        {
            "plain_text": (
                SQUAD_FEATURES,
                {"train": SQUAD_TRAIN, "validation": SQUAD_VALIDATION},
            )
        },
        default="plain_text",
    ),
    "google/xquad": HubRepo(
        {f"xquad.{lang}": (XQUAD_FEATURES, {"validation": XQUAD_ES}) for lang in ("en", "es", "ru")}
    ),
    "facebook/mlqa": HubRepo(
        {
            f"mlqa.{pair}": (MLQA_FEATURES, {"test": test, "validation": MLQA_ES})
            for pair, test in (
                ("en.en", MLQA_ES_TEST),
                ("es.es", MLQA_ES_TEST),
                ("en.es", MLQA_CONTEXT_EN_QUESTION_ES),
                ("es.en", MLQA_CONTEXT_ES_QUESTION_EN),
            )
        }
    ),
    "google-research-datasets/tydiqa": HubRepo(
        # The gold passage task has SQuAD's columns (with a title).
        {"secondary_task": (SQUAD_FEATURES, _splits(("train", "validation"), TYDIQA_GOLDP))}
    ),
    "google/xtreme": HubRepo(
        {f"tatoeba.{code}": (TATOEBA_FEATURES, {"validation": TATOEBA_SPA}) for code in ("spa",)}
    ),
    "Helsinki-NLP/opus-100": HubRepo(
        {
            "en-vi": (
                Features({"translation": Translation(languages=["en", "vi"])}),
                _splits(("test", "train", "validation"), OPUS_EN_VI),
            ),
            "de-en": (
                Features({"translation": Translation(languages=["de", "en"])}),
                _splits(("test", "train", "validation"), OPUS_DE_EN),
            ),
        }
    ),
}

# Every loader's per-process cache: cleared around each test so that no mirror rows leak.
_CACHES = (
    xnli._XNLI.load_cached,
    pawsx._PAWSX.load_cached,
    ner._load_hub,
    squad._load_hub,
    tatoeba._load_hub,
    parallel._load_cached,
)


@pytest.fixture(scope="module")
def mirrors(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("hub")
    return {repo_id: repo.write(root / repo_id) for repo_id, repo in HUB.items()}


@pytest.fixture
def hub_calls(mirrors, monkeypatch, tmp_path) -> list[tuple]:
    """`datasets.load_dataset` answered from the mirrors: the dataset id becomes the mirror's
    directory, every other argument passes unchanged. Returns the calls, as (id, config, split)."""
    real_load_dataset, calls = datasets.load_dataset, []

    def load_dataset(path, name=None, **kwargs):
        calls.append((path, name, kwargs.get("split")))
        return real_load_dataset(str(mirrors[path]), name, **kwargs)

    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "cache")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    for cache in _CACHES:
        cache.cache_clear()
    yield calls
    for cache in _CACHES:
        cache.cache_clear()


def test_xnli_test_split_comes_from_facebook_xnli_with_its_label_order(hub_calls):
    config = TrialConfig.from_dict({"data_source": "hub", "target_langs": "es"})
    examples = load_split(config, "test", "es")
    assert hub_calls == [("facebook/xnli", "es", "test")]
    assert [(e.sentence1, e.sentence2) for e in examples] == [
        (row["premise"], row["hypothesis"]) for row in XNLI_ES_TEST
    ]
    assert [XNLI_LABELS[e.label] for e in examples] == [row["label"] for row in XNLI_ES_TEST]


def test_xnli_dev_split_is_the_hubs_validation_split(hub_calls):
    assert len(load_xnli("hub", "dev", "de")) == len(XNLI_ES_TEST)
    assert hub_calls == [("facebook/xnli", "de", "validation")]


def test_xnli_training_is_multinli_without_its_unlabelled_pairs(hub_calls):
    examples = load_xnli("hub", "train", "en")
    assert hub_calls == [("nyu-mll/multi_nli", None, "train")]
    assert examples == [
        PairExample("The dog slept by the fire.", "An animal was resting.", 0),
        PairExample("The road was closed.", "Cars drove down the road.", 2),
    ]


def test_pawsx_comes_from_the_hub_with_1_meaning_paraphrase(hub_calls):
    examples = load_pawsx("hub", "test", "de")
    train = load_pawsx("hub", "train", "en")
    assert hub_calls == [
        ("google-research-datasets/paws-x", "de", "test"),
        ("google-research-datasets/paws-x", "en", "train"),
    ]
    assert [PAWSX_LABELS[e.label] for e in examples] == ["different", "paraphrase"]
    assert examples[1] == PairExample("Er zog 1990 nach Köln.", "1990 zog er nach Köln.", 1)
    assert len(train) == len(PAWSX_DE_TEST)


def test_wikiann_tags_keep_their_names(hub_calls):
    sentences = load_ner("hub", "test", "es")
    load_ner("hub", "dev", "en")
    assert hub_calls == [
        ("unimelb-nlp/wikiann", "es", "test"),
        ("unimelb-nlp/wikiann", "en", "validation"),
    ]
    for sentence, row in zip(sentences, WIKIANN_ES_TEST, strict=True):
        assert list(sentence.words) == row["tokens"]
        assert [NER_LABELS[tag] for tag in sentence.tags] == row["ner_tags"]


def test_squad_trains_and_selects_on_its_train_and_validation_splits(hub_calls):
    train = load_training("hub", "train", None)
    dev = load_training("hub", "dev", None)
    assert hub_calls == [
        ("rajpurkar/squad", None, "train"),
        ("rajpurkar/squad", None, "validation"),
    ]
    assert (train[0].id, train[0].answers, train[0].answer_start) == ("s1", ("1889",), 27)
    assert dev[0].question == "What is the capital?" and dev[0].answers == ("Paris",)


@pytest.mark.parametrize(
    "eval_set, call, rows",
    [
        ("xquad", ("google/xquad", "xquad.es", "validation"), XQUAD_ES),
        ("mlqa", ("facebook/mlqa", "mlqa.es.es", "validation"), MLQA_ES),
    ],
)
def test_qa_evaluation_sets_come_from_their_hub_configs(hub_calls, eval_set, call, rows):
    (example,) = load_eval_set("hub", eval_set, "es", None)
    assert hub_calls == [call]
    row = rows[0]
    assert (example.id, example.question, example.context) == (
        row["id"],
        row["question"],
        row["context"],
    )
    assert example.answers == tuple(row["answers"]["text"])
    assert example.context[example.answer_start :].startswith(example.answers[0])


@pytest.mark.parametrize(
    "question, context, config, rows",
    [
        ("es", "es", "mlqa.es.es", MLQA_ES_TEST),
        ("es", "en", "mlqa.en.es", MLQA_CONTEXT_EN_QUESTION_ES),
        ("en", "es", "mlqa.es.en", MLQA_CONTEXT_ES_QUESTION_EN),
    ],
)
def test_mlqa_test_split_and_its_cross_lingual_configs(hub_calls, question, context, config, rows):
    examples = load_eval_set("hub", "mlqa", question, None, "test", context)
    assert hub_calls == [("facebook/mlqa", config, "test")]
    assert [(e.question, e.context, e.answers) for e in examples] == [
        (row["question"], row["context"], tuple(row["answers"]["text"])) for row in rows
    ]


def test_tydiqa_goldp_is_one_languages_questions_of_the_gold_passage_task(hub_calls):
    russian = load_eval_set("hub", "tydiqa", "ru", None)
    assert hub_calls == [("google-research-datasets/tydiqa", "secondary_task", "validation")]
    assert [e.id for e in russian] == ["russian-101-0", "russian-303-1"]
    assert russian[1].context[russian[1].answer_start :].startswith("в Каспий")


def test_the_qa_paper_path_evaluates_mlqa_test_directions_and_tydiqa_russian(hub_calls):
    """The QA task's evaluation sets from the hub, as the adjust_qa paper preset asks."""
    from xlt_core.tasks import TASKS

    config = TrialConfig.from_dict(
        {"task": "qa", "data_source": "hub", "target_langs": "es,ru", "mlqa_split": "test"}
    )
    sets = TASKS["qa"]._evaluation_sets(config)
    assert {"mlqa/es", "mlqa/es-en", "mlqa/en-es", "tydiqa/ru", "xquad/ru-en"} <= {
        "/".join(key) for key in sets
    }
    assert ("mlqa", "ru") not in sets and ("tydiqa", "es") not in sets  # the sets' languages
    assert sets[("mlqa", "es-en")][0].question == "¿Dónde pintó Goya?"
    assert sets[("mlqa", "es-en")][0].context == "Goya painted in Madrid."
    assert [e.id for e in sets[("tydiqa", "ru")]] == ["russian-101-0", "russian-303-1"]
    mlqa_calls = {call for call in hub_calls if call[0] == "facebook/mlqa"}
    assert {split for _, _, split in mlqa_calls} == {"test"}


def test_tatoeba_queries_are_the_other_language_and_english_the_targets(hub_calls):
    pairs = load_tatoeba("hub", "es")
    assert hub_calls == [("google/xtreme", "tatoeba.spa", "validation")]
    assert pairs.queries == ("Tengo hambre.", "¿Dónde está la estación?")
    assert pairs.english == ("I am hungry.", "Where is the station?")


@pytest.mark.parametrize(
    "target, config, expected",
    [
        ("vi", "en-vi", [("Good morning.", "Chào buổi sáng."), ("Thank you.", "Cảm ơn.")]),
        ("de", "de-en", [("Thank you very much.", "Danke schön.")]),
    ],
)
def test_opus100_pairs_come_from_the_sorted_pair_config(hub_calls, target, config, expected):
    corpus = load_parallel("hub:Helsinki-NLP/opus-100", "en", target)
    assert hub_calls == [("Helsinki-NLP/opus-100", config, "train")]
    assert list(zip(corpus.source, corpus.target)) == expected
