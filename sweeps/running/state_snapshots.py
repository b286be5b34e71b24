"""Tune's experiment-state snapshots on its own period only, not after every checkpoint.

`CheckpointConfig(num_to_keep=1)` (each trial keeps only its newest checkpoint: a model
with its optimiser state is GBs at mBERT size) also sets how many checkpoints a trial may
make before Tune forces a snapshot of the whole experiment: with 1, every checkpoint forces
one. A snapshot writes every trial so far, so a search of n trials spent O(n^2) of the
driver's CPU on them (docs/benchmarks.md, the driver case: 0.14 s per trial at 100 trials,
0.25 s at 1,000; 0.12 s and 0.07 s without the forcing). Tune has no setting that keeps one
checkpoint without the forcing, so while a phase runs the forcing hook does nothing and
snapshots follow Tune's automatic period (at least 10 s; ~5% of the driver's time).

What the forcing protected: a driver killed between Tune deleting a trial's older
checkpoint and its next snapshot leaves a state naming the deleted one. The resume mends
that case (`sweeps.safety.saved_state.recover_deleted_checkpoints` continues from the successor),
and a trial the last snapshot does not know at all starts again from its beginning in its
own MLflow run, as before this change for trials started after the last snapshot."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def periodic_snapshots_only() -> Iterator[None]:
    """Within: a trial's checkpoint no longer forces Tune's experiment-state snapshot."""
    from ray.tune.execution.experiment_state import _ExperimentCheckpointManager

    forcing = _ExperimentCheckpointManager.on_trial_checkpoint
    _ExperimentCheckpointManager.on_trial_checkpoint = _no_forced_snapshot
    try:
        yield
    finally:
        _ExperimentCheckpointManager.on_trial_checkpoint = forcing


def _no_forced_snapshot(manager, trial) -> None:
    """Tune's hook after a trial's checkpoint, which would force a snapshot: nothing."""
