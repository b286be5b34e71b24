"""Sentence-pair classification (XNLI, PAWS-X): encoding, batching and scoring; the padding
and token-budget evaluation batches every task shares."""

from __future__ import annotations

import hashlib
import os
import tempfile
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch
from transformers import PreTrainedTokenizerBase

from xlt_core.data.examples import PairExample
from xlt_core.precision import autocast


@dataclass(frozen=True)
class EncodedPairs:
    """Token ids of sentence pairs, unpadded: each batch is padded to its own longest row."""

    input_ids: list[list[int]]
    token_type_ids: list[list[int]]
    labels: list[int]

    def __len__(self) -> int:
        return len(self.labels)


# Encodings reused within one process (a Ray worker runs many trials): the few most recent.
_MEMORY_CACHE_SIZE = 8
_memory_cache: OrderedDict[str, EncodedPairs] = OrderedDict()
_fingerprints: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def encode_pairs(
    tokenizer: PreTrainedTokenizerBase,
    examples: Sequence[PairExample],
    max_length: int,
    cache_dir: Path | None = None,
) -> EncodedPairs:
    """Tokenise once per (examples, tokenizer, max_length): kept in memory, and on disk when
    `cache_dir` is given so that every trial on the machine reuses it."""
    key = _cache_key(tokenizer, examples, max_length)
    if key in _memory_cache:
        _memory_cache.move_to_end(key)
        return _memory_cache[key]
    path = cache_dir / "encoded" / f"{key}.pt" if cache_dir else None
    if path is not None and path.exists():
        encoded = EncodedPairs(**torch.load(path))
    else:
        batch = tokenizer(
            [e.sentence1 for e in examples],
            [e.sentence2 for e in examples],
            truncation=True,
            max_length=max_length,
            return_token_type_ids=True,
        )
        encoded = EncodedPairs(
            batch["input_ids"], batch["token_type_ids"], [e.label for e in examples]
        )
        if path is not None:
            _save_atomically(encoded, path)
    _memory_cache[key] = encoded
    if len(_memory_cache) > _MEMORY_CACHE_SIZE:
        _memory_cache.popitem(last=False)
    return encoded


@dataclass
class PaddedTrainingSet:
    """Encoded training items (anything with a length); each batch is padded to its
    longest row (`rows`) and carries the head's targets (`targets`)."""

    encoded: Any
    pad_id: int

    def __len__(self) -> int:
        return len(self.encoded)

    def lengths(self) -> list[int]:
        """Each item's width: the length of its row."""
        return [len(ids) for ids, _ in self.rows(range(len(self)))]

    def rows(self, indices: Sequence[int]) -> list[tuple[list[int], list[int]]]:
        raise NotImplementedError

    def targets(self, indices: Sequence[int], width: int) -> dict[str, torch.Tensor]:
        raise NotImplementedError

    def batch(self, indices: Sequence[int]) -> dict[str, torch.Tensor]:
        batch = pad_batch(self.rows(indices), self.pad_id)
        return batch | self.targets(indices, batch["input_ids"].shape[1])


class PairTrainingSet(PaddedTrainingSet):
    def rows(self, indices):
        return rows(self.encoded, indices)

    def targets(self, indices, width):
        return {"labels": torch.tensor([self.encoded.labels[i] for i in indices])}


def pad_batch(rows: Sequence[tuple[list[int], list[int]]], pad_id: int) -> dict[str, torch.Tensor]:
    """Pad (input_ids, token_type_ids) rows to the longest row of this batch."""
    width = max(len(ids) for ids, _ in rows)
    input_ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    token_type_ids = torch.zeros((len(rows), width), dtype=torch.long)
    attention_mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, (ids, types) in enumerate(rows):
        input_ids[i, : len(ids)] = torch.tensor(ids)
        token_type_ids[i, : len(types)] = torch.tensor(types)
        attention_mask[i, : len(ids)] = 1
    return {
        "input_ids": input_ids,
        "token_type_ids": token_type_ids,
        "attention_mask": attention_mask,
    }


def rows(encoded: EncodedPairs, indices: Sequence[int]) -> list[tuple[list[int], list[int]]]:
    return [(encoded.input_ids[i], encoded.token_type_ids[i]) for i in indices]


def token_budget_batches(
    lengths: Sequence[int], batch_size: int, tokens_per_batch: int | None = None
) -> list[list[int]]:
    """Evaluation batches: row indices sorted by length (ties in index order), each batch
    as many rows as fit the budget of padded tokens (rows x the batch's longest row); a
    row longer than the budget is a batch of its own. Every task's prediction uses it.

    The budget is `tokens_per_batch` (`TrialConfig.eval_token_budget()`), or by default
    `batch_size` x the longest row: the padded tokens of the widest batch that
    `batch_size` rows per batch made, so no batch is bigger than that one was, and
    batches of short rows hold more rows."""
    budget = tokens_per_batch or batch_size * max(lengths, default=1)
    batches: list[list[int]] = []
    current: list[int] = []
    for i in sorted(range(len(lengths)), key=lengths.__getitem__):
        if current and (len(current) + 1) * lengths[i] > budget:
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


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


def _cache_key(
    tokenizer: PreTrainedTokenizerBase, examples: Sequence[PairExample], max_length: int
) -> str:
    digest = hashlib.sha256(f"{_fingerprint(tokenizer)}|{max_length}|".encode())
    for example in examples:
        digest.update(f"{example.sentence1}\t{example.sentence2}\t{example.label}\n".encode())
    return digest.hexdigest()[:24]


def _fingerprint(tokenizer: PreTrainedTokenizerBase) -> str:
    # Hashing the whole tokenizer definition is exact and costs one serialisation per process.
    if tokenizer not in _fingerprints:
        definition = (
            tokenizer.backend_tokenizer.to_str()
            if tokenizer.is_fast
            else repr(sorted(tokenizer.get_vocab().items()))
        )
        _fingerprints[tokenizer] = hashlib.sha256(definition.encode()).hexdigest()
    return _fingerprints[tokenizer]


def _save_atomically(encoded: EncodedPairs, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, staging = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    os.close(handle)
    torch.save(
        {
            "input_ids": encoded.input_ids,
            "token_type_ids": encoded.token_type_ids,
            "labels": encoded.labels,
        },
        staging,
    )
    os.replace(staging, path)
