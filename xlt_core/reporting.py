"""The reporter protocol: how a trial reports progress without knowing who listens.

The sweep layer implements it with Ray Tune and MLflow; tests and `python -m xlt_core`
use `ListReporter`.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Mapping, Protocol

from xlt_core.temp_folders import owned_temporary_directory

logger = logging.getLogger(__name__)


class Reporter(Protocol):
    def report(
        self, step: int, metrics: Mapping[str, float], checkpoint_dir: str | None = None
    ) -> None:
        """Metrics at a training step; `checkpoint_dir` (if given) holds a resumable state
        and may be deleted by the trial once this returns."""

    def latest_checkpoint(self) -> str | None:
        """A directory saved by an earlier `report` of this trial to resume from, if any."""


class ListReporter:
    """Keeps every report in memory and a copy of the latest checkpoint (all a resumed trial
    reads: the best weights so far travel inside it); logs each report when verbose.

    Each new checkpoint replaces the one before (at mBERT size ~2 GB each). `close()`, or
    leaving a `with` block, deletes the last one too; failing that, garbage collection or
    the interpreter's exit does (`tempfile.TemporaryDirectory`'s finaliser), and after a
    kill the next reporter or checkpoint made (`xlt_core/temp_folders.py`)."""

    def __init__(self, verbose: bool = False):
        self.reports: list[tuple[int, dict[str, float]]] = []
        self.verbose = verbose
        self._checkpoints = owned_temporary_directory("xlt-checkpoints-")
        self._latest: str | None = None

    def report(self, step, metrics, checkpoint_dir=None):
        self.reports.append((step, dict(metrics)))
        if checkpoint_dir is not None:
            self._keep(step, checkpoint_dir)
        if self.verbose:
            shown = ", ".join(f"{k}={v:.4f}" for k, v in sorted(metrics.items()))
            logger.info("step %s: %s", step, shown)

    def latest_checkpoint(self):
        return self._latest

    def close(self) -> None:
        """Delete every checkpoint kept; `latest_checkpoint()` is None afterwards."""
        self._checkpoints.cleanup()
        self._latest = None

    def __enter__(self) -> ListReporter:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def _keep(self, step: int, checkpoint_dir: str) -> None:
        # The new copy is complete before the old one goes: an interruption between the
        # two leaves a checkpoint to resume from.
        target = str(Path(self._checkpoints.name) / f"step-{step}")
        shutil.copytree(checkpoint_dir, target, dirs_exist_ok=True)
        previous, self._latest = self._latest, target
        if previous is not None and previous != target:
            shutil.rmtree(previous)
