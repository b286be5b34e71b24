"""The shapes of the models a sweep trains (layers, widths, vocabulary), enough to count
their parameters: for the cost model's estimates (sweeps/planning/cost_model.py) and the
storage check's checkpoint sizes (sweeps/safety/storage_checks.py), read offline."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from xlt_core.config import TINY_MODEL, TrialConfig


@dataclass(frozen=True)
class ModelShape:
    """A BERT-style encoder's dimensions, enough to count its parameters."""

    layers: int
    hidden: int
    heads: int
    intermediate: int
    vocab: int
    positions: int
    type_vocab: int

    @property
    def embedding_params(self) -> int:
        """Word, position and token-type embeddings and their LayerNorm."""
        return (self.vocab + self.positions + self.type_vocab + 2) * self.hidden

    @property
    def body_params(self) -> int:
        """Non-embedding parameters: the layers and the pooler."""
        h, i = self.hidden, self.intermediate
        layer = 4 * (h * h + h) + (h * i + i) + (i * h + h) + 4 * h  # attention, FFN, 2 norms
        return self.layers * layer + h * h + h

    @property
    def params(self) -> int:
        return self.embedding_params + self.body_params


# The models the presets name, from their config.json on the hub.
MODEL_SHAPES = {
    "bert-base-multilingual-cased": ModelShape(12, 768, 12, 3072, 119_547, 512, 2),
    "xlm-roberta-base": ModelShape(12, 768, 12, 3072, 250_002, 514, 1),
}


def model_shape(config: TrialConfig) -> ModelShape | None:
    """The trial's model: the tiny model from its settings, a model of MODEL_SHAPES, or a
    local directory's BERT-style config.json; None for any other (no estimate, no network)."""
    if config.model == TINY_MODEL:
        return ModelShape(
            config.tiny_layers,
            config.tiny_hidden_size,
            config.tiny_heads,
            4 * config.tiny_hidden_size,  # models.load_model's tiny BertConfig
            config.tiny_vocab_size,
            max(512, config.max_seq_length),
            2,
        )
    if config.model in MODEL_SHAPES:
        return MODEL_SHAPES[config.model]
    path = Path(config.model).expanduser() / "config.json"
    if not path.is_file():
        return None
    fields = json.loads(path.read_text())
    try:
        return ModelShape(
            fields["num_hidden_layers"],
            fields["hidden_size"],
            fields["num_attention_heads"],
            fields["intermediate_size"],
            fields["vocab_size"],
            fields["max_position_embeddings"],
            fields.get("type_vocab_size", 2),
        )
    except KeyError:  # not a BERT-style config (other field names)
        return None
