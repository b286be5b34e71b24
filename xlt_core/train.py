"""The training loop: AdamW with linear warmup/decay, length-grouped batches padded to their
longest row, periodic model selection on English dev (or, under `selection_dev=test`, on the
test sets as the released EAR scripts do), resumable checkpoints, and a guard against
divergence."""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import torch
from transformers import get_linear_schedule_with_warmup

from xlt_core import random_state
from xlt_core.config import TrialConfig
from xlt_core.errors import TrainingDiverged
from xlt_core.objectives.base import Objective, TrainingSet
from xlt_core.precision import autocast
from xlt_core.reporting import Reporter
from xlt_core.temp_folders import owned_temporary_directory
from xlt_schema import DEV_CURVE, SELECTION_ON_TEST

CHECKPOINT_FILE = "trainer_state.pt"
# Length grouping sorts each chunk of this many batches' worth of shuffled items by length
# before cutting it into batches. 50 as Hugging Face's LengthGroupedSampler (its "megabatch"):
# wide enough that neighbours in a sorted chunk have nearly equal lengths (XNLI: 1.03 padded
# tokens per real token, against 1.75 for random batches), narrow enough that each batch is
# still drawn from a random 50-batch share of the epoch, in a random place in it.
LENGTH_GROUP_BATCHES = 50
# Under `selection_dev=test`: each evaluation's accuracy pooled over the test sets, the score
# that keeps the checkpoint (English dev's curve is logged beside it, as always).
TEST_SELECTION_CURVE = "train/pooled_test_accuracy"


@dataclass(frozen=True)
class TrainingOutcome:
    best_step: int
    best_dev_metric: float  # the kept checkpoint's score (pooled test under selection_dev=test)
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
    test_metric: Callable[[], float] | None = None,
) -> TrainingOutcome:
    """Train `model` in place and leave it holding the weights that scored best on
    `dev_metric` (English dev: the zero-shot protocol never selects on target languages), or
    on `test_metric` where given (`selection_dev=test`, `pooled_test_score`)."""
    started = time.perf_counter()
    steps_per_epoch = math.ceil(len(training_set) / config.batch_size)
    total_steps = max(1, math.ceil(config.epochs * steps_per_epoch))
    eval_interval = max(1, steps_per_epoch // config.evals_per_epoch)
    model.to(device)
    optimizer, scheduler = optimizer_and_schedule(model, config, total_steps)
    state = _restore(reporter, model, optimizer, scheduler)
    running: dict[str, float] = {}
    lengths = list(training_set.lengths()) if config.group_by_length else None
    batches, batches_epoch = [], None

    while state.step < total_steps:
        epoch, position = divmod(state.step, steps_per_epoch)
        if epoch != batches_epoch:
            batches = epoch_batches(
                len(training_set), config.batch_size, config.seed, epoch, lengths
            )
            batches_epoch = epoch
        loss, parts = train_step(
            model, objective, training_set, batches[position], optimizer, scheduler, config, device
        )
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
            if test_metric is not None:
                metrics[TEST_SELECTION_CURVE] = test_metric()
            _keep_if_best(state, metrics.get(TEST_SELECTION_CURVE, metrics[DEV_CURVE]), model)
            _report_with_checkpoint(reporter, state, metrics, model, optimizer, scheduler)

    model.load_state_dict(state.best_weights)
    return TrainingOutcome(
        state.best_step, state.best_dev_metric, state.step, time.perf_counter() - started
    )


def _keep_if_best(state: _State, score: float, model) -> None:
    """Keep the model's weights when `score` beats every evaluation's before (ties: the first)."""
    if score > state.best_dev_metric:
        state.best_dev_metric, state.best_step = score, state.step
        state.best_weights = copy.deepcopy(
            {k: v.detach().cpu() for k, v in model.state_dict().items()}
        )


def pooled_test_score(config: TrialConfig, evaluator) -> Callable[[], float] | None:
    """Under `selection_dev=test`, the score the released EAR scripts keep their checkpoint
    by (KB-Ding/EAR@b508ce7 run/train.py:186-224): the share of examples right over the test
    sets of every language the trial tests, pooled (`total_correct / total`); None otherwise."""
    if config.selection_dev != SELECTION_ON_TEST:
        return None
    keys = [("test", lang) for lang in config.test_langs]

    def pooled() -> float:
        right = [score for key in keys for score in evaluator.score(key)["scores"]]
        return sum(right) / len(right)

    return pooled


def optimizer_and_schedule(model, config: TrialConfig, total_steps: int):
    """AdamW over every parameter, its learning rate warmed up linearly over the first
    `warmup_ratio` of `total_steps`, then decayed linearly to zero at `total_steps`."""
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay
    )
    scheduler = get_linear_schedule_with_warmup(
        optimizer, int(config.warmup_ratio * total_steps), total_steps
    )
    return optimizer, scheduler


