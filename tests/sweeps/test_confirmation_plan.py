"""The confirmation phase's settings and plan, without Ray: its fresh seeds, `--set
confirm_seeds`, the dry run's phase and cost, the sweep key."""

import dataclasses

import pytest

from sweeps import ear_xnli
from sweeps.cli import main
from sweeps.running.runner import sweep_key
from sweeps.spec.experiment import experiment_spec
from xlt_core.config import MAX_SEED


def _spec(seeds, confirm=None):
    spec = experiment_spec(ear_xnli, "smoke", None)
    return dataclasses.replace(spec, seeds=list(seeds), confirm_seeds=confirm)


@pytest.mark.parametrize(
    ("seeds", "confirm", "fresh"),
    [
        ((0, 1), None, [2, 3]),  # as many as the sweep's, after its largest
        ((1, 2, 3, 4, 5), None, [6, 7, 8, 9, 10]),
        ((0, 1), 3, [2, 3, 4]),
        ((0, 1), 0, []),
        ((0, MAX_SEED), 2, [1, 2]),  # past MAX_SEED: the smallest unused
    ],
)
def test_the_confirmation_runs_on_seeds_the_sweep_trains_no_trial_with(seeds, confirm, fresh):
    assert _spec(seeds, confirm).confirmation_seeds() == fresh


def test_confirm_seeds_is_a_count_from_zero(capsys):
    assert main(ear_xnli, ["--preset", "smoke", "--dry-run", "--set", "confirm_seeds=-1"]) == 2
    assert "confirm_seeds='-1': an integer >= 0 (0: no confirmation phase)" in (
        capsys.readouterr().err
    )


def test_the_dry_run_counts_the_confirmation_and_drops_it_at_zero(capsys):
    assert main(ear_xnli, ["--preset", "smoke", "--dry-run", "--set", "confirm_seeds=3"]) == 0
    out = capsys.readouterr().out
    assert "the baseline x 3 fresh seeds (2, 3, 4) = 6 trials" in out
    assert "Trials: 12\n" in out  # the grid's 3 x 2, then 2 x 3
    assert main(ear_xnli, ["--preset", "smoke", "--dry-run", "--set", "confirm_seeds=0"]) == 0
    out = capsys.readouterr().out
    assert "Confirmation" not in out and "Trials: 6\n" in out


def test_the_sweep_key_changes_only_when_confirm_seeds_is_set():
    # The default leaves the keys of sweeps started before the setting existed: --resume finds them.
    default = sweep_key(_spec((0, 1)))
    assert sweep_key(_spec((0, 1), None)) == default
    assert len({default, sweep_key(_spec((0, 1), 2)), sweep_key(_spec((0, 1), 0))}) == 3
