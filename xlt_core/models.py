"""Encoder + classification head: from a hub id or local directory, or a tiny offline BERT."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

import torch
import transformers

from xlt_core.config import TINY_MODEL, TrialConfig
from xlt_core.registry import HEADS

if TYPE_CHECKING:
    from transformers import BertTokenizerFast, PreTrainedModel, PreTrainedTokenizerBase

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def load_model(
    config: TrialConfig,
    num_labels: int,
    training_texts: Iterable[str],
    head: str = "sequence_classification",
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """The model and tokenizer a trial trains; the head is initialised from `config.seed`.

    Attention probabilities are needed by EAR's APT, and transformers 5 defaults to sdpa
    attention, which returns none: every model is loaded with eager attention.
    `head` is a key of `registry.HEADS`. For the tiny model, `training_texts` trains the tokenizer;
    trials with parallel data add its text so target-language words get subwords too.
    """
    tiny_class, auto_class = (getattr(transformers, name) for name in HEADS[head])
    torch.manual_seed(config.seed)
    if config.model == TINY_MODEL:
        tokenizer = tiny_tokenizer(training_texts, config.tiny_vocab_size, Path(config.cache_dir))
        model_config = transformers.BertConfig(
            vocab_size=len(tokenizer),
            hidden_size=config.tiny_hidden_size,
            num_hidden_layers=config.tiny_layers,
            num_attention_heads=config.tiny_heads,
            intermediate_size=4 * config.tiny_hidden_size,
            max_position_embeddings=max(512, config.max_seq_length),
            num_labels=num_labels,
            attn_implementation="eager",
        )
        return tiny_class(model_config), tokenizer
    tokenizer = transformers.AutoTokenizer.from_pretrained(config.model)
    model = auto_class.from_pretrained(
        config.model, num_labels=num_labels, attn_implementation="eager"
    )
    return model, tokenizer


def tiny_tokenizer(texts: Iterable[str], vocab_size: int, cache_dir: Path) -> BertTokenizerFast:
    """A WordPiece tokenizer trained on `texts`, cached on disk so trials share it."""
    texts = list(texts)
    digest = hashlib.sha256("\n".join(texts).encode() + str(vocab_size).encode()).hexdigest()[:16]
    target = cache_dir / "tokenizers" / digest
    if not (target / "tokenizer.json").exists():
        _save_atomically(_train_wordpiece(texts, vocab_size), target)
    return transformers.BertTokenizerFast.from_pretrained(str(target))


def _train_wordpiece(texts: list[str], vocab_size: int) -> BertTokenizerFast:
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers

    tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=False)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    # No progress bar: it takes a second, and in a Ray worker its bar leaves empty lines.
    trainer = trainers.WordPieceTrainer(
        vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS, show_progress=False
    )
    tokenizer.train_from_iterator(texts, trainer)
    cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
    )
    return transformers.BertTokenizerFast(tokenizer_object=tokenizer)


def _save_atomically(tokenizer: BertTokenizerFast, target: Path) -> None:
    # Concurrent trials may train the same tokenizer: write aside, then rename.
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent))
    tokenizer.save_pretrained(str(staging))
    try:
        os.rename(staging, target)
    except OSError:  # another trial won the race: every trial loads its copy, since
        # WordPiece training differs between processes (huggingface/tokenizers#1794)
        for child in staging.iterdir():
            child.unlink()
        staging.rmdir()
