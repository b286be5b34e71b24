"""The seed-split null check: its splits, its counts on arrays whose answer is known (and
against scipy), its argument checks, and the whole command at a tiny size."""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import scaled_timeout, what_went_wrong
from scipy import stats

REPO = Path(__file__).resolve().parents[2]
# `benchmarks` is a folder of the repository, not an installed package.
sys.path.insert(0, str(REPO))

from benchmarks.seed_null import parse_args, seed_splits, split_rejections  # noqa: E402


def test_every_split_into_two_halves_comes_once_with_seed_0_in_group_a():
    assert seed_splits(4) == [((0, 1), (2, 3)), ((0, 2), (1, 3)), ((0, 3), (1, 2))]
    splits = seed_splits(8)
    assert len(splits) == 35  # C(8, 4) / 2
    partitions = {frozenset([a, b]) for a, b in splits}
    assert len(partitions) == 35
    for a, b in splits:
        assert a[0] == 0 and sorted(a + b) == list(range(8))
        assert list(a) == sorted(a) and list(b) == sorted(b)


@pytest.mark.parametrize("seeds", [2, 3, 5])
def test_seeds_must_be_even_and_at_least_4(seeds):
    with pytest.raises(ValueError, match="even number >= 4"):
        seed_splits(seeds)
    with pytest.raises(SystemExit):
        parse_args(["--seeds", str(seeds)])


def test_an_unknown_test_is_refused():
    with pytest.raises(SystemExit):
        parse_args(["--tests", "crossed,wilcoxon"])


def test_identical_seeds_reject_no_split():
    row = np.random.default_rng(0).integers(0, 2, 300).astype(float)
    scores = np.tile(row, (6, 1))
    assert split_rejections(scores, ("crossed", "ttest", "bootstrap"), 200) == {
        "crossed": 0,
        "ttest": 0,
        "bootstrap": 0,
    }


def test_only_the_split_that_separates_two_kinds_of_run_rejects():
    """Seeds 0 and 1 give one run's scores, seeds 2 and 3 another's. Split (0,1) | (2,3)
    pairs a run of each kind on both seeds: the same large difference, rejected by every
    test. The other two pair each seed with one of its own kind: no difference at all."""
    rng = np.random.default_rng(1)
    first = (rng.random(500) < 0.8).astype(float)
    second = (rng.random(500) < 0.4).astype(float)
    scores = np.stack([first, first, second, second])
    assert split_rejections(scores, ("crossed", "ttest", "bootstrap"), 200) == {
        "crossed": 1,
        "ttest": 1,
        "bootstrap": 1,
    }


def test_ttest_counts_match_scipy_on_each_split():
    rng = np.random.default_rng(2)
    # Seeds with run-level shifts, so that some splits reject and some do not.
    shifts = rng.normal(0, 0.08, size=(8, 1))
    scores = (rng.random((8, 400)) < 0.6 + shifts).astype(float)
    # The report's `ttest`: a paired t-test over examples of the seed-averaged scores.
    expected = sum(
        stats.ttest_rel(scores[list(a)].mean(axis=0), scores[list(b)].mean(axis=0)).pvalue < 0.05
        for a, b in seed_splits(8)
    )
    assert 0 < expected < 35  # the case tells something
    assert split_rejections(scores, ("ttest",)) == {"ttest": expected}


@pytest.mark.slow
def test_the_command_trains_the_seeds_and_prints_the_table():
    command = [sys.executable, "-m", "benchmarks.seed_null", "--seeds", "4",
               "--first-seed", "3", "--tests", "crossed,ttest", "--set", "epochs=0.2",
               "--set", "max_train_examples=200"]  # fmt: skip
    done = subprocess.run(
        command, cwd=REPO, capture_output=True, text=True, timeout=scaled_timeout(120)
    )
    assert done.returncode == 0, what_went_wrong(done)
    lines = done.stdout.splitlines()
    progress = [line for line in lines if line.startswith("seed ")]
    expected = [f"seed {seed} ({i}/4)" for i, seed in enumerate(range(3, 7), 1)]
    assert [line.split(" trained")[0] for line in progress] == expected
    assert "Splits of 4 seeds into two groups of 2: 3 (each once)" in done.stdout
    header = next(line for line in lines if line.startswith("test "))
    assert header.split() == ["test", "en", "es", "de", "ru"]
    for test in ("crossed", "ttest"):
        row = next(line for line in lines if line.startswith(f"{test} "))
        cells = re.findall(r"(\d)/3 \((\d+\.\d)%\)", row)
        assert len(cells) == 4, row
        assert all(float(share) == pytest.approx(100 * int(k) / 3, abs=0.05) for k, share in cells)
    assert not any(line.startswith("bootstrap ") for line in lines)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("setting", "named"), [("epochs=-1", "epochs"), ("task=ner", "0/1 accuracy scores")]
)
def test_a_bad_setting_stops_the_command_before_training(setting, named):
    command = [sys.executable, "-m", "benchmarks.seed_null", "--seeds", "4", "--set", setting]
    done = subprocess.run(
        command, cwd=REPO, capture_output=True, text=True, timeout=scaled_timeout(60)
    )
    assert done.returncode == 2, what_went_wrong(done)
    assert named in done.stderr and "trained in" not in done.stdout
