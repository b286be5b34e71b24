"""The synthetic NER, QA and retrieval sets: deterministic, in the formats the task readers
expect (written in the XTREME layout, the local readers read them back unchanged), labels
consistent with the text, and a trial on each runs."""

import hashlib
import json
import os
import subprocess
import sys
from collections import Counter

import pytest
from tiny_trials import TINY_TRIAL

from xlt_core.config import TrialConfig
from xlt_core.data.examples import NER_LABELS
from xlt_core.data.ner import load_ner
from xlt_core.data.squad import available_eval_languages, load_eval_set, load_training
from xlt_core.data.synthetic import SPLIT_SIZES, SYNTHETIC_LANGUAGES, _lexicon
from xlt_core.data.synthetic_ner import synthetic_ner
from xlt_core.data.synthetic_qa import synthetic_qa_eval, synthetic_qa_training
from xlt_core.data.synthetic_xsr import PAIRS, synthetic_tatoeba
from xlt_core.data.tatoeba import TATOEBA_CODES, load_tatoeba
from xlt_core.errors import DataError
from xlt_core.preflight import check_resources
from xlt_core.reporting import ListReporter
from xlt_core.trial import run_trial

TARGETS = [lang for lang in SYNTHETIC_LANGUAGES if lang != "en"]
QA_SETS = ("xquad", "mlqa", "tydiqa")

FINGERPRINT_SCRIPT = """
import hashlib
from xlt_core.data.synthetic_ner import synthetic_ner
from xlt_core.data.synthetic_qa import synthetic_qa_eval, synthetic_qa_training
from xlt_core.data.synthetic_xsr import synthetic_tatoeba
parts = [repr(synthetic_ner("train", "en")), repr(synthetic_ner("test", "de"))]
parts += [repr(synthetic_qa_training("train")), repr(synthetic_qa_eval("xquad", "ru"))]
parts += [repr(synthetic_qa_eval("tydiqa", "ru")), repr(synthetic_tatoeba("es"))]
print(hashlib.sha256("".join(parts).encode()).hexdigest())
"""


@pytest.mark.slow
def test_every_set_is_identical_in_a_fresh_process_with_another_hash_seed():
    def run(seed):
        environment = dict(os.environ, PYTHONHASHSEED=seed)
        command = [sys.executable, "-c", FINGERPRINT_SCRIPT]
        completed = subprocess.run(command, capture_output=True, text=True, env=environment)
        assert completed.returncode == 0, completed.stderr
        return completed.stdout.strip()

    assert run("1") == run("12345")
    assert len(run("1")) == len(hashlib.sha256().hexdigest())


# NER


def _tag_names(sentence) -> list[str]:
    return [NER_LABELS[tag] for tag in sentence.tags]


def _valid_bio(tags: list[str]) -> bool:
    """Every I-X continues a B-X or I-X of the same type."""
    return all(
        not tag.startswith("I-") or (index > 0 and tags[index - 1][1:] == tag[1:])
        for index, tag in enumerate(tags)
    )


@pytest.mark.parametrize("split", ["train", "dev", "test"])
def test_ner_sentences_carry_valid_bio_tags_of_every_type(split):
    sentences = synthetic_ner(split, "en")
    assert len(sentences) == SPLIT_SIZES[split]
    for sentence in sentences:
        assert len(sentence.words) == len(sentence.tags)
        assert _valid_bio(_tag_names(sentence)), sentence
        # The subject (PER) and the object (ORG) are in every sentence; places in some.
        assert {"B-PER", "B-ORG"} <= set(_tag_names(sentence))
    counts = Counter(tag for sentence in sentences for tag in _tag_names(sentence))
    assert set(counts) == set(NER_LABELS) - {"I-LOC"}  # a place is one word
    assert counts["B-LOC"] >= 0.3 * len(sentences)


def test_bio_validity_check_can_fail():
    assert not _valid_bio(["O", "I-PER"])
    assert not _valid_bio(["B-ORG", "I-PER"])
    assert _valid_bio(["B-LOC", "I-LOC", "O", "B-PER"])


def test_ner_tags_follow_the_words():
    """A word's tag type is its role's: the same word is always of the same type."""
    types = {}
    for sentence in synthetic_ner("train", "en"):
        for word, tag in zip(sentence.words, _tag_names(sentence), strict=True):
            types.setdefault(word, set()).add(tag[2:] if tag != "O" else "O")
    assert all(len(kinds) == 1 for kinds in types.values()), types
    assert types["the"] == {"O"} and types["man"] == {"PER"} and types["park"] == {"LOC"}


