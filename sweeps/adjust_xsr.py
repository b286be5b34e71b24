"""The original vs the adjusted encoder on Tatoeba sentence retrieval, over seeds (Efimov et
al. 2023). No fine-tuning, so no continual alignment (Eq. 2 needs a task loss).

    python sweeps/adjust_xsr.py --preset smoke     # synthetic pairs + synthetic parallel data
    python sweeps/adjust_xsr.py --preset smoke --data-dir /path/to/xtreme-data
    python sweeps/adjust_xsr.py --preset paper     # mBERT, Tatoeba and OPUS-100 from the hub
"""

import sys

from sweeps.adjust_xnli import (
    PAPER_ADJUSTMENT,
    SMOKE_ADJUSTMENT,
    adaptation_points,
    paper_settings,
    smoke_task_settings,
)
from sweeps.cli import main

XSR_TARGETS = ("ar", "de", "es", "fr", "hi", "ru", "vi", "zh")
# The encoders compared, by adaptation (method finetune = no objective on top: retrieval
# reads the encoder as it is).
ADAPTATIONS = ("none", "adjusted")
POINTS = {
    "smoke": [adaptation_points(SMOKE_ADJUSTMENT)[name] for name in ADAPTATIONS],
    "paper": [adaptation_points(PAPER_ADJUSTMENT)[name] for name in ADAPTATIONS],
}
SEEDS = {"smoke": [0, 1], "paper": [1, 2, 3, 4, 5]}
# Paired t-test on per-query reciprocal ranks averaged over seeds.
SIGNIFICANCE_TEST = "ttest"
# XSR has no English queries: the report selects on the dev pairs of every language.
SELECTION_METRIC = "dev/pooled/mrr"


def trial_settings(preset: str, data_dir: str | None) -> dict:
    if preset == "smoke":
        return {
            **smoke_task_settings("xsr", data_dir, ["vi", "de", "es"]),
            "max_eval_examples": 400,
        }
    return paper_settings("xsr", XSR_TARGETS, data_dir)


if __name__ == "__main__":
    sys.exit(main(sys.modules[__name__]))
