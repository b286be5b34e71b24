"""Randomized smoothing, trained two ways (Huang et al. 2021).

RS-RP (random perturbation): at every training step, noise drawn uniformly from the L-inf
ball of radius epsilon is added to the vectors at `perturbation_site` of every real token
(the paper's Enc(x), huang2021.txt L102-L104, or the word embeddings; where and why:
`objectives/perturbation.py`), and the model is trained with cross-entropy on the noisy
representation. The paper gives the ball and the uniform distribution (L166); it released
no code. The noise comes from a generator seeded with the trial's seed
(`perturbation.SeededNoise`).

RS-DA (data augmentation): every training example yields m synonym copies (each word
with neighbours replaced by a uniform draw from [word] + neighbours, as the released
code does; m = 3 for XNLI and 10 for PAWS-X in the paper), trained with cross-entropy.
The released code trains on the m copies only (`rs_da_variant=released`);
`keep_originals` also trains on each original, as EAR does. Either way an epoch runs over
the whole augmented set (m or m + 1 times the examples), as in the released code.

RS-syntax (Sec. 5 of the paper): as RS-DA released, but each copy is syntactically
perturbed (adjacent words swapped with probability `swap_probability`, p = 0.1 in the
paper: `data/word_order.py`) instead of drawn from the synonym table.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch

from xlt_core.data.synonyms import augment_pair
from xlt_core.data.word_order import swapped_pairs
from xlt_core.objectives.base import Batch, Encoder, TrainingSet
from xlt_core.objectives.finetune import head_loss
from xlt_core.objectives.perturbation import (
    SeededNoise,
    forward_perturbed,
    real_token_mask,
    site_like,
)


@dataclass
class RandomPerturbation:
    epsilon: float
    seed: int
    site: str = "encoder_output"

    def __post_init__(self):
        self._noise = SeededNoise(self.seed)

    @classmethod
    def from_config(cls, config, pad_id: int, synonyms) -> "RandomPerturbation":
        settings = config.objective
        return cls(settings.epsilon, config.seed, settings.perturbation_site)

    def training_set(self, examples, encode: Encoder, seed: int) -> TrainingSet:
        return encode(examples)

    def noise(self, like: torch.Tensor, batch: Batch) -> torch.Tensor:
        """Uniform noise in [-epsilon, epsilon] per coordinate of every real token, in the
        shape of `like` (the vectors at the site)."""
        uniform = self._noise.uniform(like)
        return (2.0 * uniform - 1.0) * self.epsilon * real_token_mask(batch, like)

    def loss(self, model, batch: Batch):
        noise = self.noise(site_like(model, batch, self.site), batch)
        ce = forward_perturbed(model, batch, noise, self.site).loss
        return ce, {"ce": ce}


@dataclass
class SynonymAugmentation:
    m: int
    keep_originals: bool
    synonyms: dict[str, list[str]]

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
        settings = config.objective
        return cls(settings.m, settings.rs_da_variant == "keep_originals", synonyms)

    def training_set(self, examples, encode: Encoder, seed: int) -> TrainingSet:
        return encode(self.training_examples(examples, seed))

    def loss(self, model, batch: Batch):
        return head_loss(model, batch)


@dataclass
class SyntacticAugmentation:
    m: int
    swap_probability: float

    @classmethod
    def from_config(cls, config, pad_id: int, synonyms) -> "SyntacticAugmentation":
        return cls(config.objective.m, config.objective.swap_probability)

    def training_examples(self, examples, seed: int) -> list:
        """Each example's m perturbed copies in order (the originals are not trained on)."""
        rng = random.Random(seed)
        return [
            copy
            for example in examples
            for copy in swapped_pairs(example, self.swap_probability, self.m, rng)
        ]

    def training_set(self, examples, encode: Encoder, seed: int) -> TrainingSet:
        return encode(self.training_examples(examples, seed))

    def loss(self, model, batch: Batch):
        return head_loss(model, batch)
