"""The trained workload the training, evaluation and memory cases share: the real XNLI
training sample read and encoded as a trial does, the trial's tiny model or a randomly
initialised model of mBERT-base's dimensions, the objectives' own training sets, and one
training step: `xlt_core.train.train_step`, as `xlt_core.train.train` takes it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import torch

from benchmarks.common import Settings, cpu_count
from xlt_core.config import TrialConfig
from xlt_core.data.loading import load_split, load_synonyms
from xlt_core.data.synonyms import augment_pair
from xlt_core.models import load_model, tiny_tokenizer
from xlt_core.objectives import build_objective
from xlt_core.objectives.base import Objective, TrainingSet
from xlt_core.tasks import TASKS
from xlt_core.train import optimizer_and_schedule, train_step

OBJECTIVE_NAMES = ("finetune", "ear", "adv", "rs_rp", "rs_da")
# bert-base-multilingual-cased's dimensions (its config.json), built from a local config
# with random weights: no hub access, and the cost of a step does not depend on the weights.
MBERT_BASE = {
    "vocab_size": 119547,
    "hidden_size": 768,
    "num_hidden_layers": 12,
    "num_attention_heads": 12,
    "intermediate_size": 3072,
    "max_position_embeddings": 512,
    "type_vocab_size": 2,
}
# What --quick puts in mBERT-base's place: the same code path, seconds instead of minutes.
QUICK_BASE = {
    "hidden_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "intermediate_size": 64,
    "max_position_embeddings": 512,
    "type_vocab_size": 2,
}
QUICK_TRAIN_EXAMPLES = 200
# The tokenizer of the rows at mBERT-base dimensions. mBERT's own (119,547 entries) is on the
# hub only; the trials' tiny WordPiece (2,000 entries, trained on the English training text)
# splits the words that synonym copies bring in into many pieces, so EAR's and RS-DA's copies
# come out 22% longer than their originals on the XNLI sample, a cost that mBERT's
# vocabulary does not have. In its place: the same WordPiece trainer
# (`models.tiny_tokenizer`) on the training text and the copies' text with room for 30,000
# entries (the text fills about 15,500): copies then tokenize as long as their originals
# (XNLI sample: mean 39.4 vs 39.8 tokens; median 37, 90th percentile 63).
WIDE_VOCABULARY = 30_000
CPU = torch.device("cpu")


def use_all_cpus() -> int:
    """Torch's intra-op threads = the CPUs available, as a lone trial would use them."""
    threads = cpu_count()
    torch.set_num_threads(threads)
    return threads


@dataclass
class Workload:
    """The XNLI training sample as a trial reads it, with its tokenizer and encoder."""

    config: TrialConfig
    examples: list
    tokenizer: object
    encode: Callable
    synonyms: dict | None
    source: str  # "XNLI" or "synthetic" (the shared sample is absent)
    wide_vocabulary: bool = False

    @property
    def num_labels(self) -> int:
        return TASKS[self.config.task].num_labels(self.config)

    def texts(self) -> list[str]:
        return TASKS[self.config.task].training_texts(self.examples)

    def tiny_model(self):
        """The trial's own tiny model (`models.load_model`), seeded from the config."""
        assert not self.wide_vocabulary, "the tiny model goes with the trials' tokenizer"
        model, _ = load_model(self.config, self.num_labels, self.texts())
        return model

    def base_model(self, quick: bool):
        """A sequence classifier of mBERT-base's dimensions (QUICK_BASE with --quick), with
        eager attention as every trial loads it (EAR reads the attention probabilities)."""
        from transformers import BertConfig, BertForSequenceClassification

        dimensions = dict(QUICK_BASE if quick else MBERT_BASE)
        dimensions.setdefault("vocab_size", len(self.tokenizer))
        torch.manual_seed(self.config.seed)
        config = BertConfig(**dimensions, num_labels=self.num_labels, attn_implementation="eager")
        return BertForSequenceClassification(config)

    def objective(self, method: str, layers: int) -> tuple[Objective, TrainingSet]:
        """The objective `method` names with the config's (default) hyperparameters, EAR's
        layer capped at the model's depth, and the training set it builds from the examples
        (EAR's and RS-DA's synonym copies included), as `trial.run_trial` builds them."""
        config = dataclasses.replace(
            self.config, method=method, layer=min(self.config.setting_value("layer"), layers)
        )
        objective = build_objective(config, self.tokenizer.pad_token_id, self.synonyms)
        return objective, objective.training_set(self.examples, self.encode, config.seed)


