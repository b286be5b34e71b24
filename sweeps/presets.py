"""Presets: what a sweep script runs when the user gives no overrides.

`smoke` runs offline in minutes on two CPU cores (tiny BERT, synthetic data unless a data
directory is given); `paper` is the papers' setting (mBERT, hub data, 5 seeds).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sweeps import spaces

XNLI_TARGETS = ("ar", "bg", "de", "el", "es", "fr", "hi", "ru", "sw", "th", "tr", "ur", "vi", "zh")


@dataclass
class SweepSpec:
    """One sweep: common trial settings, the method configurations, and the seeds."""

    experiment: str
    base: dict
    points: list[dict]
    seeds: list[int]
    # None: 1 CPU, or with --trials-per-gpu a share of a GPU node's CPUs (sweeps/resources.py).
    cpus_per_trial: float | None = None
    preset: str = "smoke"
    strategy: str = "grid"
    # The paper's test for this task, read by the report: ttest (paired t-test on per-example
    # scores averaged over seeds), permutation (NER), bootstrap (robust training).
    significance_test: str = "ttest"
    extra_tags: dict = field(default_factory=dict)
    # Strategy `search` (sweeps/search.py): phase-1 samples, configurations re-run in phase 2,
    # and the method hyperparameters fixed with --set (constants in the search space).
    search_trials: int = 4
    top_k: int = 1
    fixed_axes: dict = field(default_factory=dict)


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
    return SweepSpec("ear_xnli", base, [spaces.BASELINE, *spaces.ear_paper_points()], seeds=[1, 2, 3, 4, 5], preset=preset, search_trials=40, top_k=3)


def _data_settings(data_dir: str | None, default_source: str) -> dict:
    if data_dir:
        return {"data_source": "local", "data_dir": data_dir}
    return {"data_source": default_source}


PRESETS = {"ear_xnli": ear_xnli}