def train_step(
    model,
    objective: Objective,
    training_set: TrainingSet,
    indices: Sequence[int],
    optimizer,
    scheduler,
    config: TrialConfig,
    device: torch.device,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """One optimisation step on the items `indices`: the batch collated onto `device`, the
    objective's loss (bf16 autocast on CUDA unless precision is fp32), the finiteness check,
    backward, gradient clipping at `max_grad_norm`, AdamW and the schedule. Returns the loss
    and its named parts, not read back from the device."""
    model.train()
    batch = {k: v.to(device) for k, v in training_set.batch(indices).items()}
    with autocast(device, config.precision):
        loss, parts = objective.loss(model, batch)
    if not torch.isfinite(loss):
        # The schedule steps once per optimisation step (and is restored on resume).
        step = scheduler.last_epoch + 1
        shown = ", ".join(f"{k}={v.item():.4g}" for k, v in parts.items())
        raise TrainingDiverged(f"loss became {loss.item()} at step {step} ({shown})")
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), config.max_grad_norm)
    optimizer.step()
    scheduler.step()
    return loss, parts


def epoch_batches(
    size: int,
    batch_size: int,
    seed: int,
    epoch: int,
    lengths: Sequence[int] | None = None,
) -> list[list[int]]:
    """The item indices of each batch of one epoch: every item exactly once, one batch
    possibly partial (none dropped), `ceil(size / batch_size)` batches in all.

    A fixed function of (seed, epoch), so a resumed trial, which restores the step and
    recomputes its epoch's batches, continues mid-epoch exactly. Without `lengths`:
    consecutive slices of a random permutation. With the items' `lengths`: that
    permutation cut into chunks of LENGTH_GROUP_BATCHES batches, each chunk sorted by
    length (ties in permutation order) and cut into batches, then the batches shuffled,
    so that a batch pads little and the order of lengths is random."""
    generator = torch.Generator().manual_seed(seed * 100_003 + epoch)
    order = torch.randperm(size, generator=generator).tolist()
    if lengths is None:
        return [order[start : start + batch_size] for start in range(0, size, batch_size)]
    chunk = LENGTH_GROUP_BATCHES * batch_size
    batches = []
    for begin in range(0, size, chunk):
        part = sorted(order[begin : begin + chunk], key=lengths.__getitem__)
        batches += [part[start : start + batch_size] for start in range(0, len(part), batch_size)]
    return [batches[i] for i in torch.randperm(len(batches), generator=generator).tolist()]


def _accumulate(running: dict[str, float], parts: dict[str, torch.Tensor]) -> None:
    for name, value in parts.items():
        running[name] = running.get(name, 0.0) + value.item()
    running["count"] = running.get("count", 0) + 1


def _report_with_checkpoint(reporter, state: _State, metrics, model, optimizer, scheduler) -> None:
    with owned_temporary_directory("xlt-ckpt-") as directory:
        torch.save(
            {
                "model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(),
                "state": state.__dict__,
                # Saved after the step's evaluation, as the next step would find it.
                "random_state": random_state.capture(),
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
    if "random_state" in saved:  # absent from checkpoints written before it was saved
        random_state.restore(saved["random_state"])
    return _State(**saved["state"])
