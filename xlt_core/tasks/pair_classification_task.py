"""The sentence-pair classification task (XNLI, PAWS-X) behind the task protocol.

It supports every objective (EAR and RS-DA copy a sentence pair word by word and keep its
label) and every adaptation. It trains on `source_lang` (English, or a translated training
set) and selects on the dev set of `config.dev_lang`. Evaluation sets: English dev (and the
selecting dev), every test language, and on request the generalized pairs and the
mixed-language set (`tasks/pair_evaluation_sets.py`).
"""

from __future__ import annotations

from pathlib import Path

from xlt_core.config import TrialConfig
from xlt_core.data.loading import check_data, load_split
from xlt_core.registry import DeclarationError, TaskDeclaration
from xlt_core.tasks.base import DeclaredTask, SetEvaluator
from xlt_core.tasks.pair_evaluation_sets import evaluation_sets


class PairClassificationTask(DeclaredTask):
    """Any sentence-pair classification task: its declaration names its loader, language
    lister and labels (`data/loading.py` reads through them)."""

    def __init__(self, declaration: TaskDeclaration):
        for name in ("labels", "loader", "lister"):
            if getattr(declaration, name) is None:
                raise DeclarationError("task", declaration.name, name, "required by a pair task")
        super().__init__(declaration)

    def check(self, config: TrialConfig) -> None:
        check_data(config)

    def read(self, config: TrialConfig) -> None:
        load_split(config, "train", config.source_lang)
        evaluation_sets(config)  # also checks that generalized/mixed sets are parallel

    def load_training(self, config: TrialConfig):
        return load_split(config, "train", config.source_lang)

    def training_texts(self, examples) -> list[str]:
        return [text for example in examples for text in (example.sentence1, example.sentence2)]

    def encoder(self, config: TrialConfig, tokenizer, training_examples):
        from xlt_core.tasks.pair_encoding_and_scoring import PairTrainingSet, encode_pairs

        def encode(examples) -> PairTrainingSet:
            # The plain training set is the same for every trial: cache it on disk too.
            persist = Path(config.cache_dir) if examples is training_examples else None
            encoded = encode_pairs(tokenizer, examples, config.max_seq_length, persist)
            return PairTrainingSet(encoded, tokenizer.pad_token_id)

        return encode

    def evaluator(self, config: TrialConfig, model, tokenizer, device) -> SetEvaluator:
        from xlt_core.tasks.pair_encoding_and_scoring import (
            encode_pairs,
            predict,
            score_predictions,
        )

        cache = Path(config.cache_dir)
        sets = {
            key: encode_pairs(tokenizer, examples, config.max_seq_length, cache)
            for key, examples in evaluation_sets(config).items()
        }

        def score(key):
            encoded = sets[key]
            batch_size, pad_id = 2 * config.batch_size, tokenizer.pad_token_id
            budget = config.eval_token_budget()
            predictions = predict(
                model, encoded, batch_size, pad_id, device, budget, config.precision
            )
            return score_predictions(predictions, encoded.labels)

        return SetEvaluator(score, list(sets), ("dev", config.dev_lang), self.declaration.metric)