@pytest.mark.parametrize("lang", TARGETS)
def test_ner_dev_and_test_are_parallel_translations(lang):
    for split in ("dev", "test"):
        english, derived = synthetic_ner(split, "en"), synthetic_ner(split, lang)
        assert len(derived) == len(english)
        for e, d in zip(english, derived, strict=True):
            assert len(d.words) == len(e.words)
            assert _valid_bio(_tag_names(d))
            # "de" moves the verb phrase (untagged) last: the entities keep their order.
            entities = lambda s: [t for t in _tag_names(s) if t != "O"]  # noqa: E731
            assert entities(d) == entities(e)
            if lang != "de":
                assert d.tags == e.tags
    with pytest.raises(DataError, match="only|no language"):
        synthetic_ner("train", lang)


def test_ner_written_as_panx_files_reads_back_unchanged(tmp_path):
    (tmp_path / "panx").mkdir()
    for split, lang in [("train", "en"), ("dev", "en"), ("dev", "ru")]:
        sentences = synthetic_ner(split, lang)
        lines = [
            "\n".join(f"{w}\t{t}" for w, t in zip(s.words, _tag_names(s), strict=True)) + "\n"
            for s in sentences
        ]
        (tmp_path / "panx" / f"{split}-{lang}.tsv").write_text("\n".join(lines))
        assert load_ner("local", split, lang, str(tmp_path)) == sentences
        assert load_ner("synthetic", split, lang) == sentences


# QA


def _all_qa_sets():
    yield "train", "en", synthetic_qa_training("train")
    yield "dev", "en", synthetic_qa_training("dev")
    for name in QA_SETS:
        for lang in available_eval_languages("synthetic", name, None):
            yield name, lang, synthetic_qa_eval(name, lang)


def test_qa_answer_start_points_at_the_answer_in_the_context():
    for name, lang, examples in _all_qa_sets():
        assert len({example.id for example in examples}) == len(examples), name
        question_words = {_lexicon(lang)[w] if lang != "en" else w for w in ("who", "what")}
        question_words.add(_lexicon(lang)["where"] if lang != "en" else "where")
        for example in examples:
            (answer,) = example.answers
            start = example.answer_start
            assert example.context[start : start + len(answer)] == answer, (name, lang, example)
            # A whole phrase: word boundaries on both sides.
            assert start == 0 or example.context[start - 1] == " "
            assert example.context[start + len(answer)] == " "
            question = example.question.split()
            assert question[-1] == "?" and len(set(question) & question_words) == 1


def test_qa_question_restates_a_context_sentence_without_its_answer():
    """Some sentence of the context is the question with the question word replaced by the
    answer (and the article or preposition the question dropped)."""
    for example in synthetic_qa_training("dev"):
        question = example.question.split()
        assert question.pop() == "?"
        asked = next(i for i, word in enumerate(question) if word in ("who", "what", "where"))
        before, after = question[:asked], question[asked + 1 :]
        restated = []
        for sentence in (s.split() for s in example.context.split(" .") if s.strip()):
            if sentence[:asked] != before or sentence[len(sentence) - len(after) :] != after:
                continue
            middle = sentence[asked : len(sentence) - len(after)]
            while middle and middle[0] in ("the", "in"):
                middle = middle[1:]
            restated.append(middle)
        assert example.answers[0].split() in restated, example


def test_qa_sets_have_the_shape_of_the_real_sets():
    assert len(synthetic_qa_training("train")) == SPLIT_SIZES["train"]
    assert {name: available_eval_languages("synthetic", name, None) for name in QA_SETS} == {
        "xquad": ["en", "es", "de", "ru"],
        "mlqa": ["en", "es", "de"],
        "tydiqa": ["en", "ru"],
    }
    # XQuAD and MLQA: the same questions under the same ids in every language.
    for name in ("xquad", "mlqa"):
        english = synthetic_qa_eval(name, "en")
        for lang in available_eval_languages("synthetic", name, None):
            derived = synthetic_qa_eval(name, lang)
            assert [e.id for e in derived] == [e.id for e in english]
            if lang == "ru":
                assert all(d.question != e.question for d, e in zip(derived, english))
    # TyDiQA: written per language, so its English and Russian questions differ in content.
    english, russian = synthetic_qa_eval("tydiqa", "en"), synthetic_qa_eval("tydiqa", "ru")
    assert {e.id for e in english}.isdisjoint(e.id for e in russian)
    assert [len(e.context.split()) for e in english] != [len(e.context.split()) for e in russian]
    with pytest.raises(DataError, match="mlqa has no language 'ru'"):
        synthetic_qa_eval("mlqa", "ru")