def xnli_workload(
    settings: Settings, require_xnli: bool = False, wide_vocabulary: bool = False, **overrides
) -> Workload | None:
    """The real XNLI training sample (`<data_dir>/xnli/train-en.tsv`) read, tokenised and
    encoded as a trial does; the synthetic training set when the sample is absent (None
    instead with `require_xnli`). --quick keeps its first QUICK_TRAIN_EXAMPLES pairs.
    `wide_vocabulary`: tokenised with the WIDE_VOCABULARY stand-in for mBERT's tokenizer
    (the rows at mBERT-base dimensions), else with the trials' tiny tokenizer."""
    local = settings.xnli_train.is_file()
    if require_xnli and not local:
        return None
    values = {
        "task": "xnli",
        "data_source": "local" if local else "synthetic",
        "data_dir": str(settings.data_dir) if local else None,
        "target_langs": ["es"],
        "cache_dir": str(settings.scratch / "cache"),
        "max_train_examples": QUICK_TRAIN_EXAMPLES if settings.quick else None,
        **overrides,
    }
    config = TrialConfig.from_dict(values)
    task = TASKS[config.task]
    examples = task.load_training(config)
    # The synonym table EAR and RS-DA draw copies from, read once for both.
    synonyms = load_synonyms(dataclasses.replace(config, method="ear"))
    texts = task.training_texts(examples)
    with _quiet_stdout():  # the WordPiece trainer's progress bars, blank off a terminal
        if wide_vocabulary:
            # The copies EAR and RS-DA (m = 1) draw for this seed: the same draws, in order.
            rng = random.Random(config.seed)
            copies = [c for e in examples for c in augment_pair(e, synonyms, 1, rng)]
            texts += task.training_texts(copies)
            tokenizer = tiny_tokenizer(texts, WIDE_VOCABULARY, Path(config.cache_dir))
        else:
            # The trial's tokenizer: load_model trains (and caches) it on the training text.
            _, tokenizer = load_model(config, task.num_labels(config), texts)
    encode = task.encoder(config, tokenizer, examples)
    source = "XNLI" if local else "synthetic"
    return Workload(config, examples, tokenizer, encode, synonyms, source, wide_vocabulary)


@contextlib.contextmanager
def _quiet_stdout():
    """File descriptor 1 sent to /dev/null (native code writes there, past sys.stdout)."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 1)
            yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def xnli_test_pairs(config: TrialConfig, limit: int | None) -> list:
    """The English XNLI test file's pairs (the first `limit`)."""
    return load_split(dataclasses.replace(config, max_eval_examples=limit), "test", "en")


class Trainer:
    """The optimiser, schedule and step of `xlt_core.train.train` (its own functions), on
    the CPU (or on `device`, where the model is moved first: the MFU case on a GPU)."""

    def __init__(
        self, model, config: TrialConfig, total_steps: int = 10_000, device: torch.device = CPU
    ):
        self.model, self.config, self.device = model.to(device), config, device
        self.optimizer, self.scheduler = optimizer_and_schedule(model, config, total_steps)

    def step(self, objective: Objective, training_set: TrainingSet, indices: Sequence[int]):
        """One `train_step`, then the logged parts read back as the training loop does."""
        loss, parts = train_step(
            self.model,
            objective,
            training_set,
            indices,
            self.optimizer,
            self.scheduler,
            self.config,
            self.device,
        )
        for value in (loss, *parts.values()):
            value.item()

    def timed_step(self, objective, training_set, indices) -> float:
        started = time.perf_counter()
        self.step(objective, training_set, indices)
        return time.perf_counter() - started


def median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def rows_near_width(lengths: Sequence[int], count: int, width: int) -> list[int]:
    """`count` items whose lengths are nearest `width`: consecutive in length order, the
    longest at or just above `width` where the data has such items, so a batch of them
    pads to about `width` (the longest `count` items when none is that long)."""
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    above = next((k for k, i in enumerate(order) if lengths[i] >= width), len(order) - 1)
    end = min(len(order), max(count, above + 1))
    return order[end - count : end]


def batch_width(training_set: TrainingSet, indices: Sequence[int]) -> int:
    return training_set.batch(indices)["input_ids"].shape[1]


def padded_to(batch: dict, width: int, pad_id: int) -> dict:
    """A batch padded further, to `width` columns (the former fixed padding)."""
    extra = width - batch["input_ids"].shape[1]
    if extra <= 0:
        return batch
    fill = {"input_ids": pad_id, "token_type_ids": 0, "attention_mask": 0}
    return {
        key: torch.nn.functional.pad(value, (0, extra), value=fill[key]) if key in fill else value
        for key, value in batch.items()
    }
