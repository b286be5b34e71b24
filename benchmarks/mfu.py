"""MFU case: each objective's training step against the machine's dense matmul rate (model
FLOPs utilisation).

The limit: the best FLOP/s of square matmuls (2·n³ FLOPs each) over a few sizes, fp32 on
CPU with torch on every CPU available; bf16 on a GPU when torch sees one (the steps then run
there too, under the trials' bf16 autocast).

The work: a step's FLOPs are its matmuls' (what torch's `FlopCounterMode` counts: mm, addmm,
bmm; elementwise ops, softmax, LayerNorm, the embedding gathers and AdamW are not FLOPs in
this count, though they take time). For fine-tuning a BERT sequence classifier on R rows of
width s (T = R·s tokens, padding included: the model computes it), L layers, hidden d,
intermediate f, C labels, forward + backward (the backward pass is twice the forward's
matmuls: gradients of inputs and of weights) is

    6·N·T + 12·L·T·s·d + 6·R·(d² + d·C),   N = L·(4·d² + 2·d·f)

6·N·T for the dense parameters of the layers (query, key, value, output, the two
feed-forward matrices), 12·L·T·s·d for attention (QKᵀ and the weighted sum of values:
4·T·s·d per layer forward), 6·R·(d² + d·C) for the pooler and classifier on each row's [CLS]
vector. The word embeddings (119,547 x 768 in mBERT) are gathered, not multiplied: no FLOPs.
tests/benchmarks/test_mfu.py checks the formula against a hand count and against
`FlopCounterMode`. Each objective's own extra passes (EAR's batch stacking the originals
above their copies: twice the rows; ADV's ascent pass, whose gradient stops at the
perturbation; RS-DA's copies) are counted, not assumed: one step of each runs under
`FlopCounterMode` (it also serves as the warm-up step), so the declarations' measured step
costs, which are time ratios, play no part. The note gives the count as a multiple of the
fine-tuning formula on the same rows.

MFU = counted FLOPs / median step seconds / the matmul rate.
"""

from __future__ import annotations

import gc
import time
from typing import Callable, Iterator

import torch
from torch.utils.flop_counter import FlopCounterMode

from benchmarks.common import Result, Settings, measured
from benchmarks.workload import (
    OBJECTIVE_NAMES,
    Trainer,
    batch_width,
    median,
    rows_near_width,
    use_all_cpus,
    xnli_workload,
)

# mBERT's 8 rows padded to 128 tokens: fits in ~3 GB on CPU with AdamW's state (the model's
# 178 M parameters x 4 copies) and takes seconds per step on 2 cores, so few steps are timed.
STEP_ROWS, STEP_WIDTH = 8, 128
# After the counted step (the warm-up); a GPU's step takes milliseconds, so more are timed.
TIMED_STEPS = {"mBERT-base": 2, "quick": 2, "cuda": 10}
MATMUL_SIZES = {"cpu": (512, 1024, 2048), "cuda": (4096, 8192), "quick": (128, 256)}
MATMUL_REPEATS = 3
# A CPU step at mBERT-base dimensions is mostly large matmuls: at least half the rate.
MFU_TARGET = (">=", 50.0)


def matmul_rate(device: torch.device, dtype: torch.dtype, sizes, repeats: int) -> tuple:
    """The best FLOP/s of an n x n by n x n matmul (2·n³ FLOPs) over `sizes` and `repeats`
    (the first product of each size untimed), and the size that reached it."""
    best = (0.0, 0)
    for size in sizes:
        a, b = (torch.randn(size, size, device=device, dtype=dtype) for _ in range(2))
        a @ b
        for _ in range(repeats):
            _synchronize(device)
            started = time.perf_counter()
            a @ b
            _synchronize(device)
            rate = 2 * size**3 / (time.perf_counter() - started)
            best = max(best, (rate, size))
    return best


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def step_flops(config, rows: int, width: int) -> int:
    """Matmul FLOPs of one fine-tuning forward + backward of a BERT sequence classifier
    (`config`: a transformers BertConfig) on `rows` rows of `width` tokens: the formula of
    the module's docstring."""
    layers, d, f = config.num_hidden_layers, config.hidden_size, config.intermediate_size
    tokens = rows * width
    dense = layers * (4 * d * d + 2 * d * f)
    attention = 12 * layers * tokens * width * d
    head = 6 * rows * (d * d + d * config.num_labels)
    return 6 * dense * tokens + attention + head


