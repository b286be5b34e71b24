"""Presets: what a sweep script runs when the user gives no overrides.

`smoke` runs offline in minutes on two CPU cores (tiny BERT, synthetic data unless a data
directory is given); `paper` is the papers' setting (mBERT, hub data, 5 seeds).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sweeps import spaces

XNLI_TARGETS = ("ar", "bg", "de", "el", "es", "fr", "hi", "ru", "sw", "th", "tr", "ur", "vi", "zh")
PAWSX_TARGETS = ("de", "es", "fr", "ja", "ko", "zh")
SYNTHETIC_TARGETS = ["es", "de", "ru"]
# The shared PAWS-X sample (../shared/data/pawsx) holds dev files only, in these targets.
LOCAL_PAWSX_TARGETS = ["de", "es", "fr"]
SEEDS = {"smoke": [0, 1], "paper": [1, 2, 3, 4, 5]}


@dataclass
class SweepSpec:
    """One sweep: common trial settings, the method configurations, and the seeds."""

    experiment: str
    base: dict
    points: list[dict]
    seeds: list[int]
    cpus_per_trial: float = 1.0
    preset: str = "smoke"
    strategy: str = "grid"
    # The paper's test for this task, read by the report: ttest (paired t-test on per-example
    # scores averaged over seeds), permutation (NER), bootstrap (robust training).
    significance_test: str = "ttest"
    extra_tags: dict = field(default_factory=dict)


SMOKE_TRAINING = {
    "model": "tiny",
    "learning_rate": 1e-3,
    "batch_size": 32,
    "epochs": 3.0,
    "evals_per_epoch": 2,
    "max_seq_length": 64,
    "warmup_ratio": 0.1,
    "tiny_hidden_size": 64,
    "tiny_layers": 6,
    "tiny_heads": 4,
}

# XTREME's XNLI fine-tuning budget for mBERT (lr 2e-5, batch 32, max length 128); the
# epoch count is ours (2): override with --set epochs=N.
PAPER_TRAINING = {
    "model": "bert-base-multilingual-cased",
    "learning_rate": 2e-5,
    "batch_size": 32,
    "epochs": 2.0,
    "evals_per_epoch": 4,
    "max_seq_length": 128,
    "warmup_ratio": 0.1,
}


def ear_xnli(preset: str, data_dir: str | None) -> SweepSpec:
    if preset == "smoke":
        base = {**SMOKE_TRAINING, "task": "xnli", "target_langs": ["es", "de", "ru"]}
        base.update(_data_settings(data_dir, default_source="synthetic"))
        if data_dir:
            # The real training sample (999 pairs) gives the tiny model little to learn from;
            # evaluating on 1,000 test pairs per language keeps the smoke run short.
            base["max_eval_examples"] = 1000
        return SweepSpec("ear_xnli", base, [spaces.BASELINE, *spaces.ear_smoke_points()], seeds=[0, 1], preset=preset)
    base = {**PAPER_TRAINING, "task": "xnli", "target_langs": list(XNLI_TARGETS)}
    base.update(_data_settings(data_dir, default_source="hub"))
    return SweepSpec("ear_xnli", base, [spaces.BASELINE, *spaces.ear_paper_points()], seeds=[1, 2, 3, 4, 5], preset=preset)


def robust_xnli(preset: str, data_dir: str | None) -> SweepSpec:
    """Baseline, ADV, RS-RP and RS-DA on XNLI with the same seeds (Huang et al. 2021), with
    the generalized pairs and the mixed-language set evaluated."""
    xnli = ear_xnli(preset, data_dir)  # the same trial settings and seeds as the EAR sweep
    base = {**xnli.base, "generalized_pairs": True, "mixed_language": True}
    points = spaces.robust_smoke_points() if preset == "smoke" else spaces.robust_paper_points(spaces.RS_DA_M["xnli"])
    return _robust_spec("robust_xnli", base, points, xnli.seeds, preset)


def robust_pawsx(preset: str, data_dir: str | None) -> SweepSpec:
    """Baseline, ADV, RS-RP and RS-DA on PAWS-X with the same seeds, generalized pairs on."""
    points = spaces.robust_smoke_points() if preset == "smoke" else spaces.robust_paper_points(spaces.RS_DA_M["pawsx"])
    return _robust_spec("robust_pawsx", _pawsx_base(preset, data_dir), points, SEEDS[preset], preset)


def ear_pawsx(preset: str, data_dir: str | None) -> SweepSpec:
    """EAR vs plain fine-tuning on PAWS-X; the paper draws m = 10 synonym copies there."""
    if preset == "smoke":
        points = spaces.ear_smoke_points()
    else:
        points = spaces.with_setting(spaces.ear_paper_points(), "m", spaces.RS_DA_M["pawsx"])
    return SweepSpec("ear_pawsx", _pawsx_base(preset, data_dir), [spaces.BASELINE, *points], seeds=SEEDS[preset], preset=preset)


def _robust_spec(experiment: str, base: dict, points: list[dict], seeds: list[int], preset: str) -> SweepSpec:
    # The robust-training paper tests significance with a bootstrapped paired t-test.
    return SweepSpec(experiment, base, [spaces.BASELINE, *points], seeds=list(seeds), preset=preset, significance_test="bootstrap")


def _pawsx_base(preset: str, data_dir: str | None) -> dict:
    """PAWS-X trial settings, generalized pairs on (both papers evaluate PAWS-X)."""
    if preset == "smoke":
        base = {**SMOKE_TRAINING, "task": "pawsx", "target_langs": list(SYNTHETIC_TARGETS), "generalized_pairs": True}
        base.update(_data_settings(data_dir, default_source="synthetic"))
        if data_dir:
            # The shared sample has PAWS-X dev files only: cut them into disjoint train /
            # dev (selection) / test parts by example index (see xlt_core/data/loading.py).
            base.update({"split_dev_files": True, "target_langs": list(LOCAL_PAWSX_TARGETS)})
        return base
    base = {**PAPER_TRAINING, "task": "pawsx", "target_langs": list(PAWSX_TARGETS), "generalized_pairs": True}
    base.update(_data_settings(data_dir, default_source="hub"))
    return base


def _data_settings(data_dir: str | None, default_source: str) -> dict:
    if data_dir:
        return {"data_source": "local", "data_dir": data_dir}
    return {"data_source": default_source}


PRESETS = {"ear_xnli": ear_xnli, "robust_xnli": robust_xnli, "robust_pawsx": robust_pawsx, "ear_pawsx": ear_pawsx}
