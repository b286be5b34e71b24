"""Training cases: the cost of a step per objective against fine-tuning's (issue 10's EAR
target), and training throughput with fixed, dynamic and length-grouped batches.

Every step is `xlt_core.train.train`'s step (`workload.Trainer.step`) on the objective's own
training set (`build_objective` + `training_set`, synonym copies included), on CPU with
torch using every CPU available.
"""

from __future__ import annotations

import gc
import time
from typing import Iterator

from benchmarks.common import Result, Settings, measured, skipped
from benchmarks.workload import (
    OBJECTIVE_NAMES,
    Trainer,
    Workload,
    batch_width,
    median,
    padded_to,
    rows_near_width,
    use_all_cpus,
    xnli_workload,
)
from xlt_core.train import epoch_batches

# Case 1: batch 8, about 64 tokens wide, from the sample's own lengths.
STEP_ROWS, STEP_WIDTH = 8, 64
# Steps before timing (allocator, optimizer state, first-call caches) and steps timed.
STEP_REPEATS = {"tiny": (3, 9), "mBERT-base": (1, 3), "quick": (1, 2)}
EAR_TARGET = ("<=", 2.1)  # x fine-tuning's step, at mBERT-base dimensions
# Case 2: the trials' batch size; examples/s of grouped batches over today's (random
# batches padded to their longest row), and the padding grouping leaves.
THROUGHPUT_BATCH = 32
GROUPED_TARGET = {"tiny": (">=", 1.8), "mBERT-base": (">=", 1.6)}
PADDING_TARGET = ("<=", 1.1)
FIXED_WIDTH = 128  # the former fixed padding: every row to max_seq_length
TINY_EPOCHS = 3  # timed epochs per scheme on the tiny model (the median is reported)
BASE_BATCHES = 3  # timed batches per scheme at mBERT-base dimensions


def step_costs(settings: Settings) -> Iterator[Result]:
    """Case 1: median seconds of a training step per objective and its ratio to
    fine-tuning's, on the same 8 examples, for the tiny model and at mBERT-base dimensions."""
    use_all_cpus()
    for dims in ("tiny", "quick" if settings.quick else "mBERT-base"):
        workload = xnli_workload(settings, wide_vocabulary=dims != "tiny")
        lengths = workload.encode(workload.examples).lengths()
        indices = rows_near_width(lengths, STEP_ROWS, STEP_WIDTH)
        model = workload.tiny_model() if dims == "tiny" else workload.base_model(settings.quick)
        trainer = Trainer(model, workload.config)
        warmup, repeats = STEP_REPEATS["quick" if settings.quick else dims]
        layers = model.config.num_hidden_layers
        prepared = {method: workload.objective(method, layers) for method in OBJECTIVE_NAMES}
        for objective, training_set in prepared.values():
            for _ in range(warmup):
                trainer.step(objective, training_set, indices)
        # Round robin, so that a change in the machine's load falls on every objective alike.
        times = {method: [] for method in prepared}
        for _ in range(repeats):
            for method, (objective, training_set) in prepared.items():
                times[method].append(trainer.timed_step(objective, training_set, indices))
        seconds = {method: median(values) for method, values in times.items()}
        where = f"{dims}, {STEP_ROWS} {workload.source} rows"
        for method, (_, training_set) in prepared.items():
            note = (
                f"width {batch_width(training_set, indices)}, median of {repeats} "
                f"after {warmup} warm-up"
            )
            if method == "finetune":
                yield measured(f"step finetune ({where})", seconds[method], "s", note=note)
                continue
            target = EAR_TARGET if method == "ear" and dims == "mBERT-base" else None
            yield measured(
                f"step {method} / finetune ({where})",
                seconds[method] / seconds["finetune"],
                "x",
                target,
                f"{seconds[method]:.3f} s/step, {note}",
            )
        del model, trainer, prepared
        gc.collect()


class _FixedWidth:
    """A training set whose batches are all `width` wide (rows padded to max_seq_length)."""

    def __init__(self, training_set, width: int, pad_id: int):
        self.training_set, self.width, self.pad_id = training_set, width, pad_id

    def __len__(self) -> int:
        return len(self.training_set)

    def lengths(self) -> list[int]:
        return [self.width] * len(self.training_set)

    def batch(self, indices):
        return padded_to(self.training_set.batch(indices), self.width, self.pad_id)


def _schemes(workload: Workload, training_set, epoch: int) -> dict:
    """Each scheme's (training set, the epoch's batches, padded tokens per real token)."""
    lengths = training_set.lengths()
    size, seed = len(training_set), workload.config.seed
    random_batches = epoch_batches(size, THROUGHPUT_BATCH, seed, epoch)
    grouped_batches = epoch_batches(size, THROUGHPUT_BATCH, seed, epoch, lengths)
    real = sum(lengths)

    def padding(batches, width=None):
        return sum(len(b) * (width or max(lengths[i] for i in b)) for b in batches) / real

    fixed = _FixedWidth(training_set, FIXED_WIDTH, workload.tokenizer.pad_token_id)
    return {
        "fixed-128": (fixed, random_batches, padding(random_batches, FIXED_WIDTH)),
        "dynamic": (training_set, random_batches, padding(random_batches)),
        "grouped": (training_set, grouped_batches, padding(grouped_batches)),
    }


