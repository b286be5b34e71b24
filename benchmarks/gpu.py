"""GPU check (`python -m benchmarks --only gpu`; issue 44): what a sweep's trials get from one
CUDA device at mBERT-base dimensions (randomly initialised from its config: no hub), under
the trials' bf16 autocast.

- the dense bf16 matmul rate (`mfu.matmul_rate`), the limit the steps are measured against;
- MFU of the fine-tuning, EAR and ADV steps on the trials' batch (batch_size = 32 rows about
  128 tokens wide), FLOPs counted as the `mfu` case counts them, with each step's peak GPU
  memory;
- the evaluation's examples/s: `tasks.pair_encoding_and_scoring.predict` over the XNLI test-en
  file (synthetic pairs where the shared data is absent) at the trials' token budget;
- 1, 2 and 4 trials sharing the GPU as `--trials-per-gpu K` schedules them
  (`gpu_sharing.py`: Ray actors with fractional GPUs): examples/s summed, and the peak
  memory of one trial.

Without CUDA the case is skipped, except with `--quick`: then the same code runs on the CPU
at tiny sizes (fp32), a check that it runs (tests/benchmarks/test_gpu.py), not a measurement.
"""

from __future__ import annotations

import time
from typing import Iterator

import torch

from benchmarks.common import Result, Settings, measured, skipped
from benchmarks.gpu_sharing import gpu_sharing
from benchmarks.mfu import MATMUL_REPEATS, MATMUL_SIZES, matmul_rate, objective_steps
from benchmarks.workload import median, use_all_cpus, xnli_test_pairs, xnli_workload
from xlt_core.config import TrialConfig
from xlt_core.tasks.pair_encoding_and_scoring import encode_pairs, predict

METHODS = ("finetune", "ear", "adv")
EVAL_REPEATS = 3
QUICK_EVAL_EXAMPLES = 200


def gpu_check(settings: Settings) -> Iterator[Result]:
    if not torch.cuda.is_available() and not settings.quick:
        yield skipped("gpu check", "no CUDA device (--quick runs its code on the CPU)")
        return
    if torch.cuda.is_available():
        device, dtype = torch.device("cuda"), torch.bfloat16
        where = torch.cuda.get_device_name()
    else:
        device, dtype = torch.device("cpu"), torch.float32
        where = f"CPU, {use_all_cpus()} threads (no CUDA: a check, not a measurement)"
    sizes = MATMUL_SIZES["quick" if settings.quick else "cuda"]
    peak, size = matmul_rate(device, dtype, sizes, MATMUL_REPEATS)
    yield measured(
        f"gpu dense matmul rate ({str(dtype).removeprefix('torch.')} {device.type})",
        peak / 1e9,
        "GFLOP/s",
        note=f"best of {MATMUL_REPEATS} at n = {', '.join(map(str, sizes))}: n = {size}; {where}",
    )
    yield from objective_steps(settings, device, peak, METHODS, TrialConfig.batch_size)
    yield evaluation_rate(settings, device)
    yield from gpu_sharing(settings)


def evaluation_rate(settings: Settings, device: torch.device) -> Result:
    """Examples/s of the trials' prediction (token-budget batches, bf16 on CUDA) with a
    model of mBERT-base's dimensions on the English test pairs."""
    workload = xnli_workload(settings, wide_vocabulary=True)
    config = workload.config
    pairs = xnli_test_pairs(config, QUICK_EVAL_EXAMPLES if settings.quick else None)
    encoded = encode_pairs(workload.tokenizer, pairs, config.max_seq_length)
    model = workload.base_model(settings.quick).to(device)
    pad_id, budget = workload.tokenizer.pad_token_id, config.eval_token_budget()

    def run():
        return predict(
            model, encoded, 2 * config.batch_size, pad_id, device, budget, config.precision
        )

    run()  # warm-up: kernels, the allocator
    times = []
    for _ in range(1 if settings.quick else EVAL_REPEATS):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    dims = "quick" if settings.quick else "mBERT-base"
    return measured(
        f"gpu eval examples/s ({dims}, {len(pairs)} {workload.source} test-en pairs)",
        len(pairs) / median(times),
        "ex/s",
        note=f"median of {len(times)} passes after one; budget {budget} padded tokens per "
        f"batch; on {device.type}",
    )
