"""The smoke budgets on XNLI and PAWS-X that the EAR (ding2022) and robust-training
(huang2021) scripts share, so that their smoke sweeps' runs pair up: the same seeds and
trial settings on synthetic data, or on the shared sample with `--data-dir`."""

from sweeps.spec import experiment as shared

SMOKE_SEEDS = [0, 1]


def xnli_smoke_settings(data_dir: str | None) -> dict:
    """The smoke budget on synthetic XNLI, or on local XNLI files with `--data-dir`."""
    base = {
        **shared.SMOKE_TRAINING,
        "task": "xnli",
        "target_langs": list(shared.SYNTHETIC_TARGETS),
    }
    base.update(shared.data_settings(data_dir, default_source="synthetic"))
    if data_dir:
        # The real training sample (999 pairs) gives the tiny model little to learn from;
        # evaluating on 1,000 test pairs per language keeps the smoke run short.
        base["max_eval_examples"] = 1000
    return base


def pawsx_smoke_settings(data_dir: str | None) -> dict:
    """The smoke budget on PAWS-X with generalized pairs on (huang2021 evaluates them):
    synthetic data, or the shared sample's PAWS-X dev files with `--data-dir`."""
    base = {
        **shared.SMOKE_TRAINING,
        "task": "pawsx",
        "target_langs": list(shared.SYNTHETIC_TARGETS),
        "generalized_pairs": True,
    }
    base.update(shared.data_settings(data_dir, default_source="synthetic"))
    if data_dir:
        # The shared sample has PAWS-X dev files only: cut them into disjoint train /
        # dev (selection) / test parts by example index (see xlt_core/data/loading.py).
        base.update({"split_dev_files": True, "target_langs": list(shared.LOCAL_PAWSX_TARGETS)})
    return base
