"""WikiANN NER (Pan et al. 2017) as token classification, behind the task protocol.

Training on English, selection on English dev entity F1, evaluation on every target
language: metrics `dev/en/f1`, `test/<lang>/f1` (entity level) and `.../token_f1` (word
level, beside it); per-sentence entity [tp, fp, fn] counts in the scores artifact so a
permutation test can recompute corpus F1. Objectives: fine-tuning and
the perturbation objectives (ADV, RS-RP), which work on any head's loss; EAR and RS-DA
copy sentence pairs and are not defined for tagged sentences. Every adaptation.
"""

from __future__ import annotations

from xlt_core.config import TrialConfig
from xlt_core.data.ner import available_ner_languages, load_ner
from xlt_core.errors import ConfigError, DataError
from xlt_core.tasks.base import DeclaredTask, SetEvaluator, data_location, limit


class NERTask(DeclaredTask):
    def check(self, config: TrialConfig) -> None:
        source = [config.source_lang]
        wanted = {"train": source, "dev": source, "test": list(config.target_langs)}
        for split, langs in wanted.items():
            try:
                available = available_ner_languages(config.data_source, split, config.data_dir)
            except DataError as error:
                raise ConfigError("data_source", config.data_source, str(error)) from None
            missing = [lang for lang in langs if available is not None and lang not in available]
            if missing:
                raise ConfigError(
                    "target_langs" if split == "test" else "source_lang",
                    ",".join(missing),
                    f"languages with NER {split} data in {data_location(config, 'panx')}: "
                    f"{', '.join(available) or 'none'}",
                )

    def read(self, config: TrialConfig) -> None:
        self._evaluation_sets(config)
        self.load_training(config)

    def load_training(self, config: TrialConfig):
        sentences = load_ner(config.data_source, "train", config.source_lang, config.data_dir)
        return limit(sentences, config.max_train_examples)

    def training_texts(self, examples) -> list[str]:
        return [" ".join(sentence.words) for sentence in examples]

    def encoder(self, config: TrialConfig, tokenizer, training_examples):
        from xlt_core.tasks.token_classification import TokenTrainingSet, encode_tokens

        def encode(sentences) -> TokenTrainingSet:
            encoded = encode_tokens(tokenizer, sentences, config.max_seq_length)
            return TokenTrainingSet(encoded, tokenizer.pad_token_id)

        return encode

    def evaluator(self, config: TrialConfig, model, tokenizer, device) -> SetEvaluator:
        from xlt_core.tasks.token_classification import (
            TOKEN_F1,
            encode_tokens,
            predict_tags,
            score_tags,
        )

        sets = {
            key: encode_tokens(tokenizer, sentences, config.max_seq_length)
            for key, sentences in self._evaluation_sets(config).items()
        }

        def score(key):
            encoded = sets[key]
            batch_size, pad_id = 2 * config.batch_size, tokenizer.pad_token_id
            budget = config.eval_token_budget()
            predictions = predict_tags(model, encoded, batch_size, pad_id, device, budget)
            return score_tags(predictions, encoded.tags)

        dev = ("dev", config.source_lang)
        return SetEvaluator(score, list(sets), dev, "f1", extra_metrics=(TOKEN_F1,))

    def _evaluation_sets(self, config: TrialConfig) -> dict:
        keys = [("dev", config.source_lang), *(("test", lang) for lang in config.target_langs)]
        return {
            (split, lang): limit(
                load_ner(config.data_source, split, lang, config.data_dir), config.max_eval_examples
            )
            for split, lang in keys
        }
