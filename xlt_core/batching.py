"""The batches every task and objective builds: training sets padded per batch to their
longest row (`PaddedTrainingSet`), padding itself (`pad_batch`), and the length-sorted
evaluation batches within a budget of padded tokens (`token_budget_batches`).

Training batches (which items go together in an epoch, grouped by length) are
`train.epoch_batches`; tokenised encodings are cached by `encoding_cache`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import torch

Row = tuple[list[int], list[int]]  # (input_ids, token_type_ids) of one sequence


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

    def rows(self, indices: Sequence[int]) -> list[Row]:
        raise NotImplementedError

    def targets(self, indices: Sequence[int], width: int) -> dict[str, torch.Tensor]:
        raise NotImplementedError

    def batch(self, indices: Sequence[int]) -> dict[str, torch.Tensor]:
        batch = pad_batch(self.rows(indices), self.pad_id)
        return batch | self.targets(indices, batch["input_ids"].shape[1])


def rows(encoded: Any, indices: Sequence[int]) -> list[Row]:
    """The (input_ids, token_type_ids) rows of the given items of an encoding that holds
    both lists (sentence pairs, QA windows)."""
    return [(encoded.input_ids[i], encoded.token_type_ids[i]) for i in indices]


def pad_batch(rows: Sequence[Row], pad_id: int) -> dict[str, torch.Tensor]:
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
