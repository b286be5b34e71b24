"""sweeps.running.state_snapshots: a trial's checkpoint no longer forces Tune's experiment-state
snapshot while a phase runs, and Tune's own hook is back afterwards."""

from ray.tune.execution.experiment_state import _ExperimentCheckpointManager

from sweeps.running.state_snapshots import periodic_snapshots_only


def manager() -> _ExperimentCheckpointManager:
    """A manager as Tune makes one for `CheckpointConfig(num_to_keep=1)`."""
    return _ExperimentCheckpointManager(
        storage=None, checkpoint_period="auto", sync_every_n_trial_checkpoints=1
    )


def test_tunes_hook_forces_a_snapshot_after_one_checkpoint_without_the_context():
    # The premise: were Tune to stop forcing by itself, the module would be dead code.
    tune_manager = manager()
    tune_manager.on_trial_checkpoint("trial")
    assert tune_manager._should_force_sync_up


def test_within_the_context_checkpoints_force_no_snapshot():
    tune_manager = manager()
    with periodic_snapshots_only():
        for _ in range(3):
            tune_manager.on_trial_checkpoint("trial")
    assert not tune_manager._should_force_sync_up


def test_the_hook_is_tunes_own_again_after_the_context_even_on_an_error():
    original = _ExperimentCheckpointManager.on_trial_checkpoint
    try:
        with periodic_snapshots_only():
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        pass
    assert _ExperimentCheckpointManager.on_trial_checkpoint is original
