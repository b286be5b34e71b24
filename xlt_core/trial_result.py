"""What every task's trial shares: its result, its seeding, its device, saving its model."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np
import torch

from xlt_core.config import TrialConfig


@dataclass
class TrialResult:
    """Final metrics (`<split>/<lang>/<metric>`) and per-example scores keyed `<split>-<lang>`;
    `figures` maps an artifact path (e.g. `probing/finetuned.png`) to the local file."""

    metrics: dict[str, float]
    example_scores: dict[str, dict] = field(repr=False)
    best_step: int = 0
    train_seconds: float = 0.0
    figures: dict[str, str] = field(default_factory=dict)


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def trial_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def save_trained(config: TrialConfig, model, tokenizer) -> None:
    """The trained model as a `save_pretrained` folder, when the config asks for one."""
    if config.save_model_dir:
        model.save_pretrained(config.save_model_dir)
        tokenizer.save_pretrained(config.save_model_dir)
