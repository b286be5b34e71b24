"""What every objective provides: a training set built from examples, and a loss per batch."""

from __future__ import annotations

from typing import Callable, Protocol, Sequence

import torch

from xlt_core.data.examples import PairExample
from xlt_core.tasks.pair_classification import EncodedPairs

Encoder = Callable[[Sequence[PairExample]], EncodedPairs]
Batch = dict[str, torch.Tensor]


class TrainingSet(Protocol):
    def __len__(self) -> int: ...

    def batch(self, indices: Sequence[int]) -> Batch:
        """Model inputs plus `labels` for the given training items."""


class Objective(Protocol):
    name: str

    def training_set(
        self, examples: Sequence[PairExample], encode: Encoder, seed: int
    ) -> TrainingSet: ...

    def loss(self, model, batch: Batch) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """The loss to minimise and its named parts (`ce`, `ept`, `apt`, ...) for logging."""
