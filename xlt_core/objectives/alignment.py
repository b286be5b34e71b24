"""The alignment losses of cross-lingual adjustment (Cao et al. 2020; Efimov et al. 2023).

Word vectors are the encoder's last-layer outputs, averaged over each word's subwords.
For a batch of aligned sentence pairs (source = English, target = the other language):

    align = MSE(source vectors of linked words, their target words' vectors)
    reg   = MSE(source vectors of every source word, the same vectors under a frozen
            copy of the original model)

MSE is the mean over words and hidden units (torch's `mse_loss`). Eq. 1 (the adjustment
stage) minimises align + reg_weight * reg; Eq. 2 (continual learning) adds
alpha * align + reg_weight * reg to a task loss at every step (`ContinualAlignment`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Sequence

import torch
import torch.nn.functional as F

from xlt_core.batching import pad_batch
from xlt_core.data.word_alignment import AlignedPairs


def span_average_matrix(spans: Sequence[Sequence[tuple[int, int]]], width: int) -> torch.Tensor:
    """(words, rows * width) weights that average each word's subword positions of a
    flattened (rows * width, hidden) batch: row r's word (start, end) gets 1/(end-start)."""
    n_words = sum(len(row) for row in spans)
    weights = torch.zeros(n_words, len(spans) * width)
    word = 0
    for row, row_spans in enumerate(spans):
        for start, end in row_spans:
            weights[word, row * width + start : row * width + end] = 1.0 / (end - start)
            word += 1
    return weights


def word_vectors(hidden: torch.Tensor, spans: Sequence[Sequence[tuple[int, int]]]) -> torch.Tensor:
    """Subword-averaged vectors of the given words: (rows, width, hidden) -> (words, hidden)."""
    rows, width, size = hidden.shape
    weights = span_average_matrix(spans, width).to(device=hidden.device, dtype=hidden.dtype)
    return weights @ hidden.reshape(rows * width, size)


@dataclass(frozen=True)
class AlignmentBatch:
    """Padded source and target sentences, the spans of the words used, and which
    source/target word vectors are linked (indices into the flattened word lists)."""

    source: dict[str, torch.Tensor]
    target: dict[str, torch.Tensor]
    source_spans: list[list[tuple[int, int]]]  # every source word that has a span
    linked_source: torch.Tensor  # index into the source words above
    target_spans: list[list[tuple[int, int]]]  # the linked target words, in link order

    def to(self, device: torch.device) -> "AlignmentBatch":
        move = lambda batch: {k: v.to(device) for k, v in batch.items()}  # noqa: E731
        return AlignmentBatch(
            move(self.source),
            move(self.target),
            self.source_spans,
            self.linked_source.to(device),
            self.target_spans,
        )


def make_batch(pairs: AlignedPairs, indices: Sequence[int], pad_id: int) -> AlignmentBatch:
    source_spans, target_spans, linked = [], [], []
    for k in indices:
        kept = [i for i, span in enumerate(pairs.source_spans[k]) if span is not None]
        position = {word: index for index, word in enumerate(kept)}
        offset = sum(len(row) for row in source_spans)
        source_spans.append([pairs.source_spans[k][i] for i in kept])
        target_spans.append([pairs.target_spans[k][j] for _, j in pairs.links[k]])
        linked += [offset + position[i] for i, _ in pairs.links[k]]

    def pad(ids):
        return pad_batch([(row, [0] * len(row)) for row in ids], pad_id)

    return AlignmentBatch(
        pad([pairs.source_ids[k] for k in indices]),
        pad([pairs.target_ids[k] for k in indices]),
        source_spans,
        torch.tensor(linked, dtype=torch.long),
        target_spans,
    )


def encode_words(encoder, inputs: dict[str, torch.Tensor], spans) -> torch.Tensor:
    """Last-layer word vectors of the given spans."""
    return word_vectors(encoder(**inputs).last_hidden_state, spans)


def alignment_losses(
    encoder, frozen_encoder, batch: AlignmentBatch
) -> tuple[torch.Tensor, torch.Tensor]:
    """(align, reg) of Eq. 1 on one batch; `frozen_encoder` runs without gradients."""
    source = encode_words(encoder, batch.source, batch.source_spans)
    target = encode_words(encoder, batch.target, batch.target_spans)
    with torch.no_grad():
        original = encode_words(frozen_encoder, batch.source, batch.source_spans)
    align = F.mse_loss(source[batch.linked_source], target)
    reg = F.mse_loss(source, original)
    return align, reg


@torch.no_grad()
def alignment_distances(
    encoder,
    frozen_encoder,
    pairs: AlignedPairs,
    pad_id: int,
    device: torch.device,
    batch_size: int = 32,
) -> dict[str, float]:
    """Mean L2 distance of linked word vectors (`aligned_distance`) and of source word
    vectors to the frozen original's (`source_drift`), over all of `pairs`."""
    encoder.eval()
    distances, drifts = [], []
    for start in range(0, len(pairs), batch_size):
        batch = make_batch(pairs, range(start, min(start + batch_size, len(pairs))), pad_id).to(
            device
        )
        source = encode_words(encoder, batch.source, batch.source_spans)
        target = encode_words(encoder, batch.target, batch.target_spans)
        original = encode_words(frozen_encoder, batch.source, batch.source_spans)
        distances.append((source[batch.linked_source] - target).norm(dim=-1).float().cpu())
        drifts.append((source - original).norm(dim=-1).float().cpu())
    return {
        "aligned_distance": torch.cat(distances).mean().item(),
        "source_drift": torch.cat(drifts).mean().item(),
    }


@dataclass
class ContinualAlignment:
    """Eq. 2: the wrapped objective's loss + alpha * align + reg_weight * reg, with a
    fresh batch of `pairs_per_step` aligned sentence pairs sampled at every step.

    Wraps any objective (fine-tuning, EAR, a task head's loss): the task model's encoder
    (`model.base_model`) receives the alignment loss; `frozen_encoder` is the original
    (pre-adjustment) encoder, the same reference as in Eq. 1.
    """

    inner: object
    pairs: AlignedPairs
    frozen_encoder: torch.nn.Module
    alpha: float
    reg_weight: float
    pad_id: int
    seed: int
    pairs_per_step: int = 16
    _rng: random.Random = field(init=False, repr=False)

    def __post_init__(self):
        self._rng = random.Random(self.seed)

    def training_set(self, examples, encode, seed):
        return self.inner.training_set(examples, encode, seed)

    def loss(self, model, batch):
        loss, parts = self.inner.loss(model, batch)
        device = next(model.parameters()).device
        indices = self._rng.sample(
            range(len(self.pairs)), min(self.pairs_per_step, len(self.pairs))
        )
        align, reg = alignment_losses(
            model.base_model,
            self.frozen_encoder.to(device),
            make_batch(self.pairs, indices, self.pad_id).to(device),
        )
        return loss + self.alpha * align + self.reg_weight * reg, {
            **parts,
            "align": align,
            "reg": reg,
        }
