"""Where ADV and RS-RP perturb, shared by both: the `perturbation_site` setting.

`encoder_output` (the default): the encoder's output representation, the vectors the task
head reads, huang2021's Enc(x) in "f(Enc(x) + delta)" (huang2021.txt L84, L92, L102). The
paper motivates the ball by the distance between the *contextual* representations of a
sentence and its translation (Sec. 3.1, E_src - E_tgt), so delta is added per token to the
last hidden states (`last_hidden_state` of the model's `base_model.encoder`) and the model's
own head (BERT's pooler and classifier for pair classification, the token classifier for
NER, the span head for QA) computes the task loss from them. A forward hook on the encoder
adds delta, so every head and its loss stay transformers' own. Only the [CLS] row reaches a
sequence classifier (through the pooler), as the paper's formulation implies.

`word_embeddings`: the word (token) embeddings, i.e. the vectors transformers'
`inputs_embeds` replaces: `model.get_input_embeddings()(input_ids)`, before the position
and token-type embeddings are added and before the embedding LayerNorm (the project's
earlier reading: the ball as the misalignment of *words*, position and segment embeddings
being the same in every language). Their entries are of order 0.05 in mBERT, where the
encoder's layer-normalised outputs are of order 1, so one epsilon means different balls.

Only real tokens are perturbed ([CLS] and [SEP] included); padded positions keep a zero
perturbation, so each sequence's ball does not depend on how the batch was padded.
"""

from __future__ import annotations

from contextlib import contextmanager

import torch

from xlt_core.errors import ConfigError
from xlt_core.objectives.base import Batch

ENCODER_OUTPUT, WORD_EMBEDDINGS = "encoder_output", "word_embeddings"


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


def model_encoder(model) -> torch.nn.Module:
    """The encoder whose output the head reads (`base_model.encoder`: BERT, XLM-R, ...);
    a model without one is refused naming the setting and the other site."""
    encoder = getattr(getattr(model, "base_model", None), "encoder", None)
    if not isinstance(encoder, torch.nn.Module):
        raise ConfigError(
            "perturbation_site",
            ENCODER_OUTPUT,
            f"'{WORD_EMBEDDINGS}' for {type(model).__name__}: it has no base_model.encoder "
            "whose output its head reads",
        )
    return encoder


@contextmanager
def _encoder_output_shifted(model, delta: torch.Tensor):
    """Within the block, the model's encoder returns its last hidden states + delta."""

    def shift(module, args, output):
        if isinstance(output, tuple):
            return (output[0] + delta.to(output[0].dtype), *output[1:])
        output.last_hidden_state = output.last_hidden_state + delta.to(
            output.last_hidden_state.dtype
        )
        return output

    handle = model_encoder(model).register_forward_hook(shift)
    try:
        yield
    finally:
        handle.remove()


def site_like(model, batch: Batch, site: str) -> torch.Tensor:
    """A zero tensor in the shape, dtype and device of the vectors at `site`:
    (batch, length, hidden). No forward pass: noise and a first delta are drawn in it."""
    if site == WORD_EMBEDDINGS:
        return torch.zeros_like(word_embeddings(model, batch).detach())
    model_encoder(model)  # refuses a model without an encoder output
    weight = model.get_input_embeddings().weight
    shape = (*batch["input_ids"].shape, model.config.hidden_size)
    return torch.zeros(shape, dtype=weight.dtype, device=weight.device)


def forward_perturbed(model, batch: Batch, delta: torch.Tensor, site: str):
    """The model's output (with the head's `loss`) when the vectors at `site` are shifted
    by `delta` ((batch, length, hidden), zero at padding)."""
    if site == WORD_EMBEDDINGS:
        return forward_embedded(model, batch, word_embeddings(model, batch) + delta)
    with _encoder_output_shifted(model, delta):
        return model(**batch)


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
