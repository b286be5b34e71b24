"""What every objective provides: a training set built from examples, and a loss per batch.

An objective is looked up by the name `config.method` gives (`objectives.OBJECTIVES`) and
built with `from_config(config, pad_id, synonyms)`. The task encodes: `encode(examples)`
turns the task's examples into a `TrainingSet`, so an objective that trains on the
examples as they are (fine-tuning, ADV, RS-RP) works for every task, and one that makes
new examples (RS-DA's and EAR's synonym copies) works for the tasks whose examples it
knows how to copy (each task declares the objectives it supports).
"""

from __future__ import annotations

from typing import Any, Callable, Protocol, Sequence

import torch

Batch = dict[str, torch.Tensor]


class TrainingSet(Protocol):
    def __len__(self) -> int: ...

    def batch(self, indices: Sequence[int]) -> Batch:
        """Model inputs plus the head's targets (`labels`, ...) for the given items."""

    def lengths(self) -> Sequence[int]:
        """Per item, the width its rows pad a batch to (its longest row, in tokens): the
        training loop groups items of similar length into batches (`group_by_length`)."""


Encoder = Callable[[Sequence[Any]], TrainingSet]


class Objective(Protocol):
    # No `name`: an objective's name is its declaration's (xlt_core/registry.py), typed once.
    def training_set(self, examples: Sequence[Any], encode: Encoder, seed: int) -> TrainingSet: ...

    def loss(self, model, batch: Batch) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """The loss to minimise and its named parts (`ce`, `ept`, `apt`, ...) for logging."""