def training_throughput(settings: Settings) -> Iterator[Result]:
    """Case 2: fine-tuning examples/s on the real XNLI training sample with fixed-128,
    dynamic (random batches padded to their longest row: the former default) and grouped
    (`epoch_batches` with the items' lengths) batches; padded tokens per real token."""
    if not settings.xnli_train.is_file():
        yield skipped("training throughput (XNLI)", f"{settings.xnli_train} is absent")
        return
    use_all_cpus()
    workload = xnli_workload(settings, require_xnli=True, batch_size=THROUGHPUT_BATCH)
    objective, training_set = workload.objective("finetune", workload.config.tiny_layers)
    size = len(training_set)

    # Tiny model: whole epochs, a fresh model per scheme (same seed), the epochs of the
    # schemes in turn (a change in load falls on each alike), the median epoch per scheme.
    epochs = 1 if settings.quick else TINY_EPOCHS
    schemes = _schemes(workload, training_set, 0)
    trainers = {scheme: Trainer(workload.tiny_model(), workload.config) for scheme in schemes}
    for scheme, (data, batches, _) in schemes.items():
        for indices in batches[:2]:  # warm-up
            trainers[scheme].step(objective, data, indices)
    times = {scheme: [] for scheme in schemes}
    for epoch in range(epochs):
        for scheme, (data, batches, _) in _schemes(workload, training_set, epoch).items():
            started = time.perf_counter()
            for indices in batches:
                trainers[scheme].step(objective, data, indices)
            times[scheme].append(time.perf_counter() - started)
    del trainers
    speeds = {scheme: size / median(values) for scheme, values in times.items()}
    for scheme, (_, _, padding) in schemes.items():
        yield measured(
            f"train examples/s, {scheme} (tiny, {size} XNLI pairs)",
            speeds[scheme],
            "ex/s",
            note=f"batch {THROUGHPUT_BATCH}, median of {epochs} epochs; "
            f"{padding:.2f} padded tokens per real token",
        )
    yield measured(
        "train examples/s, grouped / dynamic (tiny)",
        speeds["grouped"] / speeds["dynamic"],
        "x",
        GROUPED_TARGET["tiny"],
        f"grouped / fixed-128: {speeds['grouped'] / speeds['fixed-128']:.2f} x",
    )
    paddings = {scheme: values[2] for scheme, values in schemes.items()}
    yield measured(
        "padded tokens per real token, grouped",
        paddings["grouped"],
        "x",
        PADDING_TARGET,
        f"dynamic {paddings['dynamic']:.2f}, fixed-128 {paddings['fixed-128']:.2f} "
        f"(epoch 0, batch {THROUGHPUT_BATCH})",
    )
    yield from _base_throughput(settings)


def _base_throughput(settings: Settings) -> Iterator[Result]:
    """At mBERT-base dimensions (with the stand-in for mBERT's tokenizer) a few batches per
    scheme only: the epoch's full batches sorted by padded tokens and taken at evenly
    spaced quantiles (a stratified sample, so a few batches stand for the epoch's mix of
    widths); examples/s = rows / seconds."""
    dims = "quick" if settings.quick else "mBERT-base"
    workload = xnli_workload(
        settings, require_xnli=True, wide_vocabulary=True, batch_size=THROUGHPUT_BATCH
    )
    objective, training_set = workload.objective("finetune", workload.config.tiny_layers)
    count = 1 if settings.quick else BASE_BATCHES
    model = workload.base_model(settings.quick)
    trainer = Trainer(model, workload.config)
    lengths = training_set.lengths()
    # Warm-up, on the narrowest full grouped batch: AdamW allocates its state.
    schemes = _schemes(workload, training_set, 0)
    narrowest = min(
        (b for b in schemes["grouped"][1] if len(b) == THROUGHPUT_BATCH),
        key=lambda b: max(lengths[i] for i in b),
    )
    trainer.step(objective, training_set, narrowest)
    samples, seconds = {}, {}
    for scheme in ("dynamic", "grouped"):
        _, batches, _ = schemes[scheme]
        full = sorted(
            (b for b in batches if len(b) == THROUGHPUT_BATCH),
            key=lambda b: max(lengths[i] for i in b),
        )
        samples[scheme] = [full[int((k + 0.5) * len(full) / count)] for k in range(count)]
        seconds[scheme] = 0.0
    for k in range(count):  # the schemes' batches in turn
        for scheme, sample in samples.items():
            data = schemes[scheme][0]
            seconds[scheme] += trainer.timed_step(objective, data, sample[k])
    speeds = {scheme: count * THROUGHPUT_BATCH / seconds[scheme] for scheme in samples}
    for scheme, sample in samples.items():
        widths = ", ".join(str(max(lengths[i] for i in b)) for b in sample)
        yield measured(
            f"train examples/s, {scheme} ({dims}, {count} batches)",
            speeds[scheme],
            "ex/s",
            note=f"batch {THROUGHPUT_BATCH}, widths {widths} (quantiles of the epoch's)",
        )
    target = None if settings.quick else GROUPED_TARGET["mBERT-base"]
    yield measured(
        f"train examples/s, grouped / dynamic ({dims})",
        speeds["grouped"] / speeds["dynamic"],
        "x",
        target,
    )
    del model, trainer
    gc.collect()
