"""Evaluation case: prediction throughput on a real XNLI test file, the former fixed batches
(2 x batch_size rows, each padded to max_seq_length = 128) against the token-budget
batches every task now predicts with (`tasks/pair_encoding_and_scoring.py::predict`)."""

from __future__ import annotations

import time
from typing import Iterator

import numpy as np
import torch

from benchmarks.common import Result, Settings, measured, skipped
from benchmarks.training import FIXED_WIDTH
from benchmarks.workload import (
    median,
    padded_to,
    use_all_cpus,
    xnli_test_pairs,
    xnli_workload,
)
from xlt_core.batching import pad_batch, rows
from xlt_core.tasks.pair_encoding_and_scoring import encode_pairs, predict

TARGET = (">=", 2.5)  # token-budget examples/s over fixed-128's
REPEATS = 3  # timed passes over the file per scheme (the median is reported)
QUICK_EXAMPLES = 300


@torch.no_grad()
def predict_fixed(model, encoded, batch_size: int, pad_id: int, width: int) -> np.ndarray:
    """The former evaluation: `batch_size` rows per batch in file order, padded to `width`."""
    model.eval()
    predictions = np.empty(len(encoded), dtype=np.int64)
    for start in range(0, len(encoded), batch_size):
        chunk = list(range(start, min(start + batch_size, len(encoded))))
        batch = padded_to(pad_batch(rows(encoded, chunk), pad_id), width, pad_id)
        predictions[chunk] = model(**batch).logits.argmax(dim=-1).numpy()
    return predictions


def evaluation_throughput(settings: Settings) -> Iterator[Result]:
    if not settings.xnli_test.is_file() or not settings.xnli_train.is_file():
        yield skipped(
            "evaluation throughput (XNLI test-en)",
            f"{settings.xnli_test} or {settings.xnli_train} is absent",
        )
        return
    use_all_cpus()
    workload = xnli_workload(settings, require_xnli=True, max_seq_length=FIXED_WIDTH)
    config = workload.config
    pairs = xnli_test_pairs(config, QUICK_EXAMPLES if settings.quick else None)
    encoded = encode_pairs(workload.tokenizer, pairs, config.max_seq_length)
    model = workload.tiny_model()
    # What the pair task's evaluator passes: 2 x batch_size rows, the config's token budget.
    batch_size, pad_id = 2 * config.batch_size, workload.tokenizer.pad_token_id
    budget = config.eval_token_budget()
    schemes = {
        "fixed-128": lambda: predict_fixed(model, encoded, batch_size, pad_id, FIXED_WIDTH),
        "token-budget": lambda: predict(
            model, encoded, batch_size, pad_id, torch.device("cpu"), budget
        ),
    }
    speeds, predictions = {}, {}
    repeats = 1 if settings.quick else REPEATS
    for name, run in schemes.items():
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            predictions[name] = run()
            times.append(time.perf_counter() - started)
        speeds[name] = len(pairs) / median(times)
        yield measured(
            f"eval examples/s, {name} (tiny, {len(pairs)} test-en pairs)",
            speeds[name],
            "ex/s",
            note=f"median of {repeats} passes"
            + ("" if name == "fixed-128" else f"; budget {budget} padded tokens per batch"),
        )
    differing = int((predictions["fixed-128"] != predictions["token-budget"]).sum())
    yield measured(
        "eval examples/s, token-budget / fixed-128 (tiny)",
        speeds["token-budget"] / speeds["fixed-128"],
        "x",
        TARGET,
        f"predictions differ on {differing} of {len(pairs)} pairs",
    )
