"""What the sweep scripts share: `SweepSpec`, `experiment_spec` (a script's module to its
`SweepSpec`), the training budgets, the data sets' languages and the data settings. Each
experiment itself (grids, seeds, test, selection metric, trial settings) is written out as
data in its own script, `sweeps/<name>.py`.
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from pathlib import Path


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
    # Log each trial's trained model (`save_pretrained` folder) as its run's `model/`
    # artifact, so the report can register the selected one (`--set log_models=true`).
    log_models: bool = False
    # The dev metric the report selects on (parent-run param); None: English dev's.
    selection_metric: str | None = None
    extra_tags: dict = field(default_factory=dict)
    # Strategy `search` (sweeps/search.py): phase-1 samples, configurations re-run in phase 2,
    # and the hyperparameters fixed with --set (constants in the search space).
    search_trials: int = 4
    top_k: int = 1
    fixed_axes: dict = field(default_factory=dict)

    def __post_init__(self):
        # A sweep's own copies: `--set` changes them, never a script's module-level grids.
        self.base = dict(self.base)
        self.points = [dict(point) for point in self.points]
        self.seeds = list(self.seeds)


PRESET_NAMES = ("smoke", "paper")
# What every sweep script defines: its grids and seeds by preset, the report's test, and
# trial_settings(preset, data_dir) -> the settings every trial shares.
REQUIRED_NAMES = ("POINTS", "SEEDS", "SIGNIFICANCE_TEST", "trial_settings")


def experiment_spec(module: types.ModuleType, preset: str, data_dir: str | None) -> SweepSpec:
    """The sweep a script's module describes, for a preset (`smoke`, `paper`) and an optional
    `--data-dir`. The experiment is named after the script's file (`sweeps/adjust_ner.py`:
    `adjust_ner`). Required names: `POINTS` and `SEEDS` by preset, `SIGNIFICANCE_TEST`,
    `trial_settings(preset, data_dir)`. Optional, with their defaults: `SELECTION_METRIC`
    (None: English dev), `LOG_MODELS` by preset (False), `SEARCH` by preset, a dict of
    `search_trials` and `top_k` (`SweepSpec`'s: 4 and 1)."""
    missing = [name for name in REQUIRED_NAMES if not hasattr(module, name)]
    if missing:
        raise TypeError(
            f"{module.__name__} is not a sweep script: it lacks {', '.join(missing)} "
            f"(a sweep script defines {', '.join(REQUIRED_NAMES)})"
        )
    return SweepSpec(
        Path(module.__file__).stem,
        module.trial_settings(preset, data_dir),
        module.POINTS[preset],
        module.SEEDS[preset],
        preset=preset,
        significance_test=module.SIGNIFICANCE_TEST,
        selection_metric=getattr(module, "SELECTION_METRIC", None),
        log_models=getattr(module, "LOG_MODELS", {}).get(preset, False),
        **getattr(module, "SEARCH", {}).get(preset, {}),
    )


# The offline budget: a tiny BERT trained from scratch, minutes on two CPU cores.
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

# The data sets' target languages (English is the source everywhere).
XNLI_TARGETS = ("ar", "bg", "de", "el", "es", "fr", "hi", "ru", "sw", "th", "tr", "ur", "vi", "zh")
PAWSX_TARGETS = ("de", "es", "fr", "ja", "ko", "zh")
# The synthetic data's pseudo-languages (xlt_core/data/synthetic.py).
SYNTHETIC_TARGETS = ("es", "de", "ru")
# The shared PAWS-X sample (../shared/data/pawsx) holds dev files only, in these targets.
LOCAL_PAWSX_TARGETS = ("de", "es", "fr")


def data_settings(data_dir: str | None, default_source: str) -> dict:
    """`--data-dir` given: local data in the XTREME layout; else the preset's own source."""
    if data_dir:
        return {"data_source": "local", "data_dir": data_dir}
    return {"data_source": default_source}
