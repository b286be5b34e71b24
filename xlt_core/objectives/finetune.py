"""Plain fine-tuning: cross-entropy on the English training pairs (the baseline)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch
import torch.nn.functional as F

from xlt_core.objectives.base import Batch, Encoder
from xlt_core.tasks.pair_classification import EncodedPairs, pad_batch, rows


@dataclass
class PairTrainingSet:
    encoded: EncodedPairs
    pad_id: int

    def __len__(self) -> int:
        return len(self.encoded)

    def batch(self, indices: Sequence[int]) -> Batch:
        batch = pad_batch(rows(self.encoded, indices), self.pad_id)
        batch["labels"] = torch.tensor([self.encoded.labels[i] for i in indices])
        return batch


@dataclass
class FineTune:
    pad_id: int
    name: str = "finetune"

    def training_set(self, examples, encode: Encoder, seed: int) -> PairTrainingSet:
        return PairTrainingSet(encode(examples), self.pad_id)

    def loss(self, model, batch: Batch):
        return cross_entropy_loss(model, batch)


@dataclass
class HeadLoss:
    """Fine-tuning with the task head's own loss (token classification, extractive QA):
    the batch carries the head's targets (`labels`, or `start_positions`/`end_positions`).
    The training set is built by the task, not by this objective."""

    name: str = "finetune"

    def loss(self, model, batch: Batch):
        ce = model(**batch).loss
        return ce, {"ce": ce}


def cross_entropy_loss(model, batch: Batch) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """CE of the model's predictions on the batch (the loss of fine-tuning and of RS-DA)."""
    labels = batch.pop("labels")
    ce = F.cross_entropy(model(**batch).logits, labels)
    return ce, {"ce": ce}
