"""ADV: adversarial training in an L-inf ball (Huang et al. 2021), at `perturbation_site`.

The paper's objective is min-max: minimise over the model the cross-entropy at the worst
perturbation delta of Enc(x) with ||delta_i||_inf <= epsilon (huang2021.txt L84, L166),
epsilon in {0.001, 0.01, 0.1, 1.0}. It released no code for ADV and leaves the solver of the inner
maximisation open; our choices, each a setting:

- projected gradient-sign ascent (PGD, Madry et al. 2018) from delta = 0: `adv_steps`
  steps of size `adv_step_scale * epsilon`, each followed by clipping back onto the ball.
  The default, one step of size epsilon, is FGSM (Goodfellow et al. 2015): one extra
  forward/backward pass per training step. The step is relative to epsilon because
  epsilon spans three orders of magnitude in the paper's grid;
- the model is trained on the perturbed input only (the min-max objective), and the
  clean loss, which the first ascent step computes anyway, is logged as `ce`.

The loss is the task head's own (cross-entropy for classification, start/end
cross-entropy for extractive QA), so ADV serves every task that trains a head.

Where delta is added (the encoder's output, the paper's Enc(x), or the word embeddings),
and why: `objectives/perturbation.py`. The gradient of the attack does not reach the
model's weights (torch.autograd.grad w.r.t. delta only); the final pass at delta trains
every weight, the encoder included (the paper writes min over f; the whole model is
fine-tuned, as in XTREME's scripts it follows).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from xlt_core.objectives.base import Batch, Encoder, TrainingSet
from xlt_core.objectives.perturbation import forward_perturbed, real_token_mask, site_like


@dataclass
class Adversarial:
    epsilon: float
    steps: int
    step_scale: float
    site: str = "encoder_output"

    @classmethod
    def from_config(cls, config, pad_id: int, synonyms) -> "Adversarial":
        settings = config.objective
        return cls(
            settings.epsilon,
            settings.adv_steps,
            settings.adv_step_scale,
            settings.perturbation_site,
        )

    def training_set(self, examples, encode: Encoder, seed: int) -> TrainingSet:
        return encode(examples)

    def perturbation(self, model, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        """The adversarial delta (inside the ball, zero at padding) and the clean loss."""
        delta = site_like(model, batch, self.site)
        mask = real_token_mask(batch, delta)
        clean_ce = None
        for _ in range(self.steps):
            delta.requires_grad_(True)
            ce = forward_perturbed(model, batch, delta, self.site).loss
            (gradient,) = torch.autograd.grad(ce, delta)
            if clean_ce is None:
                clean_ce = ce.detach()
            step = self.step_scale * self.epsilon * gradient.sign()
            delta = (delta.detach() + step).clamp(-self.epsilon, self.epsilon) * mask
        return delta.detach(), clean_ce

    def loss(self, model, batch: Batch):
        delta, clean_ce = self.perturbation(model, batch)
        adv_ce = forward_perturbed(model, batch, delta, self.site).loss
        return adv_ce, {"adv_ce": adv_ce, "ce": clean_ce}
