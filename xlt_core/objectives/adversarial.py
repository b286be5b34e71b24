"""ADV: adversarial training in an L-inf ball on the word embeddings (Huang et al. 2021).

The paper's objective is min-max: minimise over the model the cross-entropy at the worst
perturbation delta of the input embeddings with ||delta||_inf <= epsilon, epsilon in
{0.001, 0.01, 0.1, 1.0}. It released no code for ADV and leaves the solver of the inner
maximisation open; our choices, each a setting:

- projected gradient-sign ascent (PGD, Madry et al. 2018) from delta = 0: `adv_steps`
  steps of size `adv_step_scale * epsilon`, each followed by clipping back onto the ball.
  The default, one step of size epsilon, is FGSM (Goodfellow et al. 2015): one extra
  forward/backward pass per training step. The step is relative to epsilon because
  epsilon spans three orders of magnitude in the paper's grid;
- the model is trained on the perturbed input only (the min-max objective), and the
  clean cross-entropy, which the first ascent step computes anyway, is logged as `ce`.

Which embeddings are perturbed, and why: see `objectives/perturbation.py`. The gradient
of the attack does not reach the model's weights (torch.autograd.grad w.r.t. delta only);
the final pass on x + delta trains every weight, the embedding matrix included.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from xlt_core.objectives.base import Batch, Encoder
from xlt_core.objectives.finetune import PairTrainingSet
from xlt_core.objectives.perturbation import forward_embedded, real_token_mask, word_embeddings


@dataclass
class Adversarial:
    epsilon: float
    steps: int
    step_scale: float
    pad_id: int
    name: str = "adv"

    def training_set(self, examples, encode: Encoder, seed: int) -> PairTrainingSet:
        return PairTrainingSet(encode(examples), self.pad_id)

    def perturbation(
        self, model, batch: Batch, labels: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The adversarial delta (inside the ball, zero at padding) and the clean CE."""
        embeddings = word_embeddings(model, batch).detach()
        mask = real_token_mask(batch, embeddings)
        delta = torch.zeros_like(embeddings)
        clean_ce = None
        for _ in range(self.steps):
            delta.requires_grad_(True)
            ce = F.cross_entropy(forward_embedded(model, batch, embeddings + delta).logits, labels)
            (gradient,) = torch.autograd.grad(ce, delta)
            if clean_ce is None:
                clean_ce = ce.detach()
            delta = (delta.detach() + self.step_scale * self.epsilon * gradient.sign()).clamp(
                -self.epsilon, self.epsilon
            ) * mask
        return delta.detach(), clean_ce

    def loss(self, model, batch: Batch):
        labels = batch.pop("labels")
        delta, clean_ce = self.perturbation(model, batch, labels)
        adv_ce = F.cross_entropy(
            forward_embedded(model, batch, word_embeddings(model, batch) + delta).logits, labels
        )
        return adv_ce, {"adv_ce": adv_ce, "ce": clean_ce}
