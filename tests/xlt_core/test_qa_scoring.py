"""QA scoring as the official scripts compute it: SQuAD v1.1 (SQuAD, XQuAD, TyDiQA-GoldP) and
MLQA's per-language normalisation, on hand-computed examples, and the evaluator choosing the
normalisation by evaluation set."""

import json

import pytest
import torch
from qa_examples import qa_example

from xlt_core.config import TrialConfig
from xlt_core.models import tiny_tokenizer
from xlt_core.tasks import TASKS, extractive_qa
from xlt_core.tasks.qa_scoring import (
    exact_match,
    normalize_mlqa,
    normalize_squad,
    normalizer_for,
    score_answers,
    token_f1,
)


def test_squad_f1_and_exact_match_on_a_worked_example():
    assert normalize_squad("The  Eiffel Tower!") == "eiffel tower"
    assert exact_match("the Eiffel tower", "Eiffel Tower.") == 1.0
    # prediction "eiffel tower in paris" vs gold "eiffel tower": 2 common tokens,
    # precision 2/4, recall 2/2, F1 = 2 * 0.5 * 1 / 1.5 = 2/3
    assert token_f1("Eiffel Tower in Paris", "the Eiffel Tower") == pytest.approx(2 / 3)
    assert token_f1("Paris", "Eiffel Tower") == 0.0
    examples = [
        qa_example(
            "q", "the Eiffel Tower in Paris", "Eiffel Tower", more=("Eiffel Tower in Paris",)
        ),
        qa_example("q", "in 1889 it opened", "1889", "q2"),
    ]
    scored = score_answers(["Eiffel Tower in Paris", "1889 it"], examples, normalize_squad)
    # Q1: the second gold answer matches exactly (F1 1, EM 1); Q2: F1 = 2*(1/2*1)/(1.5) = 2/3, EM 0
    assert scored["scores"] == pytest.approx([1.0, 2 / 3])
    assert scored["exact_match_scores"] == [1.0, 0.0]
    assert scored["value"] == pytest.approx((1 + 2 / 3) / 2) and scored["exact_match"] == 0.5


@pytest.mark.parametrize(
    "lang, prediction, gold, mlqa_f1, mlqa_em, squad_f1",
    [
        # es articles: "río amazonas" both ways under MLQA. SQuAD keeps "el": 2 common of
        # 3 predicted, 2 gold: F1 = 2 * (2/3) * 1 / (2/3 + 1) = 0.8
        ("es", "el río Amazonas", "Río Amazonas", 1.0, 1.0, 0.8),
        # '¿' (Po) goes under MLQA, then "la"; SQuAD keeps "¿la": F1 = 0.8 as above
        ("es", "¿la Casa Blanca?", "Casa Blanca", 1.0, 1.0, 0.8),
        # '«' '»' (Pi, Pf): SQuAD reads "«don" and "quijote»", neither a gold token: F1 0
        ("es", "«Don Quijote»", "Don Quijote", 1.0, 1.0, 0.0),
        # "unos" and "las" are articles: "años" vs "años veinte": P 1, R 1/2, F1 2/3
        ("es", "unos años", "los años veinte", 2 / 3, 0.0, 0.4),
        # de articles, whole words only: "der" goes, "bruder" and "anderson" stay
        ("de", "der Vertrag von Versailles", "Vertrag von Versailles", 1.0, 1.0, 6 / 7),
        ("de", "eines Tages", "Tages", 1.0, 1.0, 2 / 3),
        ("de", "sein Bruder Anderson", "Bruder Anderson", 0.8, 0.0, 0.8),
        # vi: "của" is one of MLQA's Vietnamese articles
        ("vi", "thủ đô của Pháp", "thủ đô Pháp", 1.0, 1.0, 6 / 7),
        # hi: no articles; the danda '।' (Po) is punctuation
        ("hi", "भारत।", "भारत", 1.0, 1.0, 0.0),
        # zh mixed segmentation: one token per ideograph. "北京大学" = 4 tokens, "北京" = 2:
        # P 2/4, R 1, F1 2/3 (SQuAD: one token each, no match)
        ("zh", "北京大学", "北京", 2 / 3, 0.0, 0.0),
        # a Latin run stays one word: 2008 年 北 京 奥 运 会 (7) vs 北 京 奥 运 会 (5):
        # P 5/7, R 1, F1 = (10/7) / (12/7) = 5/6
        ("zh", "2008年北京奥运会", "北京奥运会", 5 / 6, 0.0, 0.0),
        # '、' (U+3001, Po) goes: 上 海 北 京 vs 北 京: F1 2/3
        ("zh", "上海、北京", "北京", 2 / 3, 0.0, 0.0),
        # en under MLQA: curly quotes (Pi, Pf) go; SQuAD keeps them on the words
        ("en", "the “Big Apple”", "Big Apple", 1.0, 1.0, 0.0),
        # '$' is a symbol (Sc), but MLQA removes ASCII punctuation too
        ("en", "$5", "5", 1.0, 1.0, 1.0),
        # ar: "ال" goes, as the official pattern removes it
        ("ar", "الكتاب", "كتاب", 1.0, 1.0, 0.0),
    ],
)
def test_mlqa_rules_against_squad_rules(lang, prediction, gold, mlqa_f1, mlqa_em, squad_f1):
    mlqa = normalizer_for("mlqa", lang)
    assert token_f1(prediction, gold, mlqa) == pytest.approx(mlqa_f1)
    assert exact_match(prediction, gold, mlqa) == mlqa_em
    assert token_f1(prediction, gold, normalize_squad) == pytest.approx(squad_f1)