def test_qa_written_as_squad_json_reads_back_unchanged(tmp_path):
    def write(path, examples):
        paragraphs = [
            {
                "context": e.context,
                "qas": [
                    {
                        "id": e.id,
                        "question": e.question,
                        "answers": [{"text": e.answers[0], "answer_start": e.answer_start}],
                    }
                ],
            }
            for e in examples
        ]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"data": [{"title": "synthetic", "paragraphs": paragraphs}]}))

    write(tmp_path / "tydiqa/tydiqa.goldp.en.train.json", synthetic_qa_training("train"))
    write(tmp_path / "tydiqa/tydiqa.goldp.en.dev.json", synthetic_qa_training("dev"))
    write(tmp_path / "xquad/xquad.de.json", synthetic_qa_eval("xquad", "de"))
    assert load_training("local", "train", str(tmp_path)) == synthetic_qa_training("train")
    assert load_training("local", "dev", str(tmp_path)) == synthetic_qa_training("dev")
    assert load_eval_set("local", "xquad", "de", str(tmp_path)) == synthetic_qa_eval("xquad", "de")
    assert load_eval_set("synthetic", "xquad", "de", None) == synthetic_qa_eval("xquad", "de")


# Retrieval (XSR)


@pytest.mark.parametrize("lang", TARGETS)
def test_retrieval_pairs_are_line_aligned_translations(lang, tmp_path):
    pairs = synthetic_tatoeba(lang)
    assert len(pairs) == PAIRS and pairs.lang == lang
    assert pairs.english == synthetic_tatoeba(TARGETS[0]).english  # the same English side
    assert [len(q.split()) for q in pairs.queries] == [len(e.split()) for e in pairs.english]
    different = sum(q != e for q, e in zip(pairs.queries, pairs.english, strict=True))
    assert different >= 0.9 * PAIRS
    code = TATOEBA_CODES[lang]
    (tmp_path / "tatoeba").mkdir()
    (tmp_path / f"tatoeba/tatoeba.{code}-eng.{code}").write_text("\n".join(pairs.queries) + "\n")
    (tmp_path / f"tatoeba/tatoeba.{code}-eng.eng").write_text("\n".join(pairs.english) + "\n")
    assert load_tatoeba("local", lang, str(tmp_path)) == pairs
    assert load_tatoeba("synthetic", lang) == pairs


def test_retrieval_pairs_exist_for_the_pseudo_languages_only():
    with pytest.raises(DataError, match="not 'en'"):
        synthetic_tatoeba("en")


# One trial on each synthetic task (a tiny model, a few examples): loads, trains, evaluates.

TINY = {
    **TINY_TRIAL,
    "learning_rate": 1e-3,
    "max_train_examples": 32,
    "max_eval_examples": 16,
    "data_source": "synthetic",
    "parallel_data": "synthetic",
    "parallel_max_sentences": 60,
    "adjust_learning_rate": 1e-3,
}
EXPECTED_METRICS = {
    "ner": {"dev/en/f1", "test/es/f1", "test/de/f1", "test/ru/f1"},
    "qa": {"dev/en/f1", "xquad/ru/f1", "xquad/ru-en/f1", "mlqa/de/f1", "tydiqa/ru/f1"},
    "xsr": {"dev/pooled/mrr", "test/es/mrr", "test/de/mrr", "test/ru/mrr"},
}


@pytest.mark.parametrize(
    "task, settings",
    [
        ("ner", {}),
        ("qa", {"max_seq_length": 96}),
        # XSR chooses the layer on the first 100 pairs and tests on (here 16 of) the rest.
        ("xsr", {"adaptation": "adjusted"}),
    ],
)
def test_a_trial_runs_on_each_synthetic_task(task, settings, tmp_path):
    config = TrialConfig.from_dict(
        {**TINY, **settings, "task": task, "cache_dir": str(tmp_path / "cache")}
    )
    check_resources(config)
    result = run_trial(config, ListReporter())
    assert EXPECTED_METRICS[task] <= set(result.metrics), sorted(result.metrics)
    assert all(0 <= result.metrics[key] <= 1 for key in EXPECTED_METRICS[task])
