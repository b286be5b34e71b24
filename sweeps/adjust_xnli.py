"""The original model vs the cross-lingually adjusted one vs adjusted + continual alignment,
fine-tuned on English XNLI, over seeds (Efimov et al. 2023).

    python sweeps/adjust_xnli.py --preset smoke     # synthetic XNLI + synthetic parallel data
    python sweeps/adjust_xnli.py --preset paper     # mBERT, XNLI and OPUS-100 from the hub
"""

import sys

from sweeps import experiment as shared
from sweeps.cli import main

# The paper's settings (the adjust_* sweeps share them): the adjustment stage (Eq. 1; Cao et
# al.'s released optimisation: 1 epoch, lr 5e-5) and the continual alignment loss (Eq. 2,
# alpha = 0.01). The smoke presets adjust a tiny model trained from scratch, so they use a
# larger adjustment learning rate.
PAPER_ADJUSTMENT = {"adjust_epochs": 1.0, "adjust_learning_rate": 5e-5, "adjust_reg_weight": 1.0}
SMOKE_ADJUSTMENT = {**PAPER_ADJUSTMENT, "adjust_learning_rate": 1e-3}
CONTINUAL = {"continual_alpha": 0.01, "continual_reg_weight": 0.01}
# OPUS-100 (OPUS-style `translation` rows, configs `en-xx`) stands in for the paper's data.
PAPER_PARALLEL = {"parallel_data": "hub:Helsinki-NLP/opus-100", "parallel_max_sentences": 20000}


def adaptation_points(adjust: dict) -> dict[str, dict]:
    """Plain fine-tuning of the three encoders, by adaptation: the original (the baseline),
    the adjusted one, and the adjusted one with the continual alignment loss. Every point
    names its hyperparameters, so `--set adjust_learning_rate=...` fixes that axis in both
    adjusted points."""
    return {
        "none": {"method": "finetune"},
        "adjusted": {"method": "finetune", "adaptation": "adjusted", **adjust},
        "adjusted_continual": {
            "method": "finetune",
            "adaptation": "adjusted_continual",
            **adjust,
            **CONTINUAL,
        },
    }


POINTS = {
    "smoke": list(adaptation_points(SMOKE_ADJUSTMENT).values()),
    "paper": list(adaptation_points(PAPER_ADJUSTMENT).values()),
}
SEEDS = {"smoke": [0, 1], "paper": [1, 2, 3, 4, 5]}
# Paired t-test on per-example scores averaged over seeds.
SIGNIFICANCE_TEST = "ttest"
# None: the report selects on English dev accuracy.
SELECTION_METRIC = None


def smoke_task_settings(task: str, data_dir: str | None, local_targets: list[str]) -> dict:
    """The smoke settings every adjust sweep shares: the task's synthetic data in the
    pseudo-languages with synthetic parallel data (no download); or, with `--data-dir`, local
    data in the XTREME layout in `local_targets` and the line-aligned parallel files under its
    `parallel/`. Each script adds its sizes."""
    base = {**shared.SMOKE_TRAINING, "task": task, "parallel_max_sentences": 1000}
    if not data_dir:
        return {
            **base,
            "data_source": "synthetic",
            "target_langs": list(shared.SYNTHETIC_TARGETS),
            "parallel_data": "synthetic",
        }
    return {
        **base,
        "data_source": "local",
        "data_dir": data_dir,
        "target_langs": list(local_targets),
        "parallel_data": f"{data_dir}/parallel",
    }


def paper_settings(task: str, targets: tuple[str, ...], data_dir: str | None) -> dict:
    """The paper settings of every adjust sweep: the mBERT budget, OPUS-100, and the task's
    hub data (or `--data-dir`) in these target languages."""
    base = {**shared.PAPER_TRAINING, **PAPER_PARALLEL, "task": task, "target_langs": list(targets)}
    base.update(shared.data_settings(data_dir, default_source="hub"))
    return base


def trial_settings(preset: str, data_dir: str | None) -> dict:
    if preset == "smoke":
        # With --data-dir: real XNLI files in the languages of the shared sample's parallel
        # data (en-vi OpenSubtitles) and its XNLI files.
        base = smoke_task_settings("xnli", data_dir, ["vi", "es", "de"])
        return {**base, "max_eval_examples": 1000} if data_dir else base
    return paper_settings("xnli", shared.XNLI_TARGETS, data_dir)


if __name__ == "__main__":
    sys.exit(main(sys.modules[__name__]))
