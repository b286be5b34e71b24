"""The original model vs the adjusted one vs adjusted + continual alignment, fine-tuned on
English WikiANN NER, over seeds (Efimov et al. 2023).

    python sweeps/adjust_ner.py --preset smoke     # synthetic NER + synthetic parallel data
    python sweeps/adjust_ner.py --preset smoke --data-dir /path/to/xtreme-data
    python sweeps/adjust_ner.py --preset paper     # mBERT, WikiANN and WikiMatrix from the hub

The `paper` preset is built from the paper's card, `sweeps/papers/efimov2023.yaml`: es, ru,
vi, hi; the authors' run_ner_no_trainer.py budget (lr 2e-5, 3 epochs); the XNLI sweep's
adjustment and continual settings, with the card's declared departures.
`--preset released` runs the authors' released code (pefimov/cross-lingual-adjustment@04edbc1):
the card's `released` values (random batches, the continual regulariser at weight 1).
"""

import sys

from sweeps.cli import main
from sweeps.families import efimov2023
from sweeps.spec import experiment as shared

PAPER = efimov2023.PAPER
# The three encoders (sweeps/families/efimov2023.py): original, adjusted, adjusted + continual.
POINTS = {
    "smoke": efimov2023.SMOKE_POINTS,
    **{p: efimov2023.paper_points("adjust_ner", p) for p in efimov2023.PRESETS},
}
SEEDS = {"smoke": [0, 1], **shared.paper_seeds(PAPER, "adjust_ner", efimov2023.PRESETS)}
# The paper's test: a permutation test on entity F1 (predictions concatenated over seeds).
SIGNIFICANCE_TEST = "permutation"
# None: the report selects on English dev F1.
SELECTION_METRIC = None


def trial_settings(preset: str, data_dir: str | None) -> dict:
    if preset == "smoke":
        return {
            **efimov2023.smoke_task_settings("ner", data_dir, ["vi", "de", "es"]),
            "max_train_examples": 2000,
            "max_eval_examples": 500,
            "epochs": 3.0,
        }
    return shared.paper_settings(PAPER, "adjust_ner", preset, data_dir)


if __name__ == "__main__":
    sys.exit(main(sys.modules[__name__]))
