"""Tatoeba sentence retrieval (XSR) with an encoder fine-tuned on QA, behind the task
protocol.

efimov2023 (L119): "Following ?), we fine-tune the model on a QA task" before retrieval.
So an XSR trial trains exactly as a QA trial does: the QA task's English training set,
encoding and objective (`method` finetune), its English dev F1 choosing the checkpoint
(reported as `dev/<source>/f1`), continual alignment during that fine-tuning for
`adjusted_continual`; then it ranks with the fine-tuned encoder (the QA model's
`base_model`). Adaptations: none (the original encoder), adjusted, adjusted_continual.
Target-language queries are ranked against all English sentences of the same part; per
layer, the MRR of the gold translation.

Choosing the reported layer on the test queries would be selection on test, so the first
XSR_DEV_PAIRS pairs of each language (a dev part) choose it, and the remaining pairs (at
most `max_eval_examples`) are the test: `test/<lang>/mrr` at the chosen layer
(per-query reciprocal ranks as the example scores), `test/<lang>/mrr_layer_<k>` for every
layer k (0 = embeddings), `xsr_layer/<lang>` the chosen layer, and `dev/<lang>/mrr` and
`dev/pooled/mrr` (all dev queries; what the report selects on).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from xlt_core.config import TrialConfig
from xlt_core.data.tatoeba import available_tatoeba_languages, load_tatoeba
from xlt_core.errors import ConfigError, DataError
from xlt_core.tasks import qa
from xlt_core.tasks.base import SetEvaluator, data_location
from xlt_schema import example_scores_key, metric_key

if TYPE_CHECKING:
    import torch

# The first XSR_DEV_PAIRS pairs of each language choose the layer; the rest are the test.
XSR_DEV_PAIRS = 100


@dataclass
class RetrievalEvaluator:
    config: TrialConfig
    model: torch.nn.Module
    tokenizer: object
    device: torch.device
    qa_dev: SetEvaluator  # the QA fine-tuning's English dev set

    def dev_metric(self) -> float:
        """QA's English dev F1: it chooses the QA fine-tuning's checkpoint, as in a QA trial."""
        return self.qa_dev.dev_metric()

    def _ranks_per_layer(self, pairs) -> np.ndarray:
        from xlt_core.tasks.retrieval import layer_sentence_vectors, mrr_per_layer

        encoder, config = self.model.base_model.to(self.device), self.config

        def vectors(sentences):
            return layer_sentence_vectors(
                encoder,
                self.tokenizer,
                sentences,
                config.max_seq_length,
                2 * config.batch_size,
                self.device,
                config.eval_token_budget(),
            )

        return mrr_per_layer(vectors(pairs.queries), vectors(pairs.english))

    def evaluate(self):
        from xlt_core.tasks.retrieval import choose_layer

        config, pooled = self.config, []
        metrics, scores = self.qa_dev.evaluate()
        for lang in config.target_langs:
            pairs = load_tatoeba(config.data_source, lang, config.data_dir)
            if len(pairs) <= XSR_DEV_PAIRS:
                raise DataError(
                    f"Tatoeba {lang}: {len(pairs)} pairs, need more than the "
                    f"{XSR_DEV_PAIRS} dev pairs that choose the layer"
                )
            dev_ranks = self._ranks_per_layer(pairs.select(0, XSR_DEV_PAIRS))
            layer = choose_layer(dev_ranks.mean(axis=1))
            count = config.max_eval_examples
            test_ranks = self._ranks_per_layer(
                pairs.select(XSR_DEV_PAIRS, XSR_DEV_PAIRS + count if count else None)
            )
            metrics[f"xsr_layer/{lang}"] = layer
            for k, row in enumerate(test_ranks):
                metrics[metric_key("test", lang, f"mrr_layer_{k}")] = float(row.mean())
            for split, ranks in (("dev", dev_ranks[layer]), ("test", test_ranks[layer])):
                metrics[metric_key(split, lang, "mrr")] = float(ranks.mean())
                scores[example_scores_key(split, lang)] = {
                    "split": split,
                    "lang": lang,
                    "metric": "mrr",
                    "layer": layer,
                    "scores": ranks.tolist(),
                }
            pooled.append(dev_ranks[layer])
        metrics[metric_key("dev", "pooled", "mrr")] = float(np.concatenate(pooled).mean())
        return metrics, scores


class RetrievalTask(qa.QATask):
    """Trains as the QA task does (its training set, texts and encoder); evaluates by
    retrieval."""

    def check(self, config: TrialConfig) -> None:
        qa.check_training(config)
        try:
            available = available_tatoeba_languages(config.data_source, config.data_dir)
        except DataError as error:
            raise ConfigError("data_source", config.data_source, str(error)) from None
        missing = [
            lang for lang in config.target_langs if available is not None and lang not in available
        ]
        if missing:
            raise ConfigError(
                "target_langs",
                ",".join(missing),
                f"languages with Tatoeba pairs in {data_location(config, 'tatoeba')}: "
                f"{', '.join(available) or 'none'}",
            )

    def read(self, config: TrialConfig) -> None:
        qa.dev_set(config)
        self.load_training(config)
        for lang in config.target_langs:
            load_tatoeba(config.data_source, lang, config.data_dir)

    def evaluator(self, config: TrialConfig, model, tokenizer, device) -> RetrievalEvaluator:
        qa_dev = qa.set_evaluator(config, model, tokenizer, device, qa.dev_set(config))
        return RetrievalEvaluator(config, model, tokenizer, device, qa_dev)
