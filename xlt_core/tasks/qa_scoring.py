"""Extractive QA scoring as the official evaluation scripts compute it: normalised exact
match and bag-of-tokens F1, each the best over the gold answers.

Two normalisations, chosen per evaluation set as XTREME does (SQuAD v1.1's script for
SQuAD, XQuAD and TyDiQA-GoldP; MLQA's own script for MLQA):

- SQuAD v1.1: lower case, drop ASCII punctuation, drop the articles a/an/the, split on
  whitespace.
- MLQA (`mlqa_evaluation_v1.py`), per answer language: lower case; drop every Unicode
  punctuation character (category P*) and ASCII's punctuation (which has symbols such as
  `$` and `+`, category S); drop that language's articles; split on whitespace, except
  Chinese, which is segmented mixed: each CJK ideograph (U+4E00-U+9FA5) is a token and runs
  of other characters are split on whitespace.
"""

from __future__ import annotations

import collections
import re
import string
import unicodedata
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np

from xlt_core.data.examples import QAExample

Normalizer = Callable[[str], str]

_ASCII_PUNCTUATION = frozenset(string.punctuation)
_ENGLISH_ARTICLES = re.compile(r"\b(a|an|the)\b")

# MLQA's articles per answer language (None: the language has none).
_MLQA_ARTICLES = {
    "en": _ENGLISH_ARTICLES,
    "es": re.compile(r"\b(un|una|unos|unas|el|la|los|las)\b"),
    "de": re.compile(r"\b(ein|eine|einen|einem|eines|einer|der|die|das|den|dem|des)\b"),
    "vi": re.compile(r"\b(của|là|cái|chiếc|những)\b"),
    # The official pattern's other alternative can never match, so every "ال" goes,
    # inside words too: this is what MLQA's published scores were computed with.
    "ar": re.compile("ال"),
    "hi": None,
    "zh": None,
}
_MIXED_SEGMENTATION = ("zh",)
_CJK_IDEOGRAPH = re.compile("([\u4e00-\u9fa5])")


def normalize_squad(text: str) -> str:
    """SQuAD v1.1: lower case, no ASCII punctuation, no a/an/the, single spaces."""
    text = "".join(ch for ch in text.lower() if ch not in _ASCII_PUNCTUATION)
    return " ".join(_ENGLISH_ARTICLES.sub(" ", text).split())


def normalize_mlqa(text: str, lang: str) -> str:
    """MLQA's normalisation of an answer in language `lang` (one of en es de vi ar hi zh)."""
    if lang not in _MLQA_ARTICLES:
        raise ValueError(f"MLQA scores answers in {', '.join(_MLQA_ARTICLES)}, not {lang!r}")
    text = "".join(ch for ch in text.lower() if not _is_mlqa_punctuation(ch))
    articles = _MLQA_ARTICLES[lang]
    if articles is not None:
        text = articles.sub(" ", text)
    if lang in _MIXED_SEGMENTATION:
        text = _CJK_IDEOGRAPH.sub(r" \1 ", text)  # each ideograph its own token
    return " ".join(text.split())


def _is_mlqa_punctuation(ch: str) -> bool:
    return ch in _ASCII_PUNCTUATION or unicodedata.category(ch).startswith("P")


def normalizer_for(eval_set: str, lang: str) -> Normalizer:
    """The normalisation of an evaluation set's answers: MLQA's rules in the answers'
    language for MLQA, SQuAD v1.1's for everything else (English dev, XQuAD and its
    cross-lingual directions, TyDiQA-GoldP), as XTREME scores them. `lang` is a language or
    a direction `<question lang>-<context lang>`, whose answers are in the context's
    language (MLQA's script takes the context language as the answer language)."""
    if eval_set == "mlqa":
        return partial(normalize_mlqa, lang=lang.split("-")[-1])
    return normalize_squad


# F1 under SQuAD v1.1's normalisation whatever the set (`<set>/<lang>/f1_squad`): on MLQA what
# efimov2023's released evaluation reports (its run_qa.py loads SQuAD's metric script for
# MLQA), beside MLQA's own `f1`; on every other set the same as `f1`.
SQUAD_F1 = "f1_squad"


def with_squad_f1(scored: dict, examples: Sequence[QAExample], eval_set: str) -> dict:
    """`scored` (`score_answers`) with its F1 under SQuAD v1.1's normalisation (`SQUAD_F1`):
    recomputed from its predictions on MLQA, its own F1 on every other set."""
    if eval_set != "mlqa":
        return {**scored, SQUAD_F1: scored["value"]}
    return {
        **scored,
        SQUAD_F1: score_answers(scored["predictions"], examples, normalize_squad)["value"],
    }


def exact_match(prediction: str, gold: str, normalize: Normalizer = normalize_squad) -> float:
    return float(normalize(prediction) == normalize(gold))


def token_f1(prediction: str, gold: str, normalize: Normalizer = normalize_squad) -> float:
    predicted, expected = normalize(prediction).split(), normalize(gold).split()
    common = sum((collections.Counter(predicted) & collections.Counter(expected)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)


def score_answers(
    predictions: Sequence[str], examples: Sequence[QAExample], normalize: Normalizer
) -> dict:
    """Per-question F1 and EM (each the best over the gold answers), their means ×1 (not
    %), and the predictions; `scores` (F1) is what the paired t-test reads."""
    pairs = list(zip(predictions, examples, strict=True))
    f1 = [max(token_f1(p, gold, normalize) for gold in e.answers) for p, e in pairs]
    em = [max(exact_match(p, gold, normalize) for gold in e.answers) for p, e in pairs]
    return {
        "metric": "f1",
        "value": float(np.mean(f1)),
        "exact_match": float(np.mean(em)),
        "scores": f1,
        "exact_match_scores": em,
        "predictions": list(predictions),
        "labels": [list(e.answers) for e in examples],
    }
