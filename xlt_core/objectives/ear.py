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

Two variants replace one target (ding2022 Tables 4 and A.4), each an objective of its own:
- `ear_nt`, NT + APT: the Noise Target replaces EPT. Gaussian noise N(0, noise_sigma^2)
  (randomized smoothing, Cohen et al. 2019) is added to the word embeddings of every real
  token of x^a (the embeddings `inputs_embeds` replaces, as ADV and RS-RP perturb them),
  so CE(x^a) and APT see the noisy copy: loss = CE(x) + CE(x^a + noise) + beta * APT. NT is
  a perturbation, not a loss term, so alpha has no part in it. The paper gives no sigma.
- `ear_srpt`, EPT + SRPT: the Sentence Representation Pull Target replaces APT: the mean
  squared difference of the masked mean-pooled hidden states of x and x^a at `layer`
  (the paper's "middle layer": 6 of mBERT's 12), averaged over every (example, dimension)
  entry as EPT's MSE is.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Sequence

import torch
import torch.nn.functional as F

from xlt_core.batching import pad_batch, rows
from xlt_core.data.synonyms import augment_pair
from xlt_core.objectives.base import Batch, Encoder
from xlt_core.objectives.perturbation import (
    SeededNoise,
    forward_embedded,
    real_token_mask,
    word_embeddings,
)
from xlt_core.tasks.pair_encoding_and_scoring import EncodedPairs


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


def sentence_pull(
    hidden: torch.Tensor, hidden_aug: torch.Tensor, mask: torch.Tensor, mask_aug: torch.Tensor
) -> torch.Tensor:
    """SRPT = MSE(mean-pooled hidden states of x, of x^a) at one layer: (B, L, H) each."""
    return F.mse_loss(masked_mean(hidden, mask), masked_mean(hidden_aug, mask_aug))


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

    @classmethod
    def from_config(cls, config, pad_id: int, synonyms) -> "EAR":
        settings = config.objective
        return cls(settings.alpha, settings.beta, settings.layer, settings.m, synonyms, pad_id)

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
        output = self.forward(model, batch)
        ce = F.cross_entropy(output.logits[:size], labels)
        robust_ce = F.cross_entropy(output.logits[size:], labels)
        parts = {"ce": ce, "robust_ce": robust_ce, **self.targets(output, batch, size)}
        loss = ce + robust_ce
        for name, weight in self.target_weights().items():
            loss = loss + weight * parts[name]
        return loss, parts

    def forward(self, model, batch: Batch):
        """One pass over the originals (rows :size) and their copies (rows size:)."""
        return model(**batch, output_hidden_states=True, output_attentions=True)

    def target_weights(self) -> dict[str, float]:
        return {"ept": self.alpha, "apt": self.beta}

    def targets(self, output, batch: Batch, size: int) -> dict[str, torch.Tensor]:
        embeddings, mask = output.hidden_states[0], batch["attention_mask"]
        ept = embedding_push(embeddings[:size], embeddings[size:], mask[:size], mask[size:])
        attention = output.attentions[self.layer - 1]
        return {"ept": ept, "apt": attention_pull(attention[:size], attention[size:])}


@dataclass
class EARNoiseTarget(EAR):
    """NT + APT: Gaussian noise on the copies' word embeddings instead of EPT."""

    noise_sigma: float = 0.01
    seed: int = 0

    def __post_init__(self):
        self._noise = SeededNoise(self.seed)

    @classmethod
    def from_config(cls, config, pad_id: int, synonyms) -> "EARNoiseTarget":
        settings = config.objective
        return cls(
            0.0,
            settings.beta,
            settings.layer,
            settings.m,
            synonyms,
            pad_id,
            noise_sigma=settings.noise_sigma,
            seed=config.seed,
        )

    def forward(self, model, batch: Batch):
        embeddings = word_embeddings(model, batch)
        size = embeddings.shape[0] // 2
        noise = self._noise.gaussian(embeddings[size:]) * self.noise_sigma
        noise = noise * real_token_mask(batch, embeddings)[size:]
        noisy = torch.cat([embeddings[:size], embeddings[size:] + noise])
        return forward_embedded(model, batch, noisy, output_attentions=True)

    def target_weights(self) -> dict[str, float]:
        return {"apt": self.beta}

    def targets(self, output, batch: Batch, size: int) -> dict[str, torch.Tensor]:
        attention = output.attentions[self.layer - 1]
        return {"apt": attention_pull(attention[:size], attention[size:])}


@dataclass
class EARSentencePull(EAR):
    """EPT + SRPT: the mean-pooled hidden states at `layer` pulled together instead of APT."""

    def forward(self, model, batch: Batch):
        return model(**batch, output_hidden_states=True)

    def target_weights(self) -> dict[str, float]:
        return {"ept": self.alpha, "srpt": self.beta}

    def targets(self, output, batch: Batch, size: int) -> dict[str, torch.Tensor]:
        mask = batch["attention_mask"]
        embeddings, hidden = output.hidden_states[0], output.hidden_states[self.layer]
        return {
            "ept": embedding_push(embeddings[:size], embeddings[size:], mask[:size], mask[size:]),
            "srpt": sentence_pull(hidden[:size], hidden[size:], mask[:size], mask[size:]),
        }
