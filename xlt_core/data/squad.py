"""Extractive QA data in the SQuAD v1.1 format: training (SQuAD, or offline the English
TyDiQA-GoldP train file) and the zero-shot evaluation sets XQuAD, MLQA and TyDiQA-GoldP;
or all of them synthetic (`synthetic_qa.py`, the offline default).

An evaluation set is read per (question language, context language): the same language
for the monolingual sets; English and a target language for the cross-lingual directions
(`CROSS_LINGUAL_SETS`). MLQA ships each direction as its own file; XQuAD's are built by
pairing its parallel files by question id (`cross_lingual`). MLQA is read from its `dev`
or its `test` split (`mlqa_split`; test: about 5K questions per language).

Local layout (XTREME downloads): `tydiqa/tydiqa.goldp.en.train.json` (training),
`tydiqa/tydiqa.goldp.<lang>.dev.json`, `xquad/xquad.<lang>.json`,
`mlqa/<split>-context-<context lang>-question-<question lang>.json`. Hub: `rajpurkar/squad`
(train/validation), `google/xquad` (`xquad.<lang>`, validation), `facebook/mlqa`
(`mlqa.<context lang>.<question lang>`, validation or test),
`google-research-datasets/tydiqa` (`secondary_task`, the gold passages, validation: every
language in one split, each question's id starting with its language's name).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

from xlt_core.data.examples import QAExample
from xlt_core.data.synthetic_qa import (
    SYNTHETIC_QA_LANGUAGES,
    synthetic_qa_eval,
    synthetic_qa_training,
)
from xlt_core.errors import DataError

EVAL_SETS = ("xquad", "mlqa", "tydiqa")
SQUAD_HUB_ID = "rajpurkar/squad"  # English training (and its dev split)
# The sets whose questions are also asked of another language's contexts: XQuAD (the same
# questions and paragraphs in every language) and MLQA (its cross-lingual files).
CROSS_LINGUAL_SETS = ("xquad", "mlqa")
_LOCAL_EVAL_FILES = {
    "xquad": "xquad/xquad.{context}.json",
    "mlqa": "mlqa/{split}-context-{context}-question-{question}.json",
    "tydiqa": "tydiqa/tydiqa.goldp.{context}.dev.json",
}
_LOCAL_TRAIN = {
    "train": "tydiqa/tydiqa.goldp.en.train.json",
    "dev": "tydiqa/tydiqa.goldp.en.dev.json",
}
HUB_EVAL_LANGUAGES = {
    "xquad": ("ar", "de", "el", "en", "es", "hi", "ro", "ru", "th", "tr", "vi", "zh"),
    "mlqa": ("ar", "de", "en", "es", "hi", "vi", "zh"),
    "tydiqa": ("ar", "bn", "en", "fi", "id", "ko", "ru", "sw", "te"),
}
# TyDiQA-GoldP ids start with the language's English name ("russian-<digits>-0").
TYDIQA_LANGUAGE_NAMES = {
    "ar": "arabic",
    "bn": "bengali",
    "en": "english",
    "fi": "finnish",
    "id": "indonesian",
    "ko": "korean",
    "ru": "russian",
    "sw": "swahili",
    "te": "telugu",
}
_HUB_MLQA_SPLITS = {"dev": "validation", "test": "test"}


# Share of the local English train file held out as dev when the dev file is unlabelled.
DEV_HOLDOUT_SHARE = 0.1


def load_training(source: str, split: str, data_dir: str | None) -> list[QAExample]:
    """English training (`train`) or model-selection (`dev`) examples.

    Locally, XTREME's copy of the TyDiQA-GoldP dev files has blank answers (its labels are
    withheld), so selection on it would compare every prediction with ""; then the last
    DEV_HOLDOUT_SHARE of the English train file is the dev set and the rest the training set."""
    if source == "synthetic":
        return synthetic_qa_training(split)
    if source == "local":
        dev_path = Path(data_dir) / _LOCAL_TRAIN["dev"]
        if dev_path.is_file() and is_labelled(read_squad_json(dev_path)):
            return list(read_squad_json(Path(data_dir) / _LOCAL_TRAIN[split]))
        train = read_squad_json(Path(data_dir) / _LOCAL_TRAIN["train"])
        cut = len(train) - max(1, int(DEV_HOLDOUT_SHARE * len(train)))
        return list(train[:cut] if split == "train" else train[cut:])
    return list(_load_hub(SQUAD_HUB_ID, None, "train" if split == "train" else "validation"))


def load_eval_set(
    source: str,
    name: str,
    lang: str,
    data_dir: str | None,
    mlqa_split: str = "dev",
    context_lang: str | None = None,
) -> list[QAExample]:
    """The questions of an evaluation set in `lang`, asked of its contexts in `context_lang`
    (default: `lang`; another language only for the CROSS_LINGUAL_SETS)."""
    context_lang = context_lang or lang
    if context_lang != lang:
        if name not in CROSS_LINGUAL_SETS:
            raise DataError(f"{name} has no cross-lingual directions ({lang}-{context_lang})")
        if name == "xquad" or source == "synthetic":  # parallel files: paired by question id
            return cross_lingual(
                load_eval_set(source, name, lang, data_dir, mlqa_split),
                load_eval_set(source, name, context_lang, data_dir, mlqa_split),
            )
    if source == "synthetic":
        return synthetic_qa_eval(name, lang)
    if source == "local":
        path = _local_eval_path(name, lang, context_lang, data_dir, mlqa_split)
        return list(read_squad_json(path))
    if name == "xquad":
        return list(_load_hub("google/xquad", f"xquad.{lang}", "validation"))
    if name == "mlqa":
        config = f"mlqa.{context_lang}.{lang}"
        return list(_load_hub("facebook/mlqa", config, _HUB_MLQA_SPLITS[mlqa_split]))
    return _tydiqa_hub(lang)


def has_eval_set(
    source: str,
    name: str,
    lang: str,
    data_dir: str | None,
    mlqa_split: str = "dev",
    context_lang: str | None = None,
) -> bool:
    """Whether an evaluation set exists in this direction, without reading it: a local
    MLQA direction needs its own file; the others are the languages' monolingual sets."""
    context_lang = context_lang or lang
    if context_lang != lang and name not in CROSS_LINGUAL_SETS:
        return False
    if context_lang != lang and source == "local" and name == "mlqa":
        return _local_eval_path(name, lang, context_lang, data_dir, mlqa_split).is_file()
    available = available_eval_languages(source, name, data_dir, mlqa_split)
    return lang in available and context_lang in available


