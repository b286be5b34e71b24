"""Memory case: the peak memory of one training step per objective at mBERT-base
dimensions, batch 32 (real XNLI items about 64 tokens wide; EAR's batch also holds their
32 synonym copies), on CPU. No target: the figure is printed.

Measured as resident memory (RSS) in a fresh worker process per objective, so that no
other case's tensors or allocator caches are counted: the worker builds the model,
AdamW and the objective's training set, takes one step on the narrowest item (AdamW
allocates its state, the gradients stay allocated into the next step's forward pass, as
in training), then resets the kernel's peak-RSS mark (`/proc/self/clear_refs` = 5), reads
RSS, takes the measured step and reads the peak (`VmHWM` in `/proc/self/status`). Growth =
peak - RSS before the step: what the step itself adds (activations, the new gradients,
temporaries). torch offers no CPU allocator statistics. Where the peak mark cannot be
reset, `VmHWM` is the worker's peak since it started, which then also covers what building
the model took (the note says so); never `ru_maxrss`, which keeps the peak of the process that
started the worker (`benchmarks.common.status_bytes`).

    python -m benchmarks.memory OBJECTIVE SCRATCH_DIR DATA_DIR [--quick]   # the worker
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path
from typing import Iterator

from benchmarks.common import REPO, Result, Settings, measured, status_bytes

ROWS, WIDTH = 32, 64
OBJECTIVES = ("finetune", "ear", "adv", "rs_rp", "rs_da")  # as workload.OBJECTIVE_NAMES
MIB = 1024 * 1024


def peak_memory(settings: Settings) -> Iterator[Result]:
    dims = "quick" if settings.quick else "mBERT-base"
    for method in OBJECTIVES:
        command = [
            sys.executable,
            "-m",
            "benchmarks.memory",
            method,
            str(settings.scratch),
            str(settings.data_dir),
        ] + ["--quick"] * settings.quick
        completed = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=600)
        if completed.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} exited {completed.returncode}:\n"
                               + completed.stderr[-3000:])  # fmt: skip
        report = json.loads(completed.stdout.strip().splitlines()[-1])
        yield measured(
            f"peak RSS growth, step {method} ({dims}, {ROWS} {report['source']} rows)",
            report["growth"] / MIB,
            "MiB",
            note=f"width {report['width']}; peak RSS {report['peak'] / MIB:.0f} MiB, "
            f"{report['before'] / MIB:.0f} MiB before the step; {report['how']}",
        )


def _reset_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def _worker(method: str, scratch: Path, data_dir: Path, quick: bool) -> dict:
    from benchmarks.common import Settings
    from benchmarks.workload import (
        Trainer,
        batch_width,
        rows_near_width,
        use_all_cpus,
        xnli_workload,
    )

    use_all_cpus()
    # The cases' shared scratch directory: the tokenizer and encodings are cached there.
    workload = xnli_workload(Settings(quick, data_dir, scratch), wide_vocabulary=True)
    lengths = workload.encode(workload.examples).lengths()
    indices = rows_near_width(lengths, ROWS, WIDTH)
    model = workload.base_model(quick)
    objective, training_set = workload.objective(method, model.config.num_hidden_layers)
    trainer = Trainer(model, workload.config)
    narrowest = min(range(len(lengths)), key=lengths.__getitem__)
    trainer.step(objective, training_set, [narrowest])
    gc.collect()
    reset = _reset_peak()
    before = status_bytes("VmRSS")
    trainer.step(objective, training_set, indices)
    peak = status_bytes("VmHWM")
    how = "VmHWM reset before the step" if reset else "VmHWM (includes building the model)"
    return {
        "before": before,
        "peak": peak,
        "growth": max(0, peak - before),
        "how": how,
        "width": batch_width(training_set, indices),
        "source": workload.source,
    }


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if a != "--quick"]
    method, scratch, data_dir = arguments[0], Path(arguments[1]), Path(arguments[2])
    print(json.dumps(_worker(method, scratch, data_dir, "--quick" in sys.argv[1:])))