def test_mlqa_normal_forms():
    assert normalize_mlqa("Los  Ángeles, California", "es") == "ángeles california"
    assert normalize_mlqa("NBA总冠军", "zh") == "nba 总 冠 军"
    assert normalize_mlqa("Die Brücke über die Elbe", "de") == "brücke über elbe"
    # Hindi and Chinese have no articles: "the" and "a" stay
    assert normalize_mlqa("the a", "hi") == "the a"
    # the official Arabic pattern removes "ال" inside words too ("رجال", men -> "رج")
    assert normalize_mlqa("رجال", "ar") == "رج"
    with pytest.raises(ValueError, match="'fr'"):
        normalize_mlqa("le chat", "fr")


@pytest.mark.parametrize(
    "key, normal_form",
    [
        (("mlqa", "es"), "río"),
        (("xquad", "es"), "el río"),
        (("xquad", "es-en"), "el río"),
        # an MLQA direction `<question>-<context>` is scored in the context's (answers') language
        (("mlqa", "en-es"), "río"),
        (("mlqa", "es-en"), "el río"),
        (("tydiqa", "ru"), "el río"),
        (("dev", "en"), "el río"),
    ],
)
def test_mlqa_is_scored_by_its_rules_and_the_other_sets_by_squads(key, normal_form):
    assert normalizer_for(*key)("El río") == normal_form


def _squad_json(path, context, answer):
    qa_ = {"id": "0", "question": "¿Qué río?", "answers": [{"text": answer, "answer_start": 0}]}
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"data": [{"paragraphs": [{"context": context, "qas": [qa_]}]}]}
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def test_qa_evaluator_scores_mlqa_and_xquad_by_their_own_rules(tmp_path, monkeypatch):
    context = "Río Amazonas es largo"
    for name in ("tydiqa/tydiqa.goldp.en.train.json", "tydiqa/tydiqa.goldp.en.dev.json"):
        _squad_json(tmp_path / name, "the Amazon river is long", "Amazon river")
    for name in ("xquad/xquad.es.json", "mlqa/dev-context-es-question-es.json"):
        _squad_json(tmp_path / name, context, "Río Amazonas")
    # The model's answer to every question: the span with the Spanish article (patched where
    # the evaluator imports it from when it is built).
    monkeypatch.setattr(
        extractive_qa,
        "predict_answers",
        lambda m, f, examples, *a: ["el río Amazonas"] * len(examples),
    )
    config = TrialConfig.from_dict(
        {"task": "qa", "data_source": "local", "data_dir": str(tmp_path), "target_langs": "es"}
    )
    tokenizer = tiny_tokenizer([context, "the Amazon river is long", "Qué río"], 120, tmp_path)
    evaluator = TASKS["qa"].evaluator(config, None, tokenizer, torch.device("cpu"))
    metrics, _ = evaluator.evaluate()
    assert metrics["mlqa/es/exact_match"] == 1.0 and metrics["mlqa/es/f1"] == 1.0
    assert metrics["xquad/es/exact_match"] == 0.0
    assert metrics["xquad/es/f1"] == pytest.approx(0.8)
    # MLQA under SQuAD v1.1's normalisation too, by name (efimov2023's released evaluation
    # scores MLQA so): "el" kept, precision 2/3, recall 1; the other sets' is their own F1
    assert metrics["mlqa/es/f1_squad"] == pytest.approx(0.8)
    assert metrics["xquad/es/f1_squad"] == metrics["xquad/es/f1"]
