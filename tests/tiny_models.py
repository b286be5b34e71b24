"""Tiny models built in code, shared by the tests (no hub access here)."""

import torch
from transformers import BertConfig, BertForSequenceClassification, BertModel

# Dropout off: outputs depend on the inputs alone, as comparisons and hand computations need.
NO_DROPOUT = {"hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0}


def tiny_bert_config(
    vocab_size: int, hidden_size: int = 32, layers: int = 2, **settings
) -> BertConfig:
    """A BERT of `layers` layers and 2 heads, `hidden_size` wide with a feed-forward twice
    that; `settings` are further `BertConfig` fields."""
    return BertConfig(
        vocab_size=vocab_size,
        hidden_size=hidden_size,
        num_hidden_layers=layers,
        num_attention_heads=2,
        intermediate_size=2 * hidden_size,
        **settings,
    )


def tiny_bert(vocab_size: int, model_class=BertModel, seed: int = 0, **config_settings):
    """`model_class` (a BERT encoder or head) on `tiny_bert_config(vocab_size,
    **config_settings)`, initialised from `seed`, in eval mode."""
    torch.manual_seed(seed)
    return model_class(tiny_bert_config(vocab_size, **config_settings)).eval()


def tiny_pair_classifier(layers: int = 2, seed: int = 0) -> BertForSequenceClassification:
    """The 3-label classifier over token ids below 50 that the objectives' hand computations
    run on: 16 wide, no dropout, eager attention (so that it returns attention weights)."""
    return tiny_bert(
        50,
        BertForSequenceClassification,
        seed,
        hidden_size=16,
        layers=layers,
        num_labels=3,
        attn_implementation="eager",
        **NO_DROPOUT,
    )
