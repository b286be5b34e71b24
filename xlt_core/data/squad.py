"""Extractive QA data in the SQuAD v1.1 format: training (SQuAD, or offline the English
TyDiQA-GoldP train file) and the zero-shot evaluation sets XQuAD, MLQA and TyDiQA-GoldP;
or all of them synthetic (`synthetic_qa.py`, the offline default).

Local layout (XTREME downloads): `tydiqa/tydiqa.goldp.en.train.json` (training),
`tydiqa/tydiqa.goldp.<lang>.dev.json`, `xquad/xquad.<lang>.json`,
`mlqa/dev-context-<lang>-question-<lang>.json`. Hub: `rajpurkar/squad` (train/validation),
`google/xquad` (`xquad.<lang>`, validation), `facebook/mlqa` (`mlqa.<lang>.<lang>`,
validation). TyDiQA-GoldP is read locally only (the hub copy is not split by language).
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
_LOCAL_EVAL_FILES = {
    "xquad": "xquad/xquad.{lang}.json",
    "mlqa": "mlqa/dev-context-{lang}-question-{lang}.json",
    "tydiqa": "tydiqa/tydiqa.goldp.{lang}.dev.json",
}
_LOCAL_TRAIN = {
    "train": "tydiqa/tydiqa.goldp.en.train.json",
    "dev": "tydiqa/tydiqa.goldp.en.dev.json",
}
HUB_EVAL_LANGUAGES = {
    "xquad": ("ar", "de", "el", "en", "es", "hi", "ro", "ru", "th", "tr", "vi", "zh"),
    "mlqa": ("ar", "de", "en", "es", "hi", "vi", "zh"),
    "tydiqa": (),
}


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
    return list(_load_hub("rajpurkar/squad", None, "train" if split == "train" else "validation"))


def load_eval_set(source: str, name: str, lang: str, data_dir: str | None) -> list[QAExample]:
    if source == "synthetic":
        return synthetic_qa_eval(name, lang)
    if source == "local":
        return list(read_squad_json(Path(data_dir) / _LOCAL_EVAL_FILES[name].format(lang=lang)))
    if name == "tydiqa":
        raise DataError(
            "TyDiQA-GoldP is read from local files only: use data_source=local with "
            "<data_dir>/tydiqa/"
        )
    config = f"xquad.{lang}" if name == "xquad" else f"mlqa.{lang}.{lang}"
    return list(
        _load_hub(f"google/{name}" if name == "xquad" else "facebook/mlqa", config, "validation")
    )


def available_eval_languages(source: str, name: str, data_dir: str | None) -> list[str]:
    """Languages of an evaluation set: a directory listing, or the hub's known configs, or
    the synthetic set's."""
    if source == "hub":
        return list(HUB_EVAL_LANGUAGES[name])
    if source == "synthetic":
        return list(SYNTHETIC_QA_LANGUAGES[name])
    pattern = _LOCAL_EVAL_FILES[name]
    # MLQA names the language twice (context and question): both must be the same.
    regex = re.compile(
        re.escape(pattern)
        .replace(re.escape("{lang}"), "(?P<lang>[a-z]+)", 1)
        .replace(re.escape("{lang}"), "(?P=lang)")
        + "$"
    )
    found = (
        (regex.match(str(path.relative_to(data_dir))), path)
        for path in Path(data_dir).glob(pattern.replace("{lang}", "*"))
    )
    # Files with blank answers (XTREME's unlabelled TyDiQA-GoldP dev copies) cannot be scored.
    return sorted(
        match["lang"] for match, path in found if match and is_labelled(read_squad_json(path))
    )


def is_labelled(examples) -> bool:
    """Whether any question has a non-blank gold answer."""
    return any(answer.strip() for example in examples for answer in example.answers)


def cross_lingual(
    questions_from: list[QAExample], contexts_from: list[QAExample]
) -> list[QAExample]:
    """Parallel sets (XQuAD: the same ids in every language): the questions of one
    language asked of the other language's contexts, answered in the context's language."""
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
