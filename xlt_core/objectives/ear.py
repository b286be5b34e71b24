"""EAR: Embedding-Push, Attention-Pull and Robust target (Ding et al. 2022).

As the official code computes it, for an example x and its synonym copy x^a:

    loss = CE(x) + CE(x^a) + alpha * EPT + beta * APT

- EPT (embedding push) is *minus* the mean squared difference between the masked
  mean-pooled embedding-layer outputs (hidden_states[0]) of x and x^a: minimising it
  pushes the two apart. It is unbounded below, so the training loop stops a trial whose
  loss stops being finite and reports why.
- APT (attention pull) is the mean squared difference of the attention probabilities of
  x and x^a at one layer, numbered from 1 as in the paper ("layer 6" = attentions[5]).
  x and x^a run through the encoder in one batched forward pass, so both attention maps
  are padded to the same length; the mean runs over every (head, query, key) entry of
  the padded maps, as the official code's `MSELoss` does over its padded maps (it pads to
  max_seq_length; we pad to the batch's longest sequence).
- The robust target is the cross-entropy on both x and x^a.

Each training example yields m synonym copies, each paired with the original.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Sequence

import torch
import torch.nn.functional as F

from xlt_core.data.synonyms import augment_pair
from xlt_core.objectives.base import Batch, Encoder
from xlt_core.tasks.pair_classification import EncodedPairs, pad_batch, rows


def masked_mean(hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Mean over the real (unpadded) positions of each sequence: (B, L, H) -> (B, H)."""
    mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)


def embedding_push(
    embeddings: torch.Tensor,
    embeddings_aug: torch.Tensor,
    mask: torch.Tensor,
    mask_aug: torch.Tensor,
) -> torch.Tensor:
    """EPT = -MSE(mean-pooled embeddings of x, of x^a)."""
    return -F.mse_loss(masked_mean(embeddings, mask), masked_mean(embeddings_aug, mask_aug))


def attention_pull(attention: torch.Tensor, attention_aug: torch.Tensor) -> torch.Tensor:
    """APT = MSE(attention probabilities of x, of x^a) at one layer: (B, heads, L, L) each."""
    return F.mse_loss(attention, attention_aug)


@dataclass
class AugmentedPairTrainingSet:
    """Item i pairs copy i with its original (example i // m); a batch stacks the B
    originals above their B copies so one forward pass computes both."""

    originals: EncodedPairs
    copies: EncodedPairs
    m: int
    pad_id: int

    def __len__(self) -> int:
        return len(self.copies)

    def lengths(self) -> list[int]:
        """Item i's width: the longer of copy i and its original (both rows are in a batch)."""
        return [
            max(len(self.originals.input_ids[i // self.m]), len(ids))
            for i, ids in enumerate(self.copies.input_ids)
        ]

    def batch(self, indices: Sequence[int]) -> Batch:
        original_indices = [i // self.m for i in indices]
        batch = pad_batch(
            rows(self.originals, original_indices) + rows(self.copies, indices), self.pad_id
        )
        batch["labels"] = torch.tensor([self.originals.labels[i] for i in original_indices])
        return batch


@dataclass
class EAR:
    alpha: float
    beta: float
    layer: int
    m: int
    synonyms: dict[str, list[str]]
    pad_id: int
    name: str = "ear"

    @classmethod
    def from_config(cls, config, pad_id: int, synonyms) -> "EAR":
        return cls(config.alpha, config.beta, config.layer, config.m, synonyms, pad_id)

    def training_set(self, examples, encode: Encoder, seed: int) -> AugmentedPairTrainingSet:
        rng = random.Random(seed)
        copies = [
            copy
            for example in examples
            for copy in augment_pair(example, self.synonyms, self.m, rng)
        ]
        # The pair task's training sets hold their encoded pairs: pair each copy with its original.
        originals, augmented = encode(examples).encoded, encode(copies).encoded
        return AugmentedPairTrainingSet(originals, augmented, self.m, self.pad_id)

    def loss(self, model, batch: Batch):
        labels = batch.pop("labels")
        size = labels.shape[0]
        output = model(**batch, output_hidden_states=True, output_attentions=True)
        ce = F.cross_entropy(output.logits[:size], labels)
        robust_ce = F.cross_entropy(output.logits[size:], labels)
        embeddings, mask = output.hidden_states[0], batch["attention_mask"]
        ept = embedding_push(embeddings[:size], embeddings[size:], mask[:size], mask[size:])
        attention = output.attentions[self.layer - 1]
        apt = attention_pull(attention[:size], attention[size:])
        loss = ce + robust_ce + self.alpha * ept + self.beta * apt
        return loss, {"ce": ce, "robust_ce": robust_ce, "ept": ept, "apt": apt}
