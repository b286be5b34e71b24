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
import torch.nn.functional as F

from xlt_core.data.synonyms import augment_pair
from xlt_core.objectives.base import Batch, Encoder
from xlt_core.objectives.finetune import PairTrainingSet, cross_entropy_loss
from xlt_core.objectives.perturbation import forward_embedded, real_token_mask, word_embeddings


@dataclass
class RandomPerturbation:
    epsilon: float
    seed: int
    pad_id: int
    name: str = "rs_rp"
    _generators: dict = field(default_factory=dict, init=False, repr=False)

    def training_set(self, examples, encode: Encoder, seed: int) -> PairTrainingSet:
        return PairTrainingSet(encode(examples), self.pad_id)

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
        labels = batch.pop("labels")
        embeddings = word_embeddings(model, batch)
        ce = F.cross_entropy(
            forward_embedded(model, batch, embeddings + self.noise(embeddings, batch)).logits,
            labels,
        )
        return ce, {"ce": ce}


@dataclass
class SynonymAugmentation:
    m: int
    keep_originals: bool
    synonyms: dict[str, list[str]]
    pad_id: int
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

    def training_set(self, examples, encode: Encoder, seed: int) -> PairTrainingSet:
        return PairTrainingSet(encode(self.training_examples(examples, seed)), self.pad_id)

    def loss(self, model, batch: Batch):
        return cross_entropy_loss(model, batch)
