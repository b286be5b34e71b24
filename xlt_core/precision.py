"""The numeric precision of a trial's forward passes (`TrialConfig.precision`)."""

from __future__ import annotations

import torch


def autocast(device: torch.device, precision: str) -> torch.autocast:
    """bf16 autocast for precision "bf16" on CUDA (weights, gradients and optimizer states
    stay fp32); off for "fp32", the papers' precision, and always off on CPU."""
    enabled = precision == "bf16" and device.type == "cuda"
    return torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=enabled)
