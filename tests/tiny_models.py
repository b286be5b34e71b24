"""Tiny models built in code, shared by the tests (no hub access here)."""

import torch
from transformers import BertConfig, BertModel


def tiny_encoder(vocab_size: int, seed: int = 0) -> BertModel:
    """A 2-layer, hidden-32 BERT encoder, in eval mode, initialised from `seed`."""
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
    )
    return BertModel(config).eval()
