"""Perturbing the input word embeddings, shared by ADV and RS-RP.

What is perturbed: the word (token) embeddings, i.e. the vectors that transformers'
`inputs_embeds` replaces: `model.get_input_embeddings()(input_ids)`, before the position
and token-type embeddings are added and before the embedding LayerNorm. Why these: the
robust-training paper motivates the ball by the misalignment of words across languages,
which is a property of the word vectors, while position and segment embeddings are the
same in every language; `inputs_embeds` is also the one input every transformers encoder
accepts in place of token ids. The embedding-layer *output* (hidden_states[0], which EAR's
EPT reads) is not perturbed: it has been layer-normalised, so its scale and the meaning of
epsilon would differ.

Only real tokens are perturbed ([CLS] and [SEP] included); padded positions keep a zero
perturbation, so each sequence's ball does not depend on how the batch was padded.
"""

from __future__ import annotations

import torch

from xlt_core.objectives.base import Batch


def word_embeddings(model, batch: Batch) -> torch.Tensor:
    """The word embeddings of the batch's tokens: (batch, length, hidden)."""
    return model.get_input_embeddings()(batch["input_ids"])


def real_token_mask(batch: Batch, like: torch.Tensor) -> torch.Tensor:
    """1 at real tokens, 0 at padding, broadcastable over the hidden dimension."""
    return batch["attention_mask"].unsqueeze(-1).to(like.dtype)


def forward_embedded(model, batch: Batch, embeddings: torch.Tensor, **outputs):
    """The model's output on `embeddings` given as `inputs_embeds` (position and type
    embeddings are added by the model as for token ids); the batch's other entries (the
    attention mask, token types, the head's targets) are passed as they are, so the output
    carries the head's `loss` whatever the task. `outputs`: flags such as
    `output_attentions=True`."""
    inputs = {key: value for key, value in batch.items() if key != "input_ids"}
    return model(inputs_embeds=embeddings, **inputs, **outputs)


class SeededNoise:
    """Noise drawn from a generator seeded with the trial's seed, one per device: it differs
    between steps and between seeds, and a seed's draws are reproducible (a trial resumed
    from a checkpoint draws fresh noise, which is statistically the same)."""

    def __init__(self, seed: int):
        self.seed = seed
        self._generators: dict = {}

    def _generator(self, device) -> torch.Generator:
        if device not in self._generators:
            self._generators[device] = torch.Generator(device=device).manual_seed(self.seed)
        return self._generators[device]

    def uniform(self, like: torch.Tensor) -> torch.Tensor:
        """U[0, 1) in `like`'s shape, dtype and device."""
        generator = self._generator(like.device)
        return torch.rand(like.shape, generator=generator, device=like.device, dtype=like.dtype)

    def gaussian(self, like: torch.Tensor) -> torch.Tensor:
        """N(0, 1) in `like`'s shape, dtype and device."""
        generator = self._generator(like.device)
        return torch.randn(like.shape, generator=generator, device=like.device, dtype=like.dtype)
