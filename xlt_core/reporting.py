"""The reporter protocol: how a trial reports progress without knowing who listens.

The sweep layer implements it with Ray Tune and MLflow; tests and `python -m xlt_core`
use `ListReporter`.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Mapping, Protocol


class Reporter(Protocol):
    def report(
        self, step: int, metrics: Mapping[str, float], checkpoint_dir: str | None = None
    ) -> None:
        """Metrics at a training step; `checkpoint_dir` (if given) holds a resumable state
        and may be deleted by the trial once this returns."""

    def latest_checkpoint(self) -> str | None:
        """A directory saved by an earlier `report` of this trial to resume from, if any."""


class ListReporter:
    """Keeps every report in memory and copies checkpoints aside; prints when verbose."""

    def __init__(self, verbose: bool = False):
        self.reports: list[tuple[int, dict[str, float]]] = []
        self.verbose = verbose
        self._checkpoints = Path(tempfile.mkdtemp(prefix="xlt-checkpoints-"))
        self._latest: str | None = None

    def report(self, step, metrics, checkpoint_dir=None):
        self.reports.append((step, dict(metrics)))
        if checkpoint_dir is not None:
            target = self._checkpoints / f"step-{step}"
            shutil.copytree(checkpoint_dir, target, dirs_exist_ok=True)
            self._latest = str(target)
        if self.verbose:
            shown = ", ".join(f"{k}={v:.4f}" for k, v in sorted(metrics.items()))
            print(f"step {step}: {shown}", flush=True)

    def latest_checkpoint(self):
        return self._latest
