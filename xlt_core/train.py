"""The training loop: AdamW with linear warmup/decay, dynamic padding, periodic model
selection on English dev, resumable checkpoints, and a guard against divergence."""

from __future__ import annotations

import copy
import math
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch
from transformers import get_linear_schedule_with_warmup

from xlt_core.config import TrialConfig
from xlt_core.objectives.base import Objective, TrainingSet
from xlt_core.reporting import Reporter

CHECKPOINT_FILE = "trainer_state.pt"
DEV_CURVE = "train/dev_accuracy"  # English dev accuracy at each evaluation during training


class TrainingDiverged(RuntimeError):
    """The loss stopped being finite (EAR's EPT is unbounded below, for one)."""


@dataclass(frozen=True)
class TrainingOutcome:
    best_step: int
    best_dev_metric: float
    steps: int
    seconds: float


@dataclass
class _State:
    step: int = 0
    best_step: int = 0
    best_dev_metric: float = -math.inf
    best_weights: dict | None = None


def train(
    model,
    objective: Objective,
    training_set: TrainingSet,
    config: TrialConfig,
    dev_metric: Callable[[], float],
    reporter: Reporter,
    device: torch.device,
) -> TrainingOutcome:
    """Train `model` in place and leave it holding the weights that scored best on
    `dev_metric` (English dev: the zero-shot protocol never selects on target languages)."""
    started = time.perf_counter()
    steps_per_epoch = math.ceil(len(training_set) / config.batch_size)
    total_steps = max(1, math.ceil(config.epochs * steps_per_epoch))
    eval_interval = max(1, steps_per_epoch // config.evals_per_epoch)
    model.to(device)
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay
    )
    scheduler = get_linear_schedule_with_warmup(
        optimizer, int(config.warmup_ratio * total_steps), total_steps
    )
    state = _restore(reporter, model, optimizer, scheduler)
    running: dict[str, float] = {}

    while state.step < total_steps:
        epoch, position = divmod(state.step, steps_per_epoch)
        order = _epoch_order(len(training_set), config.seed, epoch)
        indices = order[position * config.batch_size : (position + 1) * config.batch_size].tolist()
        model.train()
        batch = {k: v.to(device) for k, v in training_set.batch(indices).items()}
        with torch.autocast(
            device_type=device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"
        ):
            loss, parts = objective.loss(model, batch)
        if not torch.isfinite(loss):
            shown = ", ".join(f"{k}={v.item():.4g}" for k, v in parts.items())
            raise TrainingDiverged(f"loss became {loss.item()} at step {state.step + 1} ({shown})")
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.max_grad_norm)
        optimizer.step()
        scheduler.step()
        state.step += 1
        _accumulate(running, {"loss": loss, **parts})

        if state.step % eval_interval == 0 or state.step == total_steps:
            metrics = {
                f"train/{k}": v / running["count"] for k, v in running.items() if k != "count"
            }
            running.clear()
            # Named apart from the final `dev/en/accuracy`, which is the selected model's.
            metrics[DEV_CURVE] = dev_metric()
            metrics["train/epoch"] = state.step / steps_per_epoch
            if metrics[DEV_CURVE] > state.best_dev_metric:
                state.best_dev_metric, state.best_step = metrics[DEV_CURVE], state.step
                state.best_weights = copy.deepcopy(
                    {k: v.detach().cpu() for k, v in model.state_dict().items()}
                )
            _report_with_checkpoint(reporter, state, metrics, model, optimizer, scheduler)

    model.load_state_dict(state.best_weights)
    return TrainingOutcome(
        state.best_step, state.best_dev_metric, state.step, time.perf_counter() - started
    )


def _epoch_order(size: int, seed: int, epoch: int) -> torch.Tensor:
    # A fixed order per (seed, epoch) lets a resumed trial continue mid-epoch exactly.
    generator = torch.Generator().manual_seed(seed * 100_003 + epoch)
    return torch.randperm(size, generator=generator)


def _accumulate(running: dict[str, float], parts: dict[str, torch.Tensor]) -> None:
    for name, value in parts.items():
        running[name] = running.get(name, 0.0) + value.item()
    running["count"] = running.get("count", 0) + 1


def _report_with_checkpoint(reporter, state: _State, metrics, model, optimizer, scheduler) -> None:
    with tempfile.TemporaryDirectory(prefix="xlt-ckpt-") as directory:
        torch.save(
            {
                "model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(),
                "state": state.__dict__,
            },
            Path(directory) / CHECKPOINT_FILE,
        )
        reporter.report(state.step, metrics, checkpoint_dir=directory)


def _restore(reporter: Reporter, model, optimizer, scheduler) -> _State:
    directory = reporter.latest_checkpoint()
    if directory is None:
        return _State()
    saved = torch.load(Path(directory) / CHECKPOINT_FILE, weights_only=False)
    model.load_state_dict(saved["model"])
    optimizer.load_state_dict(saved["optimizer"])
    scheduler.load_state_dict(saved["scheduler"])
    return _State(**saved["state"])
