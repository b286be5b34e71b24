"""Randomized smoothing, trained two ways (Huang et al. 2021).

RS-RP (random perturbation): at every training step, noise drawn uniformly from the L-inf
ball of radius epsilon is added to the word embeddings of every real token (which
embeddings, and why: `objectives/perturbation.py`), and the model is trained with
cross-entropy on the noisy input. The paper gives the ball and the uniform distribution;
it released no code. The noise comes from a generator seeded with the trial's seed: it
differs between steps and between seeds, and a seed's draws are reproducible (a trial
resumed from a checkpoint draws fresh noise, which is statistically the same).

RS-DA (data augmentation): every training example yields m synonym copies (each word
with neighbours replaced by a uniform draw from [word] + neighbours, as the released
code does; m = 3 for XNLI and 10 for PAWS-X in the paper), trained with cross-entropy.
The released code trains on the m copies only (`rs_da_variant=released`);
`keep_originals` also trains on each original, as EAR does. Either way an epoch runs over
the whole augmented set (m or m + 1 times the examples), as in the released code.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import torch

from xlt_core.data.synonyms import augment_pair
from xlt_core.objectives.base import Batch, Encoder, TrainingSet
from xlt_core.objectives.finetune import head_loss
from xlt_core.objectives.perturbation import forward_embedded, real_token_mask, word_embeddings


@dataclass
class RandomPerturbation:
    epsilon: float
    seed: int
    name: str = "rs_rp"
    _generators: dict = field(default_factory=dict, init=False, repr=False)

    @classmethod
    def from_config(cls, config, pad_id: int, synonyms) -> "RandomPerturbation":
        return cls(config.epsilon, config.seed)

    def training_set(self, examples, encode: Encoder, seed: int) -> TrainingSet:
        return encode(examples)

    def noise(self, embeddings: torch.Tensor, batch: Batch) -> torch.Tensor:
        """Uniform noise in [-epsilon, epsilon] per coordinate of every real token."""
        device = embeddings.device
        if device not in self._generators:
            self._generators[device] = torch.Generator(device=device).manual_seed(self.seed)
        uniform = torch.rand(
            embeddings.shape,
            generator=self._generators[device],
            device=device,
            dtype=embeddings.dtype,
        )
        return (2.0 * uniform - 1.0) * self.epsilon * real_token_mask(batch, embeddings)

    def loss(self, model, batch: Batch):
        embeddings = word_embeddings(model, batch)
        ce = forward_embedded(model, batch, embeddings + self.noise(embeddings, batch)).loss
        return ce, {"ce": ce}


@dataclass
class SynonymAugmentation:
    m: int
    keep_originals: bool
    synonyms: dict[str, list[str]]
    name: str = "rs_da"

    def training_examples(self, examples, seed: int) -> list:
        """The originals (keep_originals only), then each example's m copies in order."""
        rng = random.Random(seed)
        copies = [
            copy
            for example in examples
            for copy in augment_pair(example, self.synonyms, self.m, rng)
        ]
        return (list(examples) if self.keep_originals else []) + copies

    @classmethod
    def from_config(cls, config, pad_id: int, synonyms) -> "SynonymAugmentation":
        return cls(config.m, config.rs_da_variant == "keep_originals", synonyms)

    def training_set(self, examples, encode: Encoder, seed: int) -> TrainingSet:
        return encode(self.training_examples(examples, seed))

    def loss(self, model, batch: Batch):
        return head_loss(model, batch)
