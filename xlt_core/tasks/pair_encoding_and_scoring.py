"""Sentence-pair classification (XNLI, PAWS-X): encoding (cached, `encoding_cache`),
training sets, prediction and scoring. Padding and batching are `xlt_core.batching`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import torch
from transformers import PreTrainedTokenizerBase

from xlt_core.batching import PaddedTrainingSet, pad_batch, rows, token_budget_batches
from xlt_core.data.examples import PairExample
from xlt_core.encoding_cache import cached_encoding, encoding_key
from xlt_core.precision import autocast


@dataclass(frozen=True)
class EncodedPairs:
    """Token ids of sentence pairs, unpadded: each batch is padded to its own longest row."""

    input_ids: list[list[int]]
    token_type_ids: list[list[int]]
    labels: list[int]

    def __len__(self) -> int:
        return len(self.labels)


def encode_pairs(
    tokenizer: PreTrainedTokenizerBase,
    examples: Sequence[PairExample],
    max_length: int,
    cache_dir: Path | None = None,
) -> EncodedPairs:
    """Tokenise once per (examples, tokenizer, max_length): kept in memory, and on disk when
    `cache_dir` is given so that every trial on the machine reuses it."""
    key = encoding_key(
        tokenizer, max_length, (f"{e.sentence1}\t{e.sentence2}\t{e.label}" for e in examples)
    )

    def encode() -> EncodedPairs:
        batch = tokenizer(
            [e.sentence1 for e in examples],
            [e.sentence2 for e in examples],
            truncation=True,
            max_length=max_length,
            return_token_type_ids=True,
        )
        return EncodedPairs(
            batch["input_ids"], batch["token_type_ids"], [e.label for e in examples]
        )

    return cached_encoding(key, EncodedPairs, encode, cache_dir)


class PairTrainingSet(PaddedTrainingSet):
    def rows(self, indices):
        return rows(self.encoded, indices)

    def targets(self, indices, width):
        return {"labels": torch.tensor([self.encoded.labels[i] for i in indices])}


@torch.no_grad()
def predict(
    model,
    encoded: EncodedPairs,
    batch_size: int,
    pad_id: int,
    device: torch.device,
    tokens_per_batch: int | None = None,
    precision: str = "bf16",
) -> np.ndarray:
    """Predicted label per example, in the examples' order; batches by length within a
    token budget (`token_budget_batches`), so that little padding is computed; under the
    trial's `precision` (`xlt_core.precision`)."""
    model.eval()
    lengths = [len(ids) for ids in encoded.input_ids]
    predictions = np.empty(len(encoded), dtype=np.int64)
    for chunk in token_budget_batches(lengths, batch_size, tokens_per_batch):
        batch = {k: v.to(device) for k, v in pad_batch(rows(encoded, chunk), pad_id).items()}
        with autocast(device, precision):
            logits = model(**batch).logits
        predictions[chunk] = logits.argmax(dim=-1).cpu().numpy()
    return predictions


def score_predictions(predictions: np.ndarray, labels: Sequence[int]) -> dict:
    """Accuracy and the per-example correctness that paired significance tests need."""
    correct = (np.asarray(predictions) == np.asarray(labels)).astype(float)
    return {
        "metric": "accuracy",
        "value": float(correct.mean()),
        "scores": correct.tolist(),
        "predictions": np.asarray(predictions).tolist(),
        "labels": list(labels),
    }
