"""The original model vs the cross-lingually adjusted one vs adjusted + continual alignment,
fine-tuned on English XNLI, over seeds (Efimov et al. 2023), with the mixed-language set.

    python sweeps/adjust_xnli.py --preset smoke     # synthetic XNLI + synthetic parallel data
    python sweeps/adjust_xnli.py --preset paper     # mBERT, XNLI and WikiMatrix from the hub

The `paper` preset is built from the paper's card, `sweeps/papers/efimov2023.yaml`: es, ru,
vi, hi; HuggingFace's run_xnli.py budget (lr 5e-5, 2 epochs); 30K pairs per seed from a
250K WikiMatrix pool; Eq. 2's alpha = 0.01; 5 seeds; fp32; with its declared departures.
An adjusted trial adjusts one encoder per target language, on that language's pairs only
(`xlt_core/language_stages.py`).
"""

import sys

from sweeps import experiment as shared
from sweeps.cli import main

PAPER = "efimov2023"
# The smoke presets adjust a tiny model trained from scratch, so with a larger adjustment
# learning rate than the paper's (its card: Cao et al.'s 5e-5); the other adjustment and
# continual hyperparameters are the card's.
SMOKE_ADJUSTMENT = {"adjust_epochs": 1.0, "adjust_learning_rate": 1e-3, "adjust_reg_weight": 1.0}
CONTINUAL = {"continual_alpha": 0.01, "continual_reg_weight": 0.01}


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


def paper_points(experiment: str) -> list[dict]:
    """The three encoders with the card's adjustment and continual hyperparameters."""
    points = list(adaptation_points({}).values())
    return shared.paper_points(PAPER, experiment, shared.PAPER_PRESET, points)


POINTS = {
    "smoke": list(adaptation_points(SMOKE_ADJUSTMENT).values()),
    "paper": paper_points("adjust_xnli"),
}
SEEDS = {"smoke": [0, 1], **shared.paper_seeds(PAPER, "adjust_xnli", (shared.PAPER_PRESET,))}
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


def trial_settings(preset: str, data_dir: str | None) -> dict:
    if preset == "smoke":
        # With --data-dir: real XNLI files in the languages of the shared sample's parallel
        # data (en-vi OpenSubtitles) and its XNLI files.
        base = smoke_task_settings("xnli", data_dir, ["vi", "es", "de"])
        return {**base, "max_eval_examples": 1000} if data_dir else base
    return shared.paper_settings(PAPER, "adjust_xnli", preset, data_dir)


if __name__ == "__main__":
    sys.exit(main(sys.modules[__name__]))