def available_eval_languages(
    source: str, name: str, data_dir: str | None, mlqa_split: str = "dev"
) -> list[str]:
    """Languages of an evaluation set's monolingual files: a directory listing, or the hub's
    known configs, or the synthetic set's."""
    if source == "hub":
        return list(HUB_EVAL_LANGUAGES[name])
    if source == "synthetic":
        return list(SYNTHETIC_QA_LANGUAGES[name])
    template = _LOCAL_EVAL_FILES[name].replace("{split}", mlqa_split)
    regex = re.compile(
        re.escape(template)
        .replace(re.escape("{context}"), "(?P<context>[a-z]+)")
        .replace(re.escape("{question}"), "(?P<question>[a-z]+)")
        + "$"
    )
    found = (
        (regex.match(str(path.relative_to(data_dir))), path)
        for path in Path(data_dir).glob(template.format(context="*", question="*"))
    )
    # Monolingual files only (MLQA names the question's language beside the context's);
    # files with blank answers (XTREME's unlabelled TyDiQA-GoldP dev copies) cannot be scored.
    return sorted(
        match["context"]
        for match, path in found
        if match
        and match.groupdict().get("question", match["context"]) == match["context"]
        and is_labelled(read_squad_json(path))
    )


def _local_eval_path(
    name: str, question_lang: str, context_lang: str, data_dir: str, mlqa_split: str
) -> Path:
    relative = _LOCAL_EVAL_FILES[name].format(
        split=mlqa_split, context=context_lang, question=question_lang
    )
    return Path(data_dir) / relative


def _tydiqa_hub(lang: str) -> list[QAExample]:
    """One language's TyDiQA-GoldP questions: the hub keeps them all in one split."""
    if lang not in TYDIQA_LANGUAGE_NAMES:
        raise DataError(
            f"TyDiQA-GoldP has no language {lang!r}; it has {', '.join(TYDIQA_LANGUAGE_NAMES)}"
        )
    prefix = f"{TYDIQA_LANGUAGE_NAMES[lang]}-"
    rows = _load_hub("google-research-datasets/tydiqa", "secondary_task", "validation")
    return [example for example in rows if example.id.startswith(prefix)]


def is_labelled(examples) -> bool:
    """Whether any question has a non-blank gold answer."""
    return any(answer.strip() for example in examples for answer in example.answers)


def cross_lingual(
    questions_from: list[QAExample], contexts_from: list[QAExample]
) -> list[QAExample]:
    """Parallel sets (XQuAD, the synthetic sets: the same ids in every language): the
    questions of one language asked of the other language's contexts, answered in the
    context's language."""
    by_id = {example.id: example for example in questions_from}
    return [
        replace(example, question=by_id[example.id].question)
        for example in contexts_from
        if example.id in by_id
    ]


@lru_cache(maxsize=32)  # bounded: a Ray worker runs many trials
def read_squad_json(path: Path) -> tuple[QAExample, ...]:
    if not path.is_file():
        raise DataError(
            f"QA file not found: {path}; expected SQuAD v1.1 JSON (e.g. "
            "<data_dir>/xquad/xquad.es.json)"
        )
    try:
        articles = json.loads(path.read_text(encoding="utf-8"))["data"]
        examples = tuple(
            QAExample(
                qa["id"],
                qa["question"],
                paragraph["context"],
                tuple(a["text"] for a in qa["answers"]),
                qa["answers"][0]["answer_start"],
            )
            for article in articles
            for paragraph in article["paragraphs"]
            for qa in paragraph["qas"]
        )
    except (json.JSONDecodeError, KeyError, IndexError, TypeError) as error:
        raise DataError(
            f"{path}: not SQuAD v1.1 JSON "
            f"(data/paragraphs/qas with id, question, answers[text, answer_start]): {error!r}"
        ) from None
    if not examples:
        raise DataError(f"{path}: no questions")
    return examples


@lru_cache(maxsize=32)  # bounded: a Ray worker runs many trials
def _load_hub(dataset: str, config: str | None, split: str) -> tuple[QAExample, ...]:
    from datasets import load_dataset

    rows = load_dataset(dataset, config, split=split)
    return tuple(
        QAExample(
            row["id"],
            row["question"],
            row["context"],
            tuple(row["answers"]["text"]),
            row["answers"]["answer_start"][0],
        )
        for row in rows
    )
