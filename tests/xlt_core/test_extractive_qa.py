"""Extractive QA: windows with a stride and their answer positions, span decoding, the XQuAD
and MLQA cross-lingual sets, and the local readers (scoring: test_qa_scoring.py)."""

import json

import numpy as np
import pytest
from qa_examples import qa_example

from xlt_core.config import TrialConfig
from xlt_core.data.squad import (
    available_eval_languages,
    cross_lingual,
    load_training,
    read_squad_json,
)
from xlt_core.errors import ConfigError, DataError
from xlt_core.models import tiny_tokenizer
from xlt_core.tasks import TASKS
from xlt_core.tasks.extractive_qa import best_span, encode_qa


def test_long_context_is_split_into_overlapping_windows_with_the_answer_positions(tmp_path):
    words = [f"w{i}" for i in range(60)]
    context = " ".join(words)
    tokenizer = tiny_tokenizer([context, "where is it"] * 3, 150, tmp_path)
    example = qa_example("where is it", context, "w40 w41")
    features = encode_qa(tokenizer, [example], max_length=32, stride=8)
    assert len(features) > 1 and set(features.example_index) == {0}
    found = []
    for row in range(len(features)):
        start, end = features.start_positions[row], features.end_positions[row]
        if start:
            offsets = features.offsets[row]
            found.append(context[offsets[start][0] : offsets[end][1]])
    assert found and set(found) == {"w40 w41"}  # the windows holding the answer point at it
    # consecutive windows overlap: the first context token of a window reappears in the one before
    first_spans = [next(o for o in offsets if o is not None) for offsets in features.offsets]
    last_spans = [[o for o in offsets if o is not None][-1] for offsets in features.offsets]
    assert all(first_spans[k + 1][0] < last_spans[k][1] for k in range(len(features) - 1))


def test_best_span_respects_order_context_and_length():
    offsets = [None, (0, 3), (4, 7), (8, 11), None]
    start = np.array([9.0, 0.0, 6.0, 5.0, 9.0])
    end = np.array([9.0, 0.0, 0.5, 4.0, 9.0])
    # the special tokens (None) score highest but are not context; start 2 + end 1 would be
    # reversed; the valid spans: (2,2)=6.5, (2,3)=10, (3,3)=9, ...: (2,3) wins
    assert best_span(start, end, offsets) == (10.0, 2, 3)
    assert best_span(start, end, [None] * 5) is None


def test_xquad_cross_lingual_sets_pair_questions_and_contexts_by_id(shared_data):
    english = read_squad_json(shared_data / "xquad" / "xquad.en.json")
    spanish = read_squad_json(shared_data / "xquad" / "xquad.es.json")
    es_questions_en_contexts = cross_lingual(list(spanish), list(english))
    assert len(es_questions_en_contexts) == len(english) == 1190
    first = es_questions_en_contexts[0]
    source = next(e for e in spanish if e.id == first.id)
    assert (
        first.question == source.question
        and first.context == english[0].context
        and first.answers == english[0].answers
    )
    assert {"en", "es", "vi"} <= set(available_eval_languages("local", "xquad", str(shared_data)))
    assert "zh" in available_eval_languages("local", "mlqa", str(shared_data))
    # the shared TyDiQA-GoldP dev files are XTREME's unlabelled copies: nothing to score
    assert available_eval_languages("local", "tydiqa", str(shared_data)) == []


def squad_file(path, answers):
    qas = [
        {"id": str(k), "question": f"q{k}", "answers": [{"text": text, "answer_start": 0}]}
        for k, text in enumerate(answers)
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"data": [{"paragraphs": [{"context": "abc", "qas": qas}]}]}))


@pytest.mark.parametrize(
    "dev_answers, dev_ids, train_ids",
    [
        (["a", "b"], ["0", "1"], [str(k) for k in range(20)]),  # a labelled dev file is the dev set
        (
            ["", ""],
            ["18", "19"],
            [str(k) for k in range(18)],
        ),  # blank answers: the last 10% of train
    ],
)
def test_offline_dev_set_is_held_out_of_train_when_the_dev_file_is_unlabelled(
    tmp_path, dev_answers, dev_ids, train_ids
):
    squad_file(tmp_path / "tydiqa" / "tydiqa.goldp.en.train.json", ["abc"] * 20)
    squad_file(tmp_path / "tydiqa" / "tydiqa.goldp.en.dev.json", dev_answers)
    assert [e.id for e in load_training("local", "dev", str(tmp_path))] == dev_ids
    assert [e.id for e in load_training("local", "train", str(tmp_path))] == train_ids


def test_a_file_that_is_not_squad_json_is_named(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"data": [{"paragraphs": [{"context": "c", "qas": [{"id": "1"}]}]}]}')
    with pytest.raises(DataError, match="bad.json: not SQuAD v1.1 JSON"):
        read_squad_json(path)


def _mlqa_file(data_dir, split, context_lang, question_lang):
    path = data_dir / "mlqa" / f"{split}-context-{context_lang}-question-{question_lang}.json"
    context = f"{split} context in {context_lang}"
    qas = [
        {
            "id": "1",
            "question": f"{question_lang}?",
            "answers": [{"text": split, "answer_start": 0}],
        }
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"data": [{"paragraphs": [{"context": context, "qas": qas}]}]}))


@pytest.mark.parametrize("split", ["dev", "test"])
def test_local_mlqa_is_the_chosen_split_with_the_directions_it_has_files_for(tmp_path, split):
    squad_file(tmp_path / "tydiqa" / "tydiqa.goldp.en.train.json", ["abc"] * 20)
    for name in ("dev", "test"):
        for context_lang, question_lang in (("en", "en"), ("es", "es"), ("vi", "vi")):
            _mlqa_file(tmp_path, name, context_lang, question_lang)
        # Spanish has both cross-lingual files, Vietnamese none.
        _mlqa_file(tmp_path, name, "en", "es")
        _mlqa_file(tmp_path, name, "es", "en")
    assert available_eval_languages("local", "mlqa", str(tmp_path), split) == ["en", "es", "vi"]
    settings = {"task": "qa", "data_source": "local", "data_dir": str(tmp_path)}
    config = TrialConfig.from_dict({**settings, "target_langs": "es,vi", "mlqa_split": split})
    sets = TASKS["qa"]._evaluation_sets(config)
    mlqa = {lang: examples[0] for (name, lang), examples in sets.items() if name == "mlqa"}
    assert sorted(mlqa) == ["en", "en-es", "es", "es-en", "vi"]
    assert (mlqa["es-en"].question, mlqa["es-en"].context) == ("es?", f"{split} context in en")
    assert (mlqa["en-es"].question, mlqa["en-es"].context) == ("en?", f"{split} context in es")
    assert mlqa["vi"].answers == (split,)


def test_mlqa_split_names_what_it_allows():
    with pytest.raises(ConfigError, match="mlqa_split"):
        TrialConfig.from_dict({"task": "qa", "mlqa_split": "validation"})
