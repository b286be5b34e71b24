"""The process-wide random-number state a training step draws from (dropout, sampling):
saved in every checkpoint and restored with it, so that a trial resumed at step k draws what
an uninterrupted one would have drawn from step k on.

The data order needs no saving: `xlt_core.train.epoch_batches` is a fixed function of
(seed, epoch) and the position in the epoch follows from the restored step.
"""

from __future__ import annotations

import random

import numpy as np
import torch


def capture() -> dict:
    """Python's `random`, numpy's global generator, torch's CPU generator and, when CUDA is
    present, every CUDA device's."""
    state = {
        "python": random.getstate(),
        "numpy": np.random.get_state(),
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore(state: dict) -> None:
    """Put back what `capture` returned. A checkpoint written with CUDA and restored on a
    machine without it (or with fewer devices) restores the CPU generators only."""
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    cuda = state.get("cuda")
    if cuda is not None and torch.cuda.is_available() and len(cuda) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all(cuda)