def counted_flops(run: Callable[..., object], *args) -> int:
    """The matmul FLOPs torch counts while `run(*args)` runs (forward and backward alike)."""
    with FlopCounterMode(display=False) as counter:
        run(*args)
    return counter.get_total_flops()


def _device() -> tuple[torch.device, torch.dtype, str]:
    if torch.cuda.is_available():
        return torch.device("cuda"), torch.bfloat16, torch.cuda.get_device_name()
    use_all_cpus()
    return torch.device("cpu"), torch.float32, f"{torch.get_num_threads()} threads"


def model_flops_utilisation(settings: Settings) -> Iterator[Result]:
    """The matmul rate, then per objective: step seconds, achieved FLOP/s and MFU."""
    device, dtype, where = _device()
    sizes = MATMUL_SIZES["quick" if settings.quick else device.type]
    peak, size = matmul_rate(device, dtype, sizes, MATMUL_REPEATS)
    kind = f"{str(dtype).removeprefix('torch.')} {device.type}"
    yield measured(
        f"dense matmul rate ({kind})",
        peak / 1e9,
        "GFLOP/s",
        note=f"best of {MATMUL_REPEATS} at n = {', '.join(map(str, sizes))}: n = {size}; {where}",
    )
    yield from objective_steps(settings, device, peak, OBJECTIVE_NAMES, STEP_ROWS)


def objective_steps(
    settings: Settings, device: torch.device, peak: float, methods, rows: int
) -> Iterator[Result]:
    """Per objective in `methods`, one step on `rows` items about STEP_WIDTH tokens wide:
    its median seconds, achieved FLOP/s and MFU against `peak`; on a GPU (bf16 autocast, the
    trials' precision) the step's peak GPU memory in the MFU line's note."""
    dims = "quick" if settings.quick else "mBERT-base"
    workload = xnli_workload(settings, wide_vocabulary=True)
    lengths = workload.encode(workload.examples).lengths()
    indices = rows_near_width(lengths, rows, STEP_WIDTH)
    model = workload.base_model(settings.quick)
    trainer = Trainer(model, workload.config, device=device)
    layers = model.config.num_hidden_layers
    # A target where the figure means something: mBERT-base on CPU (a GPU needs far larger
    # batches than 8 rows to approach its rate).
    target = MFU_TARGET if dims == "mBERT-base" and device.type == "cpu" else None
    timed = TIMED_STEPS["cuda" if dims == "mBERT-base" and device.type == "cuda" else dims]
    for method in methods:
        objective, training_set = workload.objective(method, layers)
        reset_peak_memory(device)
        flops = counted_flops(trainer.step, objective, training_set, indices)
        times = [trainer.timed_step(objective, training_set, indices) for _ in range(timed)]
        seconds, width = median(times), batch_width(training_set, indices)
        formula = step_flops(model.config, rows, width)
        where = f"{dims}, {rows} {workload.source} items, width {width}"
        yield measured(
            f"mfu step {method} ({where})",
            seconds,
            "s",
            note=f"median of {len(times)} after the counted step",
        )
        yield measured(
            f"mfu achieved {method}",
            flops / seconds / 1e9,
            "GFLOP/s",
            note=f"{flops / 1e9:.1f} GFLOP per step = {flops / formula:.2f} x the "
            f"fine-tuning formula on these rows ({formula / 1e9:.1f} GFLOP)",
        )
        yield measured(
            f"mfu {method} (achieved / matmul rate)",
            100 * flops / seconds / peak,
            "%",
            target,
            peak_memory_note(device),
        )
    del model, trainer
    gc.collect()


def reset_peak_memory(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)


def peak_memory_note(device: torch.device) -> str:
    """The GPU's peak allocated and reserved memory since the last reset ("" on CPU)."""
    if device.type != "cuda":
        return ""
    allocated = torch.cuda.max_memory_allocated(device) / 2**30
    reserved = torch.cuda.max_memory_reserved(device) / 2**30
    return f"peak GPU memory {allocated:.2f} GiB allocated, {reserved:.2f} GiB reserved"
