"""The original model vs the adjusted one vs adjusted + continual alignment, fine-tuned on
English WikiANN NER, over seeds (Efimov et al. 2023).

    python sweeps/adjust_ner.py --preset smoke     # synthetic NER + synthetic parallel data
    python sweeps/adjust_ner.py --preset smoke --data-dir /path/to/xtreme-data
    python sweeps/adjust_ner.py --preset paper     # mBERT, WikiANN and OPUS-100 from the hub
"""

import sys

from sweeps import adjust_xnli
from sweeps.cli import main

WIKIANN_TARGETS = ("ar", "de", "es", "fr", "hi", "ru", "vi", "zh")
# The XNLI sweep's three encoders: the original, the adjusted one, adjusted + continual.
POINTS = adjust_xnli.POINTS
SEEDS = {"smoke": [0, 1], "paper": [1, 2, 3, 4, 5]}
# The paper's test: a permutation test on entity F1 (predictions concatenated over seeds).
SIGNIFICANCE_TEST = "permutation"
# None: the report selects on English dev F1.
SELECTION_METRIC = None


def trial_settings(preset: str, data_dir: str | None) -> dict:
    if preset == "smoke":
        return {
            **adjust_xnli.smoke_task_settings("ner", data_dir, ["vi", "de", "es"]),
            "max_train_examples": 2000,
            "max_eval_examples": 500,
            "epochs": 3.0,
        }
    # The XNLI budget (lr 2e-5, batch 32, max length 128); 3 epochs is our choice.
    return {**adjust_xnli.paper_settings("ner", WIKIANN_TARGETS, data_dir), "epochs": 3.0}


if __name__ == "__main__":
    sys.exit(main(sys.modules[__name__]))
