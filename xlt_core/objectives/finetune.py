"""Plain fine-tuning: the task head's own loss on the English training data (the baseline).

The batch carries the head's targets (`labels` for pair and token classification,
`start_positions`/`end_positions` for extractive QA), so the same objective serves every
task: for sequence classification the head's loss is the cross-entropy.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from xlt_core.objectives.base import Batch, Encoder, TrainingSet


def head_loss(model, batch: Batch) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """The task head's loss on the batch, logged as `ce` (fine-tuning and RS-DA train on it)."""
    ce = model(**batch).loss
    return ce, {"ce": ce}


@dataclass
class FineTune:
    @classmethod
    def from_config(cls, config, pad_id: int, synonyms) -> "FineTune":
        return cls()

    def training_set(self, examples, encode: Encoder, seed: int) -> TrainingSet:
        return encode(examples)

    def loss(self, model, batch: Batch):
        return head_loss(model, batch)
