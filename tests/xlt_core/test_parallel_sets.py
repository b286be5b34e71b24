"""Each task declares which of its evaluation sets are translations of one item set, aligned by
position (`TaskDeclaration.parallel_sets`, the synthetic stand-ins' apart), and every
per-example artifact a trial writes records it (xlt_schema.PARALLEL_ITEMS_FIELD), which the
report's headline reads (analysis/parallel_items.py)."""

import dataclasses
from types import SimpleNamespace

import pytest
from tiny_trials import TINY_TRIAL

from xlt_core import registry
from xlt_core.config import TrialConfig
from xlt_core.data.pawsx import load_pawsx
from xlt_core.data.xnli import load_xnli
from xlt_core.registry import DeclarationError
from xlt_core.reporting import ListReporter
from xlt_core.tasks.base import with_parallel_items
from xlt_core.trial import run_trial
from xlt_schema import PARALLEL_ITEMS_FIELD


@pytest.mark.parametrize(
    ("task", "real", "synthetic"),
    [
        ("xnli", ("dev", "test"), ("dev", "test")),
        ("pawsx", ("dev", "test"), ("dev", "test")),
        # WikiANN and Tatoeba: each language's own sentences; their synthetic stand-ins are
        # word-by-word translations of one set of sentences.
        ("ner", (), ("dev", "test")),
        ("xsr", (), ("dev", "test")),
        # XQuAD translates one question set; TyDiQA is written per language; MLQA's files are
        # not aligned by position (each language its own subset), the synthetic MLQA is.
        ("qa", ("xquad",), ("xquad", "mlqa")),
    ],
)
def test_each_task_declares_the_sets_whose_languages_are_translations(task, real, synthetic):
    declaration = registry.task(task)
    assert declaration.parallel_sets_for("hub") == real
    assert declaration.parallel_sets_for("local") == real
    assert declaration.parallel_sets_for("synthetic") == synthetic


@pytest.mark.parametrize(
    ("field", "value"), [("parallel_sets", "test"), ("synthetic_parallel_sets", ("test", 1))]
)
def test_a_parallel_sets_field_that_is_not_a_tuple_of_set_names_is_refused(field, value):
    # Refused before it is registered: the registry is left as it was.
    probe = dataclasses.replace(registry.task("xnli"), name="parallel_probe", **{field: value})
    with pytest.raises(DeclarationError, match=f"field {field}: a tuple of evaluation set names"):
        registry.register_task(probe)
    assert "parallel_probe" not in registry.task_names()


@pytest.mark.parametrize("load", [load_xnli, load_pawsx])
def test_the_synthetic_pair_sets_declared_parallel_are_aligned_by_position(load):
    english = load("synthetic", "test", "en")
    for lang in ("es", "de", "ru"):
        translated = load("synthetic", "test", lang)
        assert [e.label for e in translated] == [e.label for e in english]
        assert translated != english


def test_every_artifact_records_whether_its_split_is_parallel():
    scores = {
        "xquad-es": {"split": "xquad", "lang": "es", "scores": [1.0]},
        "tydiqa-ru": {"split": "tydiqa", "lang": "ru", "scores": [0.0]},
        "dev-en": {"split": "dev", "lang": "en", "scores": [0.5]},
        "xquad-de-en": {"scores": [1.0]},  # a payload without its split: the key's
    }
    hub = with_parallel_items(SimpleNamespace(task="qa", data_source="hub"), scores)
    assert {key: payload[PARALLEL_ITEMS_FIELD] for key, payload in hub.items()} == {
        "xquad-es": True,
        "tydiqa-ru": False,
        "dev-en": False,
        "xquad-de-en": True,
    }
    assert hub["xquad-es"]["scores"] == [1.0]
    ner = with_parallel_items(
        SimpleNamespace(task="ner", data_source="hub"), {"test-de": {"split": "test"}}
    )
    assert ner["test-de"][PARALLEL_ITEMS_FIELD] is False


def test_a_trial_writes_the_record_into_its_artifacts(tmp_path):
    # A tiny synthetic QA trial: XQuAD and MLQA are parallel, TyDiQA and English dev not.
    config = TrialConfig.from_dict(
        {
            **TINY_TRIAL,
            "task": "qa",
            "data_source": "synthetic",
            "max_train_examples": 16,
            "max_eval_examples": 8,
            "max_seq_length": 96,
            "cache_dir": str(tmp_path / "cache"),
        }
    )
    result = run_trial(config, ListReporter())
    recorded = {
        key: payload[PARALLEL_ITEMS_FIELD] for key, payload in result.example_scores.items()
    }
    assert recorded["xquad-ru"] and recorded["xquad-ru-en"] and recorded["mlqa-de"]
    assert not recorded["tydiqa-ru"] and not recorded["dev-en"]
