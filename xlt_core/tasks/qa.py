"""Extractive QA (SQuAD v1.1 format) into XQuAD, MLQA and TyDiQA-GoldP, behind the task
protocol.

Fine-tune on English (SQuAD, the English TyDiQA-GoldP train file, or the synthetic set's),
select on English dev F1, evaluate on every evaluation set that has the trial's languages: metrics
`<set>/<lang>/f1` and `<set>/<lang>/exact_match` (set = xquad, mlqa, tydiqa; the split
position holds the set, so analysis makes one table per set; scored as XTREME does: MLQA with
MLQA's per-language normalisation, the others with SQuAD v1.1's; `<set>/<lang>/f1_squad` is
F1 under SQuAD v1.1's normalisation on every set, on MLQA what efimov2023's released
evaluation reports), and on XQuAD and MLQA the
cross-lingual directions `<set>/<q>-<c>/...` (questions in language q asked of contexts in
c; `<target>-en` and `en-<target>`; efimov2023 Table 4). MLQA is its `mlqa_split`. Windows of
max_seq_length tokens overlap by max_seq_length // 3 (XTREME: 384 and 128). Objectives:
fine-tuning, ADV and RS-RP (the head's start/end loss); EAR and RS-DA copy sentence pairs.
Every adaptation.
"""

from __future__ import annotations

from xlt_core.config import TrialConfig
from xlt_core.data.squad import (
    CROSS_LINGUAL_SETS,
    EVAL_SETS,
    available_eval_languages,
    has_eval_set,
    load_eval_set,
    load_training,
)
from xlt_core.errors import ConfigError, DataError
from xlt_core.tasks.base import DeclaredTask, SetEvaluator, limit
from xlt_core.tasks.qa_scoring import SQUAD_F1, normalizer_for, score_answers, with_squad_f1


def qa_eval_plan(config: TrialConfig) -> dict[str, list[str]]:
    """Per evaluation set, the languages to evaluate (English and the target languages it
    has). A set without files is absent; a set whose file is malformed raises DataError."""
    plan = {}
    for name in EVAL_SETS:
        available = set(
            available_eval_languages(config.data_source, name, config.data_dir, config.mlqa_split)
        )
        langs = [lang for lang in (config.source_lang, *config.target_langs) if lang in available]
        if langs:
            plan[name] = langs
    return plan


def check_training(config: TrialConfig) -> None:
    """Refuse a local directory without the English training file (XSR trains on it too)."""
    if config.data_source != "local":
        return
    try:
        for split in ("train", "dev"):
            load_training("local", split, config.data_dir)
    except DataError as error:
        raise ConfigError("data_dir", config.data_dir, str(error)) from None


class QATask(DeclaredTask):
    def check(self, config: TrialConfig) -> None:
        check_training(config)
        try:
            covered = {lang for langs in qa_eval_plan(config).values() for lang in langs}
        except DataError as error:
            raise ConfigError("data_dir", config.data_dir, str(error)) from None
        missing = [lang for lang in config.target_langs if lang not in covered]
        if missing:
            raise ConfigError(
                "target_langs",
                ",".join(missing),
                f"languages of at least one of {', '.join(EVAL_SETS)} "
                f"(found: {', '.join(sorted(covered)) or 'none'})",
            )

    def read(self, config: TrialConfig) -> None:
        self._evaluation_sets(config)
        self.load_training(config)

    def num_labels(self, config: TrialConfig) -> int:
        return 2  # unused by the QA head (start and end logits)

    def load_training(self, config: TrialConfig):
        examples = load_training(config.data_source, "train", config.data_dir)
        return limit(examples, config.max_train_examples)

    def training_texts(self, examples) -> list[str]:
        return [text for example in examples for text in (example.question, example.context)]

    def encoder(self, config: TrialConfig, tokenizer, training_examples):
        from xlt_core.tasks.extractive_qa import QATrainingSet, encode_qa

        def encode(examples) -> QATrainingSet:
            features = encode_qa(tokenizer, examples, config.max_seq_length, _stride(config))
            return QATrainingSet(features, tokenizer.pad_token_id)

        return encode

    def evaluator(self, config: TrialConfig, model, tokenizer, device) -> SetEvaluator:
        return set_evaluator(config, model, tokenizer, device, self._evaluation_sets(config))

    def _evaluation_sets(self, config: TrialConfig) -> dict:
        source, sets = config.source_lang, {}
        for name, langs in qa_eval_plan(config).items():
            directions = [(lang, lang) for lang in langs]
            if name in CROSS_LINGUAL_SETS and source in langs:
                targets = [lang for lang in langs if lang != source]
                directions += [
                    pair for lang in targets for pair in ((lang, source), (source, lang))
                ]
            for question, context in directions:
                where = (config.data_source, name, question, config.data_dir, config.mlqa_split)
                if has_eval_set(*where, context):
                    key = question if question == context else f"{question}-{context}"
                    sets[(name, key)] = load_eval_set(*where, context)
        count = config.max_eval_examples
        return dev_set(config) | {key: limit(examples, count) for key, examples in sets.items()}


def dev_set(config: TrialConfig) -> dict:
    """The English dev set that selects a QA model, alone (what XSR's QA fine-tuning reads)."""
    examples = load_training(config.data_source, "dev", config.data_dir)
    return {("dev", config.source_lang): limit(examples, config.max_eval_examples)}


def set_evaluator(config: TrialConfig, model, tokenizer, device, sets: dict) -> SetEvaluator:
    """The evaluator of these QA sets (keyed (set, lang)); the dev set among them selects."""
    from xlt_core.tasks.extractive_qa import encode_qa, predict_answers

    features = {
        key: encode_qa(tokenizer, examples, config.max_seq_length, _stride(config))
        for key, examples in sets.items()
    }

    def score(key):
        batch_size, pad_id = 2 * config.batch_size, tokenizer.pad_token_id
        answers = predict_answers(
            model,
            features[key],
            sets[key],
            batch_size,
            pad_id,
            device,
            config.eval_token_budget(),
        )
        scored = score_answers(answers, sets[key], normalizer_for(*key))
        return with_squad_f1(scored, sets[key], key[0])

    dev = ("dev", config.source_lang)
    return SetEvaluator(score, list(sets), dev, "f1", extra_metrics=("exact_match", SQUAD_F1))


def _stride(config: TrialConfig) -> int:
    return config.max_seq_length // 3
