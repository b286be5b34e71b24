"""The original model vs the adjusted one vs adjusted + continual alignment, fine-tuned on
English extractive QA and evaluated on XQuAD and MLQA (each with its cross-lingual
directions) and TyDiQA-GoldP, over seeds (Efimov et al. 2023, Table 4).

    python sweeps/adjust_qa.py --preset smoke      # synthetic QA + synthetic parallel data
    python sweeps/adjust_qa.py --preset smoke --data-dir /path/to/xtreme-data
    python sweeps/adjust_qa.py --preset paper      # mBERT, SQuAD, XQuAD, MLQA, TyDiQA (hub)

The `paper` preset is built from the paper's card, `sweeps/papers/efimov2023.yaml`: es, ru,
vi, hi; HuggingFace's run_qa.py budget (lr 3e-5, 2 epochs, length 384, stride 128); MLQA's
test split; the XNLI sweep's adjustment and continual settings, with the card's declared
departures.
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
    **{p: efimov2023.paper_points("adjust_qa", p) for p in efimov2023.PRESETS},
}
SEEDS = {"smoke": [0, 1], **shared.paper_seeds(PAPER, "adjust_qa", efimov2023.PRESETS)}
# The paper's test on F1: the paired t-test on per-question scores averaged over seeds.
SIGNIFICANCE_TEST = "ttest"
# None: the report selects on English dev F1.
SELECTION_METRIC = None


def trial_settings(preset: str, data_dir: str | None) -> dict:
    if preset == "smoke":
        return {
            **efimov2023.smoke_task_settings("qa", data_dir, ["vi", "es"]),
            **efimov2023.SMOKE_QA_TRAINING,
            "max_eval_examples": 30,
        }
    return shared.paper_settings(PAPER, "adjust_qa", preset, data_dir)


if __name__ == "__main__":
    sys.exit(main(sys.modules[__name__]))
